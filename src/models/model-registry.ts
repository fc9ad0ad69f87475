// The model catalog at run time: which configured models are usable now and why not, one model
// instance per definition, and calls that fall back to the next model in `fallbacks`.
import type { FastifyBaseLogger } from 'fastify';
import type { AppConfig, ModelDefinition } from '../config/config.js';
import { AppError } from '../errors/app-error.js';
import { BpeTokenCounter } from './bpe-token-counter.js';
import type { LocalEngine } from './local/local-engine.js';
import {
  createRemoteChatModel,
  createRemoteEmbeddingModel,
  remoteUnavailability,
} from './providers/remote-models.js';
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

export class ModelRegistry {
  private readonly byName: Map<string, ModelDefinition>;
  private readonly chatModels = new Map<string, ChatModel>();
  private readonly embeddingModels = new Map<string, EmbeddingModel>();
  private readonly tokens = new BpeTokenCounter();

  constructor(
    private readonly config: AppConfig,
    private readonly local: LocalEngine,
    private readonly logger: FastifyBaseLogger,
  ) {
    this.byName = new Map(
      config.models.definitions.map((definition) => [definition.name, definition]),
    );
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
   * The chat model to use for a request: the named one (400 `unknown_model` when not in the
   * catalog) or the default. Availability is checked when it is called, so a fallback can still
   * serve a request whose first model is unavailable.
   */
  resolveChatModelName(requested: string | undefined | null, param = 'model'): string {
    const name = requested ?? this.defaultModel;
    if (name === null) {
      throw new UpstreamError(
        'model_unavailable',
        "No chat model is configured. Add one under 'models' in the config file (PLATFORM_CONFIG).",
      );
    }
    const definition = this.byName.get(name);
    if (definition === undefined) {
      throw new AppError(
        'unknown_model',
        `Model '${name}' is not in the catalog. GET /v1/models lists the available ones.`,
        { param },
      );
    }
    if (definition.type !== 'chat') {
      throw new AppError(
        'invalid_parameter',
        `Model '${name}' is an embedding model, not a chat model.`,
        {
          param,
        },
      );
    }
    return name;
  }

  definitionOf(name: string): ModelDefinition {
    const definition = this.byName.get(name);
    if (definition === undefined) throw new Error(`model '${name}' is not configured`);
    return definition;
  }

  /** The chat model itself; 503 `model_unavailable` with the reason when it cannot be used. */
  chatModel(name: string): ChatModel {
    const status = this.requireAvailable(name);
    let model = this.chatModels.get(name);
    if (model === undefined) {
      const { definition } = status;
      model =
        definition.provider === 'local'
          ? this.local.chatModel(definition)
          : createRemoteChatModel(definition, this.config.secrets, this.tokens);
      this.chatModels.set(name, model);
    }
    return model;
  }

  embeddingModel(name: string): EmbeddingModel {
    const status = this.requireAvailable(name);
    let model = this.embeddingModels.get(name);
    if (model === undefined) {
      const { definition } = status;
      model =
        definition.provider === 'local'
          ? this.local.embeddingModel(definition)
          : createRemoteEmbeddingModel(definition, this.config.secrets);
      this.embeddingModels.set(name, model);
    }
    return model;
  }

  /**
   * Runs `call` on the model, then on each of its fallbacks in order while the failure is one a
   * different model could avoid (unavailable, upstream error, timeout). The first model's error is
   * the one reported when all fail.
   */
  async withFallbacks<T>(
    name: string,
    call: (model: ChatModel, definition: ModelDefinition) => Promise<T>,
  ): Promise<{ result: T; definition: ModelDefinition }> {
    const candidates = [name, ...this.definitionOf(name).fallbacks];
    let firstFailure: unknown;
    for (const candidate of candidates) {
      try {
        const model = this.chatModel(candidate);
        const definition = this.definitionOf(candidate);
        return { result: await call(model, definition), definition };
      } catch (error) {
        if (error instanceof RequestAbortedError) throw error;
        if (!(error instanceof UpstreamError) || !error.fallbackWorthy) throw error;
        firstFailure ??= error;
        this.logger.warn(
          { model: candidate, code: error.code, err: error.cause ?? error },
          candidate === candidates[candidates.length - 1]
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
  ): Promise<OpenedStream> {
    return this.withFallbacks(name, async (model, definition) => {
      const iterator = open(model, definition)[Symbol.asyncIterator]();
      const first = await iterator.next();
      if (first.done === true) {
        throw new UpstreamError(
          'upstream_error',
          `Model '${name}' ended its answer without a finish.`,
        );
      }
      return { first: first.value, rest: iterator };
    }).then(({ result, definition }) => ({ ...result, definition }));
  }

  private statusOf(definition: ModelDefinition): ModelStatus {
    const reason =
      definition.provider === 'local'
        ? this.local.unavailability(definition)
        : remoteUnavailability(definition, this.config.secrets);
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
