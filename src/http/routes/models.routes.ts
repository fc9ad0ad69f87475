// GET /models, /v1/models and /models/{model}: the model catalog in the spec's shape and OpenAI's
// at once, with each model's availability and, when unavailable, the reason and the fix.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { modelTypes } from '../../config/config.js';
import { modelProviders } from '../../config/model-entry.js';
import { NotFoundError } from '../../errors/app-error.js';
import type { ModelStatus } from '../../models/model-registry.js';
import type { Services } from '../../services.js';
import type { App } from '../types.js';

export const ModelSchema = Type.Object(
  {
    id: Type.String({ description: 'Catalog identifier; equal to `name`.' }),
    object: Type.Literal('model'),
    created: Type.Integer({ description: 'Unix time the catalog was loaded (OpenAI field).' }),
    owned_by: Type.String({
      description: 'Who made the model (OpenAI field; equal to `provider`).',
    }),
    name: Type.String({ description: 'The value to pass as `model`.' }),
    display_name: Type.String(),
    provider: Type.String({
      description:
        'Who made the model (OpenAI, Anthropic, Google, Alibaba…), as the spec defines it: the config entry’s `maker`, else the vendor of a first-party connection or the owner in a Hub-style model id, else `unknown`.',
    }),
    connection: Type.Union(
      modelProviders.map((provider) => Type.Literal(provider)),
      {
        description:
          'How the service reaches the model (the config entry’s `provider`): openai, anthropic, google, openai-compatible or local.',
      },
    ),
    type: Type.Union(
      modelTypes.map((type) => Type.Literal(type)),
      { description: 'The kind of model: what it can be used for.' },
    ),
    max_tokens: Type.Integer({
      description:
        'Largest completion a request may ask for, in tokens. 0 for transcription and speech models, which take no token limit (an integer, as the spec asks of every entry).',
    }),
    context_length: Type.Integer({
      description:
        'Context window in tokens. 0 for transcription and speech models, which have none.',
    }),
    fallbacks: Type.Array(Type.String()),
    input_cost_per_million: Type.Union([Type.Number(), Type.Null()], {
      description:
        'US dollars per million prompt tokens (0 for local models; null: not configured). The routing strategies weigh it.',
    }),
    output_cost_per_million: Type.Union([Type.Number(), Type.Null()], {
      description: 'US dollars per million completion tokens (null: not configured).',
    }),
    quality: Type.Union([Type.Number(), Type.Null()], {
      description: 'Relative answer quality, 0–100, as configured (null: not configured).',
    }),
    typical_latency_ms: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Typical time to the first token in milliseconds (null: not configured).',
    }),
    default: Type.Boolean({ description: 'Used when a request names no model.' }),
    available: Type.Boolean({ description: 'Whether the model can answer now.' }),
    unavailable_reason: Type.Union([Type.String(), Type.Null()], {
      description: 'Why not, and how to make it available.',
    }),
  },
  { $id: 'Model', title: 'Model' },
);

const ModelListSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Type.Ref('Model')),
  models: Type.Array(Type.Ref('Model')),
});

export function modelRoutes(app: App, services: Services): void {
  const created = Math.floor(Date.now() / 1000);
  app.addSchema(ModelSchema);
  const toJson = (status: ModelStatus) => {
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
      input_cost_per_million: definition.routing.inputCostPerMillion,
      output_cost_per_million: definition.routing.outputCostPerMillion,
      quality: definition.routing.quality,
      typical_latency_ms: definition.routing.typicalLatencyMs,
      default: definition.name === services.models.defaultModel,
      available: status.available,
      unavailable_reason: status.reason,
    };
  };

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
      () => {
        const entries = services.models.list().map(toJson);
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
          params: Type.Object({ model: Type.String({ maxLength: 256 }) }),
          response: { 200: Type.Ref('Model') },
        },
      },
      (request) => {
        const status = services.models.status(request.params.model);
        if (status === undefined) throw new NotFoundError('Model', request.params.model);
        return toJson(status);
      },
    );
  }
}
