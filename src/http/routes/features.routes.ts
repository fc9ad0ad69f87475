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
  reason: Type.Union([Type.String(), Type.Null()], {
    description:
      'Why an implemented, configured feature is not enabled now, and how to enable it (voice_chat: which speech models are missing); null otherwise.',
  }),
});

/** The 200 body; the auth benchmark's bare route serialises through it too (bench/bare-server.ts). */
export const FeaturesResponseSchema = Type.Object({ features: Type.Array(FeatureSchema) });

export function featureRoutes(app: App, services: Services): void {
  // voice_chat also needs a recogniser and a synthesiser that are available now.
  const features = () =>
    featureNames.map((name) => {
      const readiness =
        name === 'voice_chat' && services.config.features[name]
          ? services.speech.voiceChatReadiness()
          : { ready: true, reason: null };
      return {
        id: name,
        name,
        enabled: services.config.features[name] && readiness.ready,
        description: featureDescriptions[name],
        reason: readiness.reason,
      };
    });
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
}
