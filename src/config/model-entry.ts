// A model entry of the config file (its `models` list, and the built-in catalog): the schema, the
// connections a model can be reached through and what each serves.
import Type, { type Static } from 'typebox';
import {
  chatCapabilities,
  modelTypes,
  type ChatCapability,
  type ModelProvider,
  type ModelType,
  type SpeechEngineProvider,
} from './config.js';
import {
  Closed,
  EnvironmentVariableName,
  HttpUrl,
  NonEmptyString,
  OptionalInteger,
} from './config-kit.js';
import { ModelCacheSchema } from './cache-config.js';

export const modelProviders = [
  'openai',
  'anthropic',
  'google',
  'openai-compatible',
  'local',
  'deepgram',
  'espeak-ng',
  'sherpa-onnx',
  'pocketsphinx',
] as const satisfies readonly ModelProvider[];

/**
 * What each connection's chat models take beyond text when the entry names no `capabilities`:
 * what the hosted APIs' current models all do; an OpenAI-compatible server's models call tools
 * (vLLM, llama.cpp, Ollama and LM Studio all relay them) but vision and JSON schemas depend on the
 * model and server, so they are named in the entry; a local model's JSON schema is a grammar, and
 * its tool calls node-llama-cpp's function calling.
 */
export const defaultCapabilities: Readonly<Record<ModelProvider, readonly ChatCapability[]>> = {
  openai: ['tools', 'vision', 'json_schema'],
  anthropic: ['tools', 'vision', 'json_schema'],
  google: ['tools', 'vision', 'json_schema', 'audio_input'],
  'openai-compatible': ['tools'],
  local: ['tools', 'json_schema'],
  deepgram: [],
  'espeak-ng': [],
  'sherpa-onnx': [],
  pocketsphinx: [],
};

/** Which kinds of model each connection can serve. */
export const typesOfProvider: Record<ModelProvider, readonly ModelType[]> = {
  openai: ['chat', 'embedding', 'transcription', 'speech'],
  anthropic: ['chat'],
  google: ['chat', 'embedding'],
  'openai-compatible': ['chat', 'embedding', 'transcription', 'speech'],
  local: ['chat', 'embedding'],
  deepgram: ['transcription', 'speech'],
  'espeak-ng': ['speech'],
  'sherpa-onnx': ['transcription'],
  pocketsphinx: ['transcription'],
};

const speechEngineProviders: readonly SpeechEngineProvider[] = [
  'espeak-ng',
  'sherpa-onnx',
  'pocketsphinx',
];

export function isSpeechEngine(provider: ModelProvider): provider is SpeechEngineProvider {
  return (speechEngineProviders as readonly string[]).includes(provider);
}

/** sherpa-onnx model families this service knows how to load, and the files each needs. */
export const sherpaArchitectures = {
  whisper: ['encoder', 'decoder', 'tokens'],
  transducer: ['encoder', 'decoder', 'joiner', 'tokens'],
  sense_voice: ['model', 'tokens'],
  paraformer: ['model', 'tokens'],
  nemo_ctc: ['model', 'tokens'],
  zipformer_ctc: ['model', 'tokens'],
  tdnn: ['model', 'tokens'],
} as const;

export type SherpaArchitecture = keyof typeof sherpaArchitectures;

const ModelName = () =>
  Type.String({
    pattern: '^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$',
    message: 'letters, digits and . _ : / - only, at most 128 characters',
  });

const LanguageTag = () =>
  Type.String({
    pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$',
    message: 'a language tag such as en or en-US',
  });

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });

/** US dollars (per million tokens, per minute, per million characters): at most 6 decimals count. */
const Price = () => Type.Number({ minimum: 0, maximum: 100_000 });

/** Where a model file comes from and how it is checked: local models and speech engines' files. */
const modelFileFields = {
  source: Type.Optional(
    Type.String({
      pattern: '^(hf:[^/\\s]+/[^/\\s]+/\\S+|https?://\\S+)$',
      message: "'hf:owner/repo/file' or a URL",
    }),
  ),
  file: Type.Optional(NonEmptyString()),
  sha256: Type.Optional(
    Type.String({ pattern: '^[0-9a-f]{64}$', message: '64 lower-case hex digits' }),
  ),
};

/** US dollars per unit, as a model entry's `pricing` (and a deployment's) gives them. */
const PricingSchema = () =>
  Closed({
    input_per_mtok: Type.Optional(Price()),
    output_per_mtok: Type.Optional(Price()),
    cached_input_per_mtok: Type.Optional(Price()),
    cache_write_per_mtok: Type.Optional(Price()),
    reasoning_per_mtok: Type.Optional(Price()),
    per_audio_minute: Type.Optional(Price()),
    per_mchar: Type.Optional(Price()),
    as_of: Type.Optional(
      Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', message: 'expected YYYY-MM-DD' }),
    ),
  });

/** Providers a chat model's deployment may be reached through (remote APIs). */
export const deploymentProviders = ['openai', 'anthropic', 'google', 'openai-compatible'] as const;

/**
 * One upstream of a model served by several (`deployments`): what it differs in from the entry
 * (provider, model id, base URL, key), how often it is chosen, its limits and its prices.
 */
export const DeploymentEntrySchema = Closed({
  /** Names it in the usage ledger, logs and the model's health (default: `deployment-<n>`). */
  name: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$',
      message: 'letters, digits and . _ : - only, at most 64 characters',
    }),
  ),
  provider: Type.Optional(Type.Enum(deploymentProviders)),
  model: Type.Optional(Text(256)),
  base_url: Type.Optional(HttpUrl()),
  api_key_env: Type.Optional(EnvironmentVariableName('the name of an environment variable')),
  /** Relative share of the requests (default 1). */
  weight: OptionalInteger(1, 1000),
  /** Requests per minute this instance sends it at most. */
  rpm: OptionalInteger(1, 10_000_000),
  /** Tokens (input and output) per minute this instance sends it at most. */
  tpm: OptionalInteger(1, 1_000_000_000),
  pricing: Type.Optional(PricingSchema()),
});

export type DeploymentEntry = Static<typeof DeploymentEntrySchema>;

const Voice = Closed({
  id: Text(128),
  name: Type.Optional(Text(200)),
  languages: Type.Optional(Type.Array(LanguageTag(), { maxItems: 100 })),
});

export const ModelEntrySchema = Closed({
  name: ModelName(),
  display_name: Type.Optional(Text(200)),
  /** How the service reaches the model. */
  provider: Type.Enum(modelProviders),
  /** Who made the model, shown as the catalog's `provider` (default: see makerOf). */
  maker: Type.Optional(Text(100)),
  /** The provider's own model id (for `local`: a label; the file is `file` or `source`). */
  model: Type.Optional(Text(256)),
  type: Type.Optional(Type.Enum(modelTypes)),
  base_url: Type.Optional(HttpUrl()),
  api_key_env: Type.Optional(EnvironmentVariableName('the name of an environment variable')),
  max_tokens: OptionalInteger(1, 1_000_000),
  context_length: OptionalInteger(16, 10_000_000),
  fallbacks: Type.Optional(Type.Array(ModelName(), { maxItems: 10 })),
  timeout_ms: OptionalInteger(100, 3_600_000),
  /** Longest silence of a streamed answer: before its first chunk and between two chunks. */
  idle_timeout_ms: OptionalInteger(100, 3_600_000),
  max_retries: OptionalInteger(0, 10),
  /** Upstream calls one request may make across deployments, fallbacks and retries. */
  max_attempts: OptionalInteger(1, 20),
  /** Chat models: the exact response cache's settings for this model (over the global `cache`). */
  cache: Type.Optional(ModelCacheSchema),
  /** Chat models: the same model at several upstreams, chosen per request (docs/deployments.md). */
  deployments: Type.Optional(Type.Array(DeploymentEntrySchema, { minItems: 1, maxItems: 20 })),
  // What the router's strategies weigh (see docs/routing-and-layout.md, "Strategies"); all optional.
  /** US dollars per million prompt tokens (0 for local models); `pricing.input_per_mtok` wins. */
  input_cost_per_million: Type.Optional(Price()),
  /** US dollars per million completion tokens; `pricing.output_per_mtok` wins. */
  output_cost_per_million: Type.Optional(Price()),
  /** What a call costs, in US dollars (docs/usage-and-budgets.md). */
  pricing: Type.Optional(PricingSchema()),
  /** Relative answer quality, 0–100 (a leaderboard score or your own judgement). */
  quality: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
  /** Typical time to the first token, in milliseconds. */
  typical_latency_ms: OptionalInteger(0, 600_000),
  /** openai-compatible: the server accepts `response_format: json_schema` (else JSON mode). */
  structured_outputs: Type.Optional(Type.Boolean()),
  /** Chat models: what the model takes beyond text, replacing the provider's defaults. */
  capabilities: Type.Optional(
    Type.Array(Type.Enum(chatCapabilities), {
      maxItems: chatCapabilities.length,
      uniqueItems: true,
    }),
  ),
  // Local models only.
  ...modelFileFields,
  threads: OptionalInteger(1, 256),
  parallel: OptionalInteger(1, 64),
  queue_size: OptionalInteger(0, 10_000),
  // Transcription and speech models.
  /** Voices a speech model offers (engines that list their own need none). */
  voices: Type.Optional(Type.Array(Voice, { maxItems: 1000 })),
  default_voice: Type.Optional(Text(128)),
  /** Languages a recogniser understands. */
  languages: Type.Optional(Type.Array(LanguageTag(), { maxItems: 200 })),
  /** Other names a transcription or speech model answers to (`whisper-1`, `tts-1`…). */
  aliases: Type.Optional(Type.Array(ModelName(), { maxItems: 20, uniqueItems: true })),
  /** sherpa-onnx: the model family of `files`. */
  architecture: Type.Optional(Type.Enum(Object.keys(sherpaArchitectures) as SherpaArchitecture[])),
  /** sherpa-onnx: the model's files by role (encoder, decoder, joiner, model, tokens). */
  files: Type.Optional(
    Type.Record(Type.String({ pattern: '^[a-z_]{1,32}$' }), Closed(modelFileFields), {
      additionalProperties: false,
    }),
  ),
  /** pocketsphinx: the program (default pocketsphinx_continuous) and acoustic model directory. */
  command: Type.Optional(Text(1024)),
  model_directory: Type.Optional(Text(1024)),
});

export type ModelEntry = Static<typeof ModelEntrySchema>;

/** The provider's conventional environment variable for its key. */
export const defaultApiKeyEnv: Record<ModelProvider, string | null> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  google: 'GOOGLE_GENERATIVE_AI_API_KEY',
  'openai-compatible': null,
  local: null,
  deepgram: 'DEEPGRAM_API_KEY',
  'espeak-ng': null,
  'sherpa-onnx': null,
  pocketsphinx: null,
};
