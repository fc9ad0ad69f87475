// The HTTP shapes of health and the feature catalog: the answers of GET /v1/health and
// GET /v1/features.
import Type from 'typebox';

export const HealthSchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  service: Type.String(),
  version: Type.String(),
  checks: Type.Object({
    database: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
    redis: Type.Union([
      Type.Literal('ok'),
      Type.Literal('unavailable'),
      Type.Literal('not_configured'),
    ]),
  }),
});

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
