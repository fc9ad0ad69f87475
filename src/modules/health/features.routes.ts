// GET /v1/features: the spec's feature catalog, each flag from configuration.
import type { AppConfig } from '../../config/config.js';
import { access } from '../../auth/scopes.js';
import { featureDescriptions, featureNames } from './feature-catalog.js';
import type { HealthPlugin } from './health.routes.js';
import { FeaturesResponseSchema } from './health.schemas.js';
import { featurePlugin } from '../../http/feature-plugin.js';

/** Whether voice chat can work now, and if not, which speech models are missing. */
export type VoiceChatReadiness = () => { ready: boolean; reason: string | null };

/** The feature catalog's route, registered by app.ts like any Fastify plugin. */
export function featuresPlugin(
  config: Pick<AppConfig, 'features'>,
  voiceChatReadiness: VoiceChatReadiness,
): HealthPlugin {
  // voice_chat also needs a recogniser and a synthesiser that are available now.
  const features = () =>
    featureNames.map((name) => {
      const readiness =
        name === 'voice_chat' && config.features[name]
          ? voiceChatReadiness()
          : { ready: true, reason: null };
      return {
        id: name,
        name,
        enabled: config.features[name] && readiness.ready,
        description: featureDescriptions[name],
        reason: readiness.reason,
      };
    });
  return featurePlugin('features', (app) => {
    app.get(
      '/v1/features',
      {
        config: { access: access.scopes('models:read') },
        schema: {
          operationId: 'listFeatures',
          tags: ['Catalog'],
          summary: 'List features',
          description:
            'The platform capabilities and whether each is enabled. A feature is enabled when this build implements it and the configuration does not switch it off; `voice_chat` also needs an available speech recogniser and synthesiser (`reason` says which is missing).',
          response: { 200: FeaturesResponseSchema },
        },
      },
      () => ({ features: features() }),
    );
  });
}
