// The typed, frozen configuration every other module receives; built only by load-config.ts.
import type { FeatureName } from '../features/catalog.js';

export interface RateLimitTier {
  readonly perMinute: number;
  readonly perDay: number;
}

export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string };

export type ModelProvider = 'openai' | 'anthropic' | 'google' | 'openai-compatible' | 'local';

interface ModelDefinitionBase {
  /** The value clients pass as `model`. */
  readonly name: string;
  readonly displayName: string;
  readonly type: 'chat' | 'embedding';
  /** Largest completion a request may ask for. */
  readonly maxTokens: number;
  readonly contextLength: number;
  /** Tried in order when this model fails (not followed transitively). */
  readonly fallbacks: readonly string[];
  /** Per request to this model, retries included. */
  readonly timeoutMs: number;
  /** Retries on 408/409/429/5xx, honouring retry-after. */
  readonly maxRetries: number;
}

export interface RemoteModelDefinition extends ModelDefinitionBase {
  readonly provider: Exclude<ModelProvider, 'local'>;
  /** The provider's own model id. */
  readonly model: string;
  readonly baseUrl: string | null;
  /** The environment variable holding the key (read when used, never stored in config). */
  readonly apiKeyEnv: string | null;
  /** Whether JSON output can be constrained by a schema (else the provider's JSON mode). */
  readonly structuredOutputs: boolean;
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

export type ModelDefinition = RemoteModelDefinition | LocalModelDefinition;

export interface TemplateVariable {
  readonly name: string;
  readonly required: boolean;
  readonly description: string;
}

export interface TemplateDefinition {
  readonly name: string;
  readonly displayName: string;
  readonly description: string;
  /** Mustache text: `{{variable}}` and `{{#variable}}…{{/variable}}` sections. */
  readonly systemPrompt: string;
  readonly variables: readonly TemplateVariable[];
  readonly exampleUsage: string;
}

/** Secrets (provider keys, tokens) are read when used, so they never sit in the frozen config. */
export interface SecretSource {
  get(name: string): string | undefined;
}

export interface AppConfig {
  readonly serviceName: string;
  readonly version: string;
  /** Where each value came from, for start-up logs: the config file path or null. */
  readonly configFile: string | null;
  readonly server: {
    readonly host: string;
    readonly port: number;
    readonly bodyLimitBytes: number;
    /** Address ranges whose X-Forwarded-For is believed; empty means none. */
    readonly trustProxy: readonly string[];
    readonly shutdownTimeoutMs: number;
    readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  };
  readonly database: DatabaseConfig;
  readonly redisUrl: string | null;
  readonly auth: {
    readonly adminKey: string | null;
    /** When set, key hashes are HMAC-SHA256 with this secret; otherwise plain SHA-256. */
    readonly apiKeySecret: string | null;
    readonly keyCacheTtlMs: number;
    readonly lastUsedWriteIntervalMs: number;
  };
  readonly rateLimits: {
    readonly defaultTier: string;
    readonly tiers: Readonly<Record<string, RateLimitTier>>;
  };
  readonly features: Readonly<Record<FeatureName, boolean>>;
  readonly models: {
    readonly definitions: readonly ModelDefinition[];
    /** Used when a request names no model; null when no chat model is configured. */
    readonly defaultModel: string | null;
    readonly modelsDirectory: string;
    /** Whether start-up fetches missing local models that have a `source`, in the background. */
    readonly autoPull: boolean;
    readonly huggingFaceEndpoint: string;
    /** `false` runs local models on the CPU; `auto` lets node-llama-cpp pick a GPU back-end. */
    readonly localGpu: 'auto' | false;
  };
  readonly web: {
    /** SearXNG instance (its JSON API must be enabled), e.g. http://127.0.0.1:8888. */
    readonly searxngUrl: string | null;
    readonly braveBaseUrl: string;
    /** Environment variable holding the Brave Search API key. */
    readonly braveApiKeyEnv: string;
    readonly tavilyBaseUrl: string;
    /** Environment variable holding the Tavily API key. */
    readonly tavilyApiKeyEnv: string;
    /**
     * Hosts and address ranges (CIDR) that page fetches may reach although they are loopback,
     * private, link-local or metadata addresses; empty by default (SSRF protection).
     */
    readonly allowedPrivateTargets: readonly string[];
    readonly fetchTimeoutMs: number;
    readonly maxPageBytes: number;
    readonly maxRedirects: number;
    readonly userAgent: string;
  };
  readonly knowledge: {
    /** Embedding model for new knowledge bases; null: the first available embedding model. */
    readonly embeddingModel: string | null;
    /** Target chunk size and overlap, in characters. */
    readonly chunkSize: number;
    readonly chunkOverlap: number;
  };
  /** Prompt templates added (or redefined) by the config file; the built-in ones come on top. */
  readonly templates: readonly TemplateDefinition[];
  readonly secrets: SecretSource;
}
