// GET /models, /v1/models and /models/{model}: the model catalog in the spec's shape and OpenAI's
// at once, with each model's availability and, when unavailable, the reason and the fix; one
// Fastify plugin over the model registry.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { NotFoundError } from '../../errors/app-error.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import type { App } from '../../http/types.js';
import type { ModelDefinition, ModelPricing } from '../../config/config.js';
import type { ModelRegistry, ModelStatus } from '../../models/model-registry.js';
import { ModelListSchema, ModelNameParams, ModelSchema } from './models.schemas.js';

export type ModelsPlugin = FeaturePlugin;

/** What the catalog routes read of the registry. */
type ModelCatalog = Pick<ModelRegistry, 'defaultModel' | 'list' | 'status' | 'deploymentHealth'>;

/** The model catalog's routes, registered by app.ts like any Fastify plugin. */
export function modelsPlugin(models: ModelCatalog): ModelsPlugin {
  return featurePlugin('models', (app) => {
    modelRoutes(app, models);
  });
}

/** A catalog entry as both the spec and OpenAI read it. */
const dollars = (micros: number | null) => (micros === null ? null : micros / 1_000_000);

/** The catalog's prices in dollars; null when the model has none. */
function pricingJson(pricing: ModelPricing | null) {
  if (pricing === null) return null;
  return {
    input_per_mtok: dollars(pricing.inputPerMtok),
    cached_input_per_mtok: dollars(pricing.cachedInputPerMtok),
    cache_write_per_mtok: dollars(pricing.cacheWritePerMtok),
    output_per_mtok: dollars(pricing.outputPerMtok),
    reasoning_per_mtok: dollars(pricing.reasoningPerMtok),
    per_audio_minute: dollars(pricing.perAudioMinute),
    per_mchar: dollars(pricing.perMchar),
    as_of: pricing.asOf,
  };
}

type DeploymentHealthList = Awaited<ReturnType<ModelRegistry['deploymentHealth']>>;

/** A model's deployments and each one's health as this instance knows it ([] for a model of one upstream). */
function deploymentsJson(definition: ModelDefinition, health: DeploymentHealthList) {
  if (!('deployments' in definition)) return [];
  const now = Date.now();
  return definition.deployments.map((deployment) => {
    const state = health.find((entry) => entry.name === deployment.name)?.state;
    const failures = state?.failures ?? 0;
    const cooling = state !== undefined && failures > 0 && state.until > now;
    return {
      name: deployment.name,
      connection: deployment.definition.provider,
      model: deployment.definition.model,
      weight: deployment.weight,
      rpm: deployment.rpm,
      tpm: deployment.tpm,
      health:
        failures === 0
          ? ('healthy' as const)
          : cooling
            ? ('cooling' as const)
            : ('probe_due' as const),
      failures,
      cooling_until: cooling ? new Date(state.until).toISOString() : null,
    };
  });
}

function entryJson(
  status: ModelStatus,
  created: number,
  defaultModel: string | null,
  health: DeploymentHealthList,
) {
  const { definition } = status;
  // Transcription and speech models work on audio and text, not a token window: the defaults a
  // definition carries (1024 / 8192) would be invented figures. 0 says "none" as an integer.
  const countsTokens = definition.type === 'chat' || definition.type === 'embedding';
  return {
    id: definition.name,
    object: 'model' as const,
    created,
    owned_by: definition.maker,
    name: definition.name,
    display_name: definition.displayName,
    provider: definition.maker,
    connection: definition.provider,
    type: definition.type,
    max_tokens: countsTokens ? definition.maxTokens : 0,
    context_length: countsTokens ? definition.contextLength : 0,
    fallbacks: [...definition.fallbacks],
    capabilities: [...definition.capabilities],
    input_cost_per_million: definition.routing.inputCostPerMillion,
    output_cost_per_million: definition.routing.outputCostPerMillion,
    pricing: pricingJson(definition.pricing),
    quality: definition.routing.quality,
    typical_latency_ms: definition.routing.typicalLatencyMs,
    default: definition.name === defaultModel,
    available: status.available,
    unavailable_reason: status.reason,
    deployments: deploymentsJson(definition, health),
  };
}

function modelRoutes(app: App, models: ModelCatalog): void {
  const created = Math.floor(Date.now() / 1000);
  app.addSchema(ModelSchema);
  const toJson = async (status: ModelStatus) =>
    entryJson(
      status,
      created,
      models.defaultModel,
      await models.deploymentHealth(status.definition.name),
    );

  for (const prefix of ['', '/v1']) {
    app.get(
      `${prefix}/models`,
      {
        config: { access: access.scopes('models:read') },
        schema: {
          operationId: prefix === '' ? 'listModels' : 'listModelsV1',
          tags: ['Models'],
          summary: 'List models',
          description:
            'Every configured model, usable or not: an unavailable one says why in `unavailable_reason`. `data` (OpenAI) and `models` (spec) hold the same entries.',
          response: { 200: ModelListSchema },
        },
      },
      async () => {
        const entries = await Promise.all(models.list().map(toJson));
        return { object: 'list' as const, data: entries, models: entries };
      },
    );

    app.get(
      `${prefix}/models/:model`,
      {
        config: { access: access.scopes('models:read') },
        schema: {
          operationId: prefix === '' ? 'getModel' : 'getModelV1',
          tags: ['Models'],
          summary: 'Get a model',
          description: 'One catalog entry. A name containing `/` is sent URL-encoded (`%2F`).',
          params: ModelNameParams,
          response: { 200: Type.Ref('Model') },
        },
      },
      async (request) => {
        const status = models.status(request.params.model);
        if (status === undefined) throw new NotFoundError('Model', request.params.model);
        return toJson(status);
      },
    );
  }
}
