// GET /v1/features: the spec's feature catalog, each flag from configuration.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { featureDescriptions, featureNames } from '../../features/catalog.js';
import type { Services } from '../../services.js';
import type { App } from '../types.js';

const FeatureSchema = Type.Object({
  id: Type.String({ description: 'Stable identifier; equal to the name.' }),
  name: Type.String(),
  enabled: Type.Boolean(),
  description: Type.String(),
});

export function featureRoutes(app: App, services: Services): void {
  const features = featureNames.map((name) => ({
    id: name,
    name,
    enabled: services.config.features[name],
    description: featureDescriptions[name],
  }));
  app.get(
    '/v1/features',
    {
      config: { access: access.scopes('models:read') },
      schema: {
        operationId: 'listFeatures',
        tags: ['Catalog'],
        summary: 'List features',
        description:
          'The platform capabilities and whether each is enabled. A feature is enabled when this build implements it and the configuration does not switch it off.',
        response: { 200: Type.Object({ features: Type.Array(FeatureSchema) }) },
      },
    },
    () => ({ features }),
  );
}
