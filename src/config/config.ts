// The typed, frozen configuration every other module receives; built only by load-config.ts.
import type { FeatureName } from '../modules/health/feature-catalog.js';
import type { OidcConfig } from '../modules/accounts/sso/sso.config.js';
import type { CacheConfig } from './cache-config.js';
import type { SpeechConfig, TemplateDefinition } from './config-sections.js';

export type { SpeechConfig, TemplateDefinition, TemplateVariable } from './config-sections.js';

export interface RateLimitTier {
  readonly perMinute: number;
  readonly perDay: number;
}

export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string };

export { chatCapabilities, modelTypes } from './model-types.js';
export type {
  ModelProvider,
  SpeechEngineProvider,
  ModelType,
  VoiceDefinition,
  SpeechSettings,
  ChatCapability,
  ModelPricing,
  ModelRoutingFacts,
  RemoteModelDefinition,
  DeploymentDefinition,
  UpstreamSettings,
  LocalModelDefinition,
  EngineFile,
  EngineModelDefinition,
  ModelDefinition,
} from './model-types.js';
import type { ModelDefinition, UpstreamSettings } from './model-types.js';

/** Secrets (provider keys, tokens) are read when used, so they never sit in the frozen config. */
export interface SecretSource {
  get(name: string): string | undefined;
}

/**
 * OpenTelemetry, from its standard variables (`OTEL_*`): the SDK itself reads the rest (protocol,
 * sampler, headers, …) when it is started.
 */
export interface TelemetrySettings {
  readonly enabled: boolean;
  /** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`: prompts and answers on spans. */
  readonly captureMessageContent: boolean;
  /** `OTEL_SERVICE_NAME`, else the service's own name. */
  readonly serviceName: string;
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
    /** Time to receive a whole request, headers and body (a slow sender is cut off after it). */
    readonly requestTimeoutMs: number;
    /** Time to receive the request headers. */
    readonly headersTimeoutMs: number;
    /** How long an idle keep-alive connection stays open (above a load balancer's idle timeout). */
    readonly keepAliveTimeoutMs: number;
    readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
    /**
     * The share of successful requests (status below 400) that get a request log line; failed
     * ones always do. 1: every request.
     */
    readonly requestLogSample: number;
    /** Browser origins allowed to call the API with credentials (CORS); empty: none. */
    readonly corsOrigins: readonly string[];
    /**
     * The service's own origin as browsers reach it (`PUBLIC_URL`), which cookie-authenticated
     * requests that change state must come from; null: taken from each request's Host header.
     */
    readonly publicOrigin: string | null;
  };
  /** Prometheus metrics (`GET /metrics`). */
  readonly metrics: {
    /**
     * null: served on the API's port to admin keys of the owner's account; a port: served there
     * without authentication (keep that address private), and not on the API's port.
     */
    readonly port: number | null;
    /** Address the metrics port listens on (default: the API's `host`). */
    readonly host: string;
  };
  /** Dashboard sessions (cookie authentication). */
  readonly sessions: {
    /** A session unused for this long ends. */
    readonly idleTimeoutMs: number;
    /** A session ends this long after login, however active. */
    readonly maxAgeMs: number;
    /** `auto`: the cookie is `Secure` when the request came over HTTPS. */
    readonly cookieSecure: boolean | 'auto';
    /** Login attempts allowed per client address per minute. */
    readonly loginAttemptsPerMinute: number;
  };
  readonly webApp: {
    /** The built dashboard (index.html and assets/). */
    readonly directory: string;
  };
  readonly database: DatabaseConfig;
  readonly redisUrl: string | null;
  /**
   * Prepended (with a colon) to every Redis key and channel this service uses: rate-limit counters,
   * the executions' change feed, the job queue; empty: the historical names. Instances sharing a
   * Redis must use the same prefix to see each other, and different ones to stay apart.
   */
  readonly redisKeyPrefix: string;
  /** Background runs (asynchronous pipeline runs) and the queue that carries them. */
  readonly jobs: {
    /** Runs one instance works on at once. */
    readonly concurrency: number;
    /**
     * With the Redis queue: how long a run's lock lasts without renewal, so roughly how long after
     * its instance dies another instance takes it up (the stalled check runs at half this).
     */
    readonly lockMs: number;
    /**
     * With the Redis queue: how long an asynchronous run's request waits for Redis to take its job
     * before answering 202 anyway (the job is then held in the instance until Redis is back).
     */
    readonly enqueueWaitMs: number;
    /**
     * An instance whose heartbeat is older than this is taken for stopped: its request-bound runs
     * are failed `interrupted` and its queued runs continued elsewhere. It beats every sixth of
     * this, and looks for stopped instances about as often as this.
     */
    readonly instanceTimeoutMs: number;
  };
  readonly auth: {
    readonly adminKey: string | null;
    /** When set, key hashes are HMAC-SHA256 with this secret; otherwise plain SHA-256. */
    readonly apiKeySecret: string | null;
    readonly keyCacheTtlMs: number;
    readonly lastUsedWriteIntervalMs: number;
    /** Single sign-on for the dashboard (`auth.oidc`); null: off. */
    readonly oidc: OidcConfig | null;
  };
  readonly rateLimits: {
    readonly defaultTier: string;
    readonly tiers: Readonly<Record<string, RateLimitTier>>;
    /**
     * Per tier, the ceiling of an account of that tier: all its keys' requests together
     * (`account_per_minute`/`account_per_day`, else `account_multiple` × the key limits).
     */
    readonly accountTiers: Readonly<Record<string, RateLimitTier>>;
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
    readonly upstreams: UpstreamSettings;
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
  /** The exact response cache (`cache` in the config file). */
  readonly cache: CacheConfig;
  /** The audit log (`audit` in the config file). */
  readonly audit: {
    /** Days records are kept; null: forever. */
    readonly retentionDays: number | null;
    /** How often each instance deletes the records past retention. */
    readonly pruneIntervalMs: number;
  };
  /** The usage ledger and the budgets (`usage` in the config file). */
  readonly usage: {
    /** Whether model calls are metered: recorded in the ledger and held to budgets. */
    readonly enabled: boolean;
    /** Longest a usage record waits in memory before it is written (what a kill -9 may lose). */
    readonly flushIntervalMs: number;
    /** Days records are kept; null: forever. */
    readonly retentionDays: number | null;
    /** A call under a budget goes on when the budgets' store cannot be reached. */
    readonly budgetsFailOpen: boolean;
  };
  /** The connections of agents' tools: MCP servers and OpenAPI-described APIs (`tools`). */
  readonly tools: {
    /**
     * Hosts and address ranges (CIDR) tool connections may reach although they are loopback,
     * private, link-local or metadata addresses (same syntax as `web.allowedPrivateTargets`).
     */
    readonly allowedPrivateTargets: readonly string[];
    /** Longest one tool call may take (and listing a server's tools). */
    readonly callTimeoutMs: number;
    /** How long a server's tool list is reused (per account, URL and credentials). */
    readonly listCacheTtlMs: number;
    /** Characters of a tool's answer kept; the rest is cut with a marker. */
    readonly maxResultChars: number;
    /** `bearer_token_env` must start with this (a tenant cannot name DATABASE_URL). */
    readonly secretEnvPrefix: string;
    /** How long a ToolAgent's call waits for a person's approval before its run fails. */
    readonly approvalTimeoutMs: number;
    /** Tool calls one model turn may make; the model is told the rest were not made. */
    readonly maxCallsPerTurn: number;
    /** Bytes of one call's arguments; larger ones are not parsed, called or stored. */
    readonly maxArgumentBytes: number;
    /** Bytes of a tool server's answer read at most; past it the call fails unread. */
    readonly maxResponseBytes: number;
  };
  /** The chat routes' limits (`chat` in the config file). */
  readonly chat: {
    /**
     * The body limit of the chat routes (/v1/chat, /chat/completions): base64 images make their
     * bodies larger than other routes'. The server's `bodyLimitBytes` when that is larger.
     */
    readonly bodyLimitBytes: number;
    /** Longest inline data (a data URL, audio, a file) a stored turn keeps; past it 413. */
    readonly maxStoredDataUrlBytes: number;
  };
  readonly knowledge: {
    /** Embedding model for new knowledge bases; null: the first available embedding model. */
    readonly embeddingModel: string | null;
    /** Target chunk size and overlap, in characters. */
    readonly chunkSize: number;
    readonly chunkOverlap: number;
  };
  /**
   * The text worker threads, where client Markdown and HTML are parsed (layouts, knowledge
   * documents, web pages). A task may run `timeoutMs` plus `timeoutMsPerMib` per MiB of its input.
   */
  readonly text: {
    readonly workerThreads: number;
    /** Tasks waiting for a thread at most; past it requests get 503 with Retry-After. */
    readonly maxQueue: number;
    readonly timeoutMs: number;
    readonly timeoutMsPerMib: number;
    /** Heap of each thread, in MiB; a task needing more is refused like one past its deadline. */
    readonly maxHeapMb: number;
  };
  readonly routing: {
    /** Bytes the per-account router indexes may hold in this process (least recently used go). */
    readonly cacheMaxBytes: number;
    /** When its best route scores below this, the learned router declines. */
    readonly minScore: number;
    /** Taught examples an account may hold (a newer one on the same message replaces it). */
    readonly maxExamplesPerAccount: number;
    /**
     * Embedding model blended into the learned router: a catalog name, `auto` (the first
     * available embedding model) or false (lexical only).
     */
    readonly embeddingModel: string | false;
    /** Chat model that classifies intents when a request names none; null: the shipped classifier. */
    readonly intentModel: string | null;
  };
  readonly speech: SpeechConfig;
  /** Prompt templates added (or redefined) by the config file; the built-in ones come on top. */
  readonly templates: readonly TemplateDefinition[];
  readonly secrets: SecretSource;
  /** OpenTelemetry traces and metrics (the `OTEL_*` variables). */
  readonly telemetry: TelemetrySettings;
}
