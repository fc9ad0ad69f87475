// The HTTP shapes of the model catalog: an entry (the shared `Model` schema, referenced by $id) and
// the list, in the spec's shape and OpenAI's at once.
import Type from 'typebox';
import { chatCapabilities, modelTypes } from '../../config/config.js';
import { modelProviders } from '../../config/model-entry.js';

const Rate = (description: string) =>
  Type.Union([Type.Number(), Type.Null()], { description: `${description} (null: not set).` });

/** A model's prices as the catalog shows them: US dollars, each rate to the sixth decimal. */
const PricingSchema = Type.Object({
  input_per_mtok: Rate('Per million input tokens'),
  cached_input_per_mtok: Rate('Per million cached input tokens (default: the input rate)'),
  cache_write_per_mtok: Rate('Per million tokens written to the cache (default: the input rate)'),
  output_per_mtok: Rate('Per million output tokens'),
  reasoning_per_mtok: Rate('Per million reasoning tokens (default: the output rate)'),
  per_audio_minute: Rate('Per minute of transcribed audio'),
  per_mchar: Rate('Per million characters spoken'),
  as_of: Type.Union([Type.String(), Type.Null()], { description: 'When the prices were read.' }),
});

const DeploymentSchema = Type.Object({
  name: Type.String({ description: 'Its name in the usage ledger (`deployment`).' }),
  connection: Type.String({ description: 'How it is reached (`openai`, `openai-compatible`…).' }),
  model: Type.String({ description: "The upstream's own model id." }),
  weight: Type.Integer({ description: 'Relative share of the requests.' }),
  rpm: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Requests per minute each instance sends it at most (null: no limit).',
  }),
  tpm: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Tokens per minute each instance sends it at most (null: no limit).',
  }),
  health: Type.Union(
    [Type.Literal('healthy'), Type.Literal('cooling'), Type.Literal('probe_due')],
    {
      description:
        '`cooling`: it failed and is left alone until `cooling_until`; `probe_due`: its cooldown is over and the next request probes it.',
    },
  ),
  failures: Type.Integer({ description: 'Failures in a row (0 when healthy).' }),
  cooling_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

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
    capabilities: Type.Array(
      Type.Union(chatCapabilities.map((capability) => Type.Literal(capability))),
      {
        description:
          'Chat models: what the model takes beyond text — tools (function calling), vision (image parts), json_schema (`response_format` json_schema), audio_input (`input_audio` parts), reasoning. Defaults per provider; the config entry’s `capabilities` replaces them. A request needing one the model lacks answers 400. Empty for other kinds.',
      },
    ),
    input_cost_per_million: Type.Union([Type.Number(), Type.Null()], {
      description:
        'US dollars per million prompt tokens (0 for local models; null: not configured). The routing strategies weigh it.',
    }),
    output_cost_per_million: Type.Union([Type.Number(), Type.Null()], {
      description: 'US dollars per million completion tokens (null: not configured).',
    }),
    pricing: Type.Union([PricingSchema, Type.Null()], {
      description:
        'What a call costs, in US dollars (docs/usage-and-budgets.md); null: no price is known, so its calls are recorded with an unknown cost.',
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
    deployments: Type.Array(DeploymentSchema, {
      description:
        'The upstreams a chat model of several deployments is served by, each with its health as this instance knows it (shared by every instance through Redis). Empty for a model of one upstream.',
    }),
  },
  { $id: 'Model', title: 'Model' },
);

export const ModelListSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Type.Ref('Model')),
  models: Type.Array(Type.Ref('Model')),
});

export const ModelNameParams = Type.Object({ model: Type.String({ maxLength: 256 }) });
