// The model catalog at run time: which configured models are usable now and why not, one model
// instance per definition, and calls that fall back to the next model in `fallbacks`.
import type { Logger } from 'pino';
import type { AppConfig, ModelDefinition, ModelType } from '../config/config.js';
import { AppError, FeatureDisabledError, InvalidParameterError } from '../errors/app-error.js';
import { BpeTokenCounter, loadTokenizer } from './bpe-token-counter.js';
import {
  observedChatModel,
  observedEmbeddingModel,
  type ModelCallObserver,
} from './model-call-observer.js';
import { meteredChatModel, meteredEmbeddingModel } from './metered-models.js';
import {
  MemoryDeploymentHealth,
  type DeploymentHealth,
  type DeploymentState,
} from './deployments/deployment-health.js';
import { DeploymentRouter } from './deployments/deployment-router.js';
import {
  deploymentsOf,
  deploymentsUnavailability,
  withAttempts,
} from './deployments/deployment-models.js';
import { AttemptBudget } from './upstream/attempt-budget.js';
import { cachedChatModel, cacheSettingsOf } from './cache/cached-chat-model.js';
import type { ResponseStore } from './cache/response-cache.js';
import { unmetered, type UsageMeter } from './metering.js';
import type { LocalEngine } from './local/local-engine.js';
import { SpeechEngines } from './speech/speech-engines.js';
import {
  connectionOf,
  modelKinds,
  type ModelFactoryContext,
  type ModelOfKind,
} from './model-kinds.js';
import { remoteUnavailability } from './providers/remote-models.js';
import {
  RequestAbortedError,
  UpstreamError,
  type ChatModel,
  type EmbeddingModel,
  type StreamPart,
} from './spec.js';

export interface ModelStatus {
  readonly definition: ModelDefinition;
  readonly available: boolean;
  /** Why the model cannot be used now and how to change that; null when available. */
  readonly reason: string | null;
}

/** A stream whose first part has arrived, from the model that produced it. */
export interface OpenedStream {
  readonly definition: ModelDefinition;
  readonly first: StreamPart;
  readonly rest: AsyncIterator<StreamPart>;
}

export interface ModelRegistryOptions {
  /** The speech engines on this machine (default: their own, with their own worker threads). */
  readonly speech?: SpeechEngines;
  /** Told of every chat and embedding call (the service's metrics). */
  readonly observer?: ModelCallObserver;
  /** Meters every chat and embedding call: the usage ledger, and the budgets before each call. */
  readonly meter?: UsageMeter;
  /** Deployments' cooldowns (Redis: every instance's), and what they are drawn with. */
  readonly health?: DeploymentHealth;
  readonly random?: () => number;
  /** Where the exact response cache keeps answers (none: no model's answers are cached). */
  readonly responses?: ResponseStore;
}

export class ModelRegistry {
  private readonly byName: Map<string, ModelDefinition>;
  /** One built model per definition name, whatever its kind. */
  private readonly built = new Map<string, unknown>();
  /** The models served by several deployments, once built. */
  private readonly routers = new Map<string, DeploymentRouter>();
  private readonly context: ModelFactoryContext;

  private readonly observer: ModelCallObserver | undefined;
  private readonly meter: UsageMeter;
  private readonly health: DeploymentHealth;

  constructor(
    private readonly config: AppConfig,
    local: LocalEngine,
    private readonly logger: Logger,
    private readonly options: ModelRegistryOptions = {},
  ) {
    this.observer = options.observer;
    this.meter = options.meter ?? unmetered;
    this.health = options.health ?? new MemoryDeploymentHealth(config.models.upstreams);
    const speech = options.speech;
    this.byName = new Map(
      config.models.definitions.map((definition) => [definition.name, definition]),
    );
    this.context = {
      config,
      secrets: config.secrets,
      local,
      speech: speech ?? SpeechEngines.fromConfig(config),
      tokens: new BpeTokenCounter(),
    };
  }

  /**
   * Loads, before the service listens, what the first request would otherwise pay for with the
   * event loop held: the BPE tables remote chat models count tokens with (a few hundred ms, tens
   * of MiB), only when such a model can be called (the built-in catalog's hosted ones need keys).
   */
  async warmUp(): Promise<void> {
    const remoteChat = this.config.models.definitions.some(
      (definition) =>
        definition.type === 'chat' &&
        connectionOf(definition).kind === 'remote' &&
        this.statusOf(definition).available,
    );
    if (remoteChat) await loadTokenizer();
  }

  /** The meter of every model call: the speech service meters its engines' calls with it too. */
  get usageMeter(): UsageMeter {
    return this.meter;
  }

  /** The speech engines this registry builds models with. */
  get speechEngines(): SpeechEngines {
    return this.context.speech;
  }

  get defaultModel(): string | null {
    return this.config.models.defaultModel;
  }

  list(): ModelStatus[] {
    return this.config.models.definitions.map((definition) => this.statusOf(definition));
  }

  find(name: string): ModelDefinition | undefined {
    return this.byName.get(name);
  }

  status(name: string): ModelStatus | undefined {
    const definition = this.byName.get(name);
    return definition === undefined ? undefined : this.statusOf(definition);
  }

  /**
   * The default of a kind: the configured one (`default_model` for chat, `knowledge.embedding_model`
   * for embeddings), else the first available model of the kind, else the first of the kind.
   */
  defaultOf(kind: ModelType): string | null {
    const configured = modelKinds[kind].configuredDefault?.(this.config) ?? null;
    if (configured !== null) return configured;
    const ofKind = this.list().filter((status) => status.definition.type === kind);
    return (ofKind.find((status) => status.available) ?? ofKind[0])?.definition.name ?? null;
  }

  /**
   * The model of `kind` to use for a request: the named one (400 `unknown_model` when not in the
   * catalog, 400 when of another kind) or the kind's default (503 when there is none).
   * Availability is checked when the model is called, so a fallback can still serve a request
   * whose first model is unavailable.
   */
  resolve(kind: ModelType, requested: string | undefined | null, param = 'model'): string {
    const name = requested ?? this.defaultOf(kind);
    if (name === null) {
      throw new UpstreamError(
        'model_unavailable',
        `No ${kind} model is configured. Add one with type: ${kind} under 'models' in the config file (PLATFORM_CONFIG).`,
      );
    }
    if (
      kind === 'chat' &&
      requested !== undefined &&
      requested !== null &&
      requested !== this.defaultModel &&
      !this.config.features.multi_model_access
    ) {
      throw new FeatureDisabledError(
        'multi_model_access',
        `Choosing a model other than the default ('${this.defaultModel ?? 'none'}')`,
      );
    }
    const definition = this.byName.get(name);
    if (definition === undefined) {
      throw new AppError(
        'unknown_model',
        `Model '${name}' is not in the catalog. GET /v1/models lists the models of each type.`,
        { param },
      );
    }
    if (definition.type !== kind) {
      throw new InvalidParameterError(
        param,
        `Model '${name}' is ${modelKinds[definition.type].label}, not ${modelKinds[kind].label}.`,
      );
    }
    return name;
  }

  /** The chat model to use for a request (see `resolve`). */
  resolveChatModelName(requested: string | undefined | null, param = 'model'): string {
    return this.resolve('chat', requested, param);
  }

  definitionOf(name: string): ModelDefinition {
    const definition = this.byName.get(name);
    if (definition === undefined) throw new Error(`model '${name}' is not configured`);
    return definition;
  }

  /** The model itself; 503 `model_unavailable` with the reason when it cannot be used now. */
  model<K extends ModelType>(kind: K, name: string): ModelOfKind[K] {
    const { definition } = this.requireAvailable(name);
    if (definition.type !== kind) {
      throw new Error(`model '${name}' is ${definition.type}, asked for as ${kind}`);
    }
    let model = this.built.get(name) as ModelOfKind[K] | undefined;
    if (model === undefined) {
      model = this.observed(kind, name, this.create(kind, definition));
      this.built.set(name, model);
    }
    return model;
  }

  private create<K extends ModelType>(kind: K, definition: ModelDefinition): ModelOfKind[K] {
    const deployments = deploymentsOf(definition);
    if (kind !== 'chat' || deployments.length === 0) {
      return modelKinds[kind].create(definition, this.context);
    }
    // Each deployment metered on its own (its prices, its name in the ledger); the metrics see
    // the model as a whole.
    const usable = deployments.filter(
      (deployment) => remoteUnavailability(deployment.definition, this.config.secrets) === null,
    );
    const router = new DeploymentRouter(
      definition.name,
      usable.map((deployment) => ({
        deployment,
        model: meteredChatModel(
          modelKinds.chat.create(deployment.definition, this.context),
          deployment.definition,
          this.meter,
          deployment.name,
        ),
      })),
      this.health,
      this.logger,
      definition.timeoutMs,
      this.options.random,
    );
    this.routers.set(definition.name, router);
    return router as unknown as ModelOfKind[K];
  }

  /** The health of a model's deployments, as this instance knows it (empty: it has none). */
  async deploymentHealth(name: string): Promise<Array<{ name: string; state: DeploymentState }>> {
    const definition = this.byName.get(name);
    if (definition === undefined || deploymentsOf(definition).length === 0) return [];
    if (!this.routers.has(name) && this.statusOf(definition).available) this.chatModel(name);
    const router = this.routers.get(name);
    return router === undefined ? [] : router.deploymentStates();
  }

  /**
   * The model observed (the metrics: the model's own time) and metered (each call a ledger
   * record, its budgets reserved before it is made).
   */
  private observed<K extends ModelType>(kind: K, name: string, model: ModelOfKind[K]) {
    const { observer, meter } = this;
    const definition = this.definitionOf(name);
    if (kind === 'chat') {
      const chat = model as ChatModel;
      const seen = observer === undefined ? chat : observedChatModel(chat, name, observer);
      // A model of deployments is metered per deployment (in `create`).
      const metered =
        deploymentsOf(definition).length > 0 ? seen : meteredChatModel(seen, definition, meter);
      return this.cached(metered, definition) as ModelOfKind[K];
    }
    if (kind === 'embedding') {
      const embedding = model as EmbeddingModel;
      const seen =
        observer === undefined ? embedding : observedEmbeddingModel(embedding, name, observer);
      return meteredEmbeddingModel(seen, definition, meter) as ModelOfKind[K];
    }
    return model;
  }

  /** The model behind the exact response cache, when the cache is on for it. */
  private cached(model: ChatModel, definition: ModelDefinition): ChatModel {
    const settings = cacheSettingsOf(this.config.cache, definition);
    const { responses } = this.options;
    if (!settings.enabled || responses === undefined) return model;
    return cachedChatModel(model, definition, settings, responses, this.meter, (error) =>
      this.logger.warn({ err: error, model: definition.name }, 'response cache unavailable'),
    );
  }

  chatModel(name: string): ChatModel {
    return this.model('chat', name);
  }

  embeddingModel(name: string): EmbeddingModel {
    return this.model('embedding', name);
  }

  /**
   * Runs `call` on the model, then on each of its fallbacks in order while the failure is one a
   * different model could avoid (unavailable, upstream error, timeout). The first model's error is
   * the one reported when all fail.
   */
  async withFallbacks<T>(
    name: string,
    call: (model: ChatModel, definition: ModelDefinition) => Promise<T>,
    /** Fallbacks that cannot serve the request (a capability it needs) are skipped. */
    canServe: (definition: ModelDefinition) => boolean = () => true,
  ): Promise<{ result: T; definition: ModelDefinition }> {
    const candidates = [
      name,
      ...this.definitionOf(name).fallbacks.filter((fallback) =>
        canServe(this.definitionOf(fallback)),
      ),
    ];
    const attempts = new AttemptBudget(this.definitionOf(name).maxAttempts);
    let firstFailure: unknown;
    for (const candidate of candidates) {
      if (attempts.left === 0) break;
      try {
        const model = withAttempts(this.chatModel(candidate), attempts);
        const definition = this.definitionOf(candidate);
        return { result: await call(model, definition), definition };
      } catch (error) {
        if (error instanceof RequestAbortedError) throw error;
        if (!(error instanceof UpstreamError) || !error.fallbackWorthy) throw error;
        firstFailure ??= error;
        this.logger.warn(
          { model: candidate, code: error.code, err: error.cause ?? error },
          candidate === candidates[candidates.length - 1] || attempts.left === 0
            ? 'model failed; no fallback left'
            : 'model failed; trying its next fallback',
        );
      }
    }
    throw firstFailure;
  }

  /** Opens a stream, falling back only until the first part arrives (after it, text was sent). */
  openStream(
    name: string,
    open: (model: ChatModel, definition: ModelDefinition) => AsyncIterable<StreamPart>,
    canServe: (definition: ModelDefinition) => boolean = () => true,
  ): Promise<OpenedStream> {
    return this.withFallbacks(
      name,
      async (model, definition) => {
        const iterator = open(model, definition)[Symbol.asyncIterator]();
        const first = await iterator.next();
        if (first.done === true) {
          throw new UpstreamError(
            'upstream_error',
            `Model '${name}' ended its answer without a finish.`,
          );
        }
        return { first: first.value, rest: iterator };
      },
      canServe,
    ).then(({ result, definition }) => ({ ...result, definition }));
  }

  private statusOf(definition: ModelDefinition): ModelStatus {
    if (deploymentsOf(definition).length > 0) {
      const reason = deploymentsUnavailability(definition, this.config.secrets);
      return { definition, available: reason === null, reason };
    }
    const connection = connectionOf(definition);
    const reason =
      modelKinds[definition.type].unavailability?.(definition) ??
      (connection.kind === 'local'
        ? this.context.local.unavailability(connection.definition)
        : connection.kind === 'engine'
          ? this.context.speech.unavailability(connection.definition)
          : remoteUnavailability(connection.definition, this.config.secrets));
    return { definition, available: reason === null, reason };
  }

  private requireAvailable(name: string): ModelStatus {
    const definition = this.definitionOf(name);
    const status = this.statusOf(definition);
    if (!status.available) {
      throw new UpstreamError(
        'model_unavailable',
        `Model '${name}' is not available: ${status.reason ?? 'unknown reason'}`,
      );
    }
    return status;
  }
}
