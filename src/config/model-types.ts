// The model catalog's types: providers, kinds, and the definitions the catalog's entries become
// (config/model-definitions.ts builds them); re-exported by config.ts with the rest of the config.

/**
 * How the service reaches a model (the config file's `provider`, the catalog's `connection`):
 * a vendor's API (`openai`, `anthropic`, `google`, `deepgram`), any OpenAI-compatible server, a
 * GGUF file run in-process (`local`), or a speech engine on this machine (`espeak-ng` in-process
 * as WebAssembly, `sherpa-onnx` in-process, `pocketsphinx` the system's program).
 */
export type ModelProvider =
  | 'openai'
  | 'anthropic'
  | 'google'
  | 'openai-compatible'
  | 'local'
  | 'deepgram'
  | SpeechEngineProvider;

/** The speech engines that run on this machine. */
export type SpeechEngineProvider = 'espeak-ng' | 'sherpa-onnx' | 'pocketsphinx';

/** The kinds of model the catalog holds; `models/model-kinds.ts` says how each is built. */
export const modelTypes = ['chat', 'embedding', 'transcription', 'speech'] as const;
export type ModelType = (typeof modelTypes)[number];

/** A voice a speech model offers, as configured (engines such as espeak-ng list their own). */
export interface VoiceDefinition {
  readonly id: string;
  readonly name: string;
  /** BCP 47 tags (`en-US`); empty: the voice speaks whatever it is given. */
  readonly languages: readonly string[];
}

/** What transcription and speech models add to a definition; null for chat and embeddings. */
export interface SpeechSettings {
  /** Configured voices (speech models); engines that list their own add theirs. */
  readonly voices: readonly VoiceDefinition[];
  readonly defaultVoice: string | null;
  /** Languages a recogniser understands (BCP 47); empty: any, or whatever the engine detects. */
  readonly languages: readonly string[];
  /** Other names a request may give the model by (the entry's `aliases`). */
  readonly aliases: readonly string[];
}

/** What a chat model can take beyond text (see docs/message-model.md, "Capabilities"). */
export const chatCapabilities = [
  'tools',
  'vision',
  'json_schema',
  'audio_input',
  'reasoning',
] as const;
export type ChatCapability = (typeof chatCapabilities)[number];

interface ModelDefinitionBase {
  /** The value clients pass as `model`. */
  readonly name: string;
  readonly displayName: string;
  /** Who made the model (OpenAI, Anthropic, Alibaba…): the spec's `provider` field. */
  readonly maker: string;
  readonly type: ModelType;
  /** Largest completion a request may ask for. */
  readonly maxTokens: number;
  readonly contextLength: number;
  /** Tried in order when this model fails (not followed transitively). */
  readonly fallbacks: readonly string[];
  /** Per request to this model, retries included: the whole answer, streamed or not. */
  readonly timeoutMs: number;
  /** A streamed answer's longest silence: before its first chunk and between two chunks. */
  readonly idleTimeoutMs: number;
  /** Retries on 408/409/429/5xx, honouring retry-after. */
  readonly maxRetries: number;
  /** Upstream calls one request may make in all: deployments, fallbacks and retries. */
  readonly maxAttempts: number;
  /** What the router's strategies weigh; null: not configured (the router assumes the median). */
  readonly routing: ModelRoutingFacts;
  /** Transcription and speech models only. */
  readonly speech: SpeechSettings | null;
  /** Chat models: what they take beyond text (provider defaults, or the entry's list). */
  readonly capabilities: readonly ChatCapability[];
  /** What a call costs; null: not known (its calls are recorded with an unknown cost). */
  readonly pricing: ModelPricing | null;
  /** The entry's own response-cache settings (over the global `cache`); null: the global ones. */
  readonly cache: {
    readonly enabled?: boolean | undefined;
    readonly ttl_s?: number | undefined;
    readonly sampled?: boolean | undefined;
  } | null;
}

/**
 * A model's prices, in micro-dollars (1e-6 USD) per million tokens, per minute of audio, or per
 * million characters: integers, so that costs add up exactly. A rate left out is null: the
 * cost falls back as docs/usage-and-budgets.md says (cached input and cache writes at the input
 * rate, reasoning at the output rate), or is unknown when nothing stands for it.
 */
export interface ModelPricing {
  readonly inputPerMtok: number | null;
  readonly outputPerMtok: number | null;
  readonly cachedInputPerMtok: number | null;
  readonly cacheWritePerMtok: number | null;
  readonly reasoningPerMtok: number | null;
  readonly perAudioMinute: number | null;
  readonly perMchar: number | null;
  /** When the prices were read (the built-in catalog's), as YYYY-MM-DD; null when not said. */
  readonly asOf: string | null;
}

export interface ModelRoutingFacts {
  /** US dollars per million prompt / completion tokens; local models default to 0. */
  readonly inputCostPerMillion: number | null;
  readonly outputCostPerMillion: number | null;
  /** Relative answer quality, 0–100. */
  readonly quality: number | null;
  /** Typical time to the first token, in milliseconds. */
  readonly typicalLatencyMs: number | null;
}

export interface RemoteModelDefinition extends ModelDefinitionBase {
  readonly provider: Exclude<ModelProvider, 'local' | SpeechEngineProvider>;
  /** The provider's own model id. */
  readonly model: string;
  readonly baseUrl: string | null;
  /** The environment variable holding the key (read when used, never stored in config). */
  readonly apiKeyEnv: string | null;
  /** Whether JSON output can be constrained by a schema (else the provider's JSON mode). */
  readonly structuredOutputs: boolean;
  /** The upstreams that serve it when it has several (none: the definition's own). */
  readonly deployments: readonly DeploymentDefinition[];
}

/** One upstream of a model served by several (a `deployments` entry). */
export interface DeploymentDefinition {
  /** Unique within its model: the usage ledger's `deployment`. */
  readonly name: string;
  readonly weight: number;
  /** Requests / tokens per minute this instance sends it at most; null: no limit. */
  readonly rpm: number | null;
  readonly tpm: number | null;
  /** The model as this upstream serves it: its provider, id, URL, key and prices. */
  readonly definition: RemoteModelDefinition;
}

/** How models with deployments fail over: the cooldown of a failing upstream. */
export interface UpstreamSettings {
  /** The first cooldown of a failing deployment; doubled on each failure in a row. */
  readonly cooldownMs: number;
  readonly maxCooldownMs: number;
}

export interface LocalModelDefinition extends ModelDefinitionBase {
  readonly provider: 'local';
  readonly model: string;
  /** Where `npm run models -- pull` fetches it: `hf:owner/repo/file` or a URL. */
  readonly source: string | null;
  /** Absolute path of the GGUF file. */
  readonly file: string;
  readonly sha256: string | null;
  readonly threads: number;
  /** Requests generated at the same time (context sequences). */
  readonly parallel: number;
  /** Requests that may wait for a sequence; more are refused. */
  readonly queueSize: number;
}

/** A file a speech engine needs (sherpa-onnx: encoder, decoder, tokens…). */
export interface EngineFile {
  /** What the engine uses it as (`encoder`, `decoder`, `joiner`, `model`, `tokens`). */
  readonly role: string;
  /** Where `npm run models -- pull` fetches it: `hf:owner/repo/file` or a URL; null: place it by hand. */
  readonly source: string | null;
  /** Absolute path. */
  readonly file: string;
  readonly sha256: string | null;
}

/** A model served by a speech engine on this machine. */
export interface EngineModelDefinition extends ModelDefinitionBase {
  readonly provider: SpeechEngineProvider;
  /** The engine's own name for it (a label for espeak-ng and pocketsphinx). */
  readonly model: string;
  /** sherpa-onnx: which model family the files are (whisper, transducer, …); null otherwise. */
  readonly architecture: string | null;
  readonly files: readonly EngineFile[];
  readonly threads: number;
  /** pocketsphinx: the program to run and its acoustic model directory. */
  readonly command: string | null;
  readonly modelDirectory: string | null;
}

export type ModelDefinition = RemoteModelDefinition | LocalModelDefinition | EngineModelDefinition;
