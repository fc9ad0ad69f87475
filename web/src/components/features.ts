// Whether the service reports a feature enabled (routing and voice come from other parts of the build).
import { api } from '../api/client';

export async function featureEnabled(name: string): Promise<boolean> {
  const result = await api.GET('/v1/features');
  return result.data?.features.some((feature) => feature.name === name && feature.enabled) ?? false;
}
