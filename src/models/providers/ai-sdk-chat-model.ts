// A ChatModel over an AI SDK provider model (Anthropic, Google, OpenAI): the request translated by
// ./ai-sdk-translation.ts (tools, images, response formats, sampling; 400 for what the provider
// cannot honour); retries with retry-after (./retry.ts), timeouts, aborts and the mapping of
// failures to the contract's 502/503/504 added here, without letting upstream bodies or secrets
// through.
import {
  APICallError,
  JSONParseError,
  TypeValidationError,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import type { EmbeddingModel as SdkEmbeddingModel } from 'ai';
import type { RemoteModelDefinition } from '../../config/config.js';
import type { AppError } from '../../errors/app-error.js';
import type { BpeTokenCounter } from '../bpe-token-counter.js';
import {
  finishReasonOf,
  refusalOfWarnings,
  StreamedToolCalls,
  tokenDetailsOf,
  toCallOptions,
  toolCallsOf,
  type ImageFetcher,
  type TranslationTarget,
} from './ai-sdk-translation.js';
import { explainDeadlineFailure } from './deadline-failure.js';
import { RetriesExhaustedError, withRetries } from './retry.js';
import {
  RequestAbortedError,
  UpstreamError,
  type ChatModel,
  type ChatTurn,
  type EmbeddingModel,
  type EmbeddingResult,
  type GenerationRequest,
  type GenerationResult,
  type StreamPart,
} from '../spec.js';

/**
 * Aborts when the client goes away, when the whole answer takes longer than `totalMs`, or (for a
 * stream) when the model stays silent for `idleMs` — before its first part or between two — and
 * says which it was. A model that drips a token every few seconds is stopped by the total.
 */
class Deadline {
  private readonly controller = new AbortController();
  private readonly totalTimer: NodeJS.Timeout;
  private idleTimer: NodeJS.Timeout | undefined;
  private timedOut: 'total' | 'idle' | null = null;
  private readonly onClientAbort = () => this.controller.abort(new RequestAbortedError());

  constructor(
    private readonly clientSignal: AbortSignal,
    private readonly totalMs: number,
    private readonly idleMs: number | null = null,
  ) {
    if (clientSignal.aborted) this.controller.abort(new RequestAbortedError());
    else clientSignal.addEventListener('abort', this.onClientAbort, { once: true });
    this.totalTimer = setTimeout(() => this.expire('total'), totalMs);
    this.restart();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private expire(which: 'total' | 'idle'): void {
    this.timedOut ??= which;
    this.controller.abort(new DOMException('model timed out', 'TimeoutError'));
  }

  /** The model just sent something: its silence starts again. */
  restart(): void {
    if (this.idleMs === null) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.expire('idle'), this.idleMs);
  }

  /**
   * A wait between retries begins (true) or ends (false): the service's own waiting is not the
   * model's silence, so the idle timer stops meanwhile and starts afresh with the next attempt.
   */
  readonly waiting = (waiting: boolean): void => {
    if (waiting) {
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
    } else this.restart();
  };

  /** The error to surface for a failure seen while this deadline was running. */
  explain(error: unknown, describe: (error: unknown) => UpstreamError): Error {
    return explainDeadlineFailure(
      {
        clientAborted: this.clientSignal.aborted,
        timedOut: this.timedOut,
        totalMs: this.totalMs,
        idleMs: this.idleMs,
      },
      error,
      describe,
    );
  }

  /** Ends the upstream call if it is still running (its consumer stopped reading). */
  cancel(): void {
    if (!this.controller.signal.aborted) this.controller.abort(new RequestAbortedError());
  }

  dispose(): void {
    clearTimeout(this.totalTimer);
    clearTimeout(this.idleTimer);
    this.clientSignal.removeEventListener('abort', this.onClientAbort);
  }
}

function retryAfterSecondsOf(error: APICallError): number | null {
  const header = error.responseHeaders?.['retry-after'];
  if (header === undefined) return null;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : null;
}

/** Where a failure happened: before the answer began, or in the middle of a streamed one. */
type FailurePhase = 'request' | 'stream';

/** Maps an SDK failure to the contract's upstream errors; the message names no upstream detail. */
export function describeUpstreamFailure(
  modelName: string,
  error: unknown,
  phase: FailurePhase = 'request',
): UpstreamError {
  const last = error instanceof RetriesExhaustedError ? error.lastError : error;
  const attempts = error instanceof RetriesExhaustedError ? error.attempts : 1;
  const stopped =
    error instanceof RetriesExhaustedError && error.cutShort
      ? " (the model's time limit ended the retries)"
      : '';
  const tried = `${attempts > 1 ? ` after ${attempts} attempts` : ''}${stopped}`;
  const midAnswer = phase === 'stream' ? ' mid-answer; the answer is incomplete' : '';
  if (JSONParseError.isInstance(last) || TypeValidationError.isInstance(last)) {
    return new UpstreamError(
      'upstream_error',
      phase === 'stream'
        ? `The provider of model '${modelName}' sent an invalid chunk${midAnswer}.`
        : `The provider of model '${modelName}' sent a response that is not in its API's format.`,
      { cause: error },
    );
  }
  if (APICallError.isInstance(last)) {
    const status = last.statusCode;
    if (status !== undefined && status >= 200 && status < 300) {
      // The status was fine; the body was not: cut short, or not in the provider's format.
      if (phase === 'stream') {
        return describeUpstreamFailure(modelName, last.cause ?? new Error('cut'), phase);
      }
      return new UpstreamError(
        'upstream_error',
        `The provider of model '${modelName}' sent a response that could not be read (cut short or not in its API's format).`,
        { cause: error, upstreamStatus: status },
      );
    }
    if (status === undefined) {
      return new UpstreamError(
        'model_unavailable',
        `The provider of model '${modelName}' could not be reached${tried}.`,
        { cause: error },
      );
    }
    if (status === 429) {
      return new UpstreamError(
        'model_unavailable',
        `The provider of model '${modelName}' is rate-limiting requests${tried}; retry later.`,
        { cause: error, upstreamStatus: status, retryAfterSeconds: retryAfterSecondsOf(last) },
      );
    }
    if (status === 401 || status === 403) {
      return new UpstreamError(
        'upstream_error',
        `The provider of model '${modelName}' refused the configured credentials (HTTP ${status}). Check the key in the model's api_key_env.`,
        { cause: error, upstreamStatus: status },
      );
    }
    if (status === 408 || status === 504) {
      return new UpstreamError(
        'upstream_timeout',
        `The provider of model '${modelName}' timed out${tried}.`,
        { cause: error, upstreamStatus: status },
      );
    }
    return new UpstreamError(
      'upstream_error',
      `The provider of model '${modelName}' answered HTTP ${status}${tried}.`,
      { cause: error, upstreamStatus: status },
    );
  }
  if (phase === 'stream') {
    return new UpstreamError(
      'upstream_error',
      `The connection to the provider of model '${modelName}' was cut${midAnswer}.`,
      { cause: error },
    );
  }
  return new UpstreamError(
    'upstream_error',
    `The provider of model '${modelName}' failed or sent a response that could not be read.`,
    { cause: error },
  );
}

/** A call ready to be sent: the provider's model and everything of the call but its signal. */
interface PreparedCall {
  readonly model: LanguageModelV3;
  readonly target: TranslationTarget;
  readonly options: Omit<LanguageModelV3CallOptions, 'abortSignal'>;
}

/**
 * Calls the provider model through the AI SDK's specification interface (doGenerate/doStream):
 * the provider packages speak each vendor's wire format; the SDK's convenience layer
 * (generateText/streamText) is skipped on this hot path because it costs more CPU per call than
 * the whole rest of a gateway request (see docs/decisions.md). Retries are ./retry.ts.
 */
export class AiSdkChatModel implements ChatModel {
  private loaded: Promise<LanguageModelV3> | undefined;
  private translationTarget: Promise<TranslationTarget> | undefined;

  constructor(
    private readonly definition: RemoteModelDefinition,
    /** Builds the provider's model (importing its package) on the first call. */
    private readonly load: () => Promise<LanguageModelV3>,
    private readonly tokens: BpeTokenCounter,
    /** Fetches the image URLs the provider cannot fetch itself; absent: they are refused. */
    private readonly fetchImage?: ImageFetcher,
  ) {}

  private model(): Promise<LanguageModelV3> {
    this.loaded ??= this.load();
    return this.loaded;
  }

  /** What the translation needs of this model: read once, with the model. */
  private target(): Promise<TranslationTarget> {
    this.translationTarget ??= this.model().then(async (model) => ({
      provider: this.definition.provider,
      modelId: this.definition.model,
      modelName: this.definition.name,
      supportedUrls: await model.supportedUrls,
      fetchImage: this.fetchImage,
    }));
    return this.translationTarget;
  }

  /**
   * Translates the request before any upstream call: a parameter the provider cannot honour is
   * refused here (InvalidParameterError), and image URLs it cannot fetch are fetched here.
   */
  private async prepare(request: GenerationRequest): Promise<PreparedCall> {
    const [model, target] = await Promise.all([this.model(), this.target()]);
    return { model, target, options: await toCallOptions(request, target) };
  }

  async generate(request: GenerationRequest): Promise<GenerationResult> {
    const { model, target, options } = await this.prepare(request);
    const deadline = new Deadline(request.signal, this.definition.timeoutMs);
    let result: Awaited<ReturnType<LanguageModelV3['doGenerate']>>;
    try {
      result = await withRetries(
        () => model.doGenerate({ ...options, abortSignal: deadline.signal }),
        { maxRetries: this.definition.maxRetries, signal: deadline.signal },
      );
    } catch (error) {
      throw deadline.explain(error, (cause) =>
        describeUpstreamFailure(this.definition.name, cause),
      );
    } finally {
      deadline.dispose();
    }
    const refusal = refusalOfWarnings(result.warnings, request, target);
    if (refusal !== null) throw refusal;
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
    const toolCalls = toolCallsOf(result.content);
    const written = text + (toolCalls ?? []).map((call) => call.function.arguments).join('');
    return {
      text,
      finishReason: finishReasonOf(result.finishReason.unified),
      usage: {
        promptTokens: result.usage.inputTokens.total ?? (await this.countTokens(request.messages)),
        completionTokens: result.usage.outputTokens.total ?? (await this.tokens.countText(written)),
        ...tokenDetailsOf(result.usage),
      },
      ...(toolCalls === undefined ? {} : { toolCalls }),
    };
  }

  async *stream(request: GenerationRequest): AsyncIterable<StreamPart> {
    const { model, target, options } = await this.prepare(request);
    const deadline = new Deadline(
      request.signal,
      this.definition.timeoutMs,
      this.definition.idleTimeoutMs,
    );
    let reader: ReadableStreamDefaultReader<LanguageModelV3StreamPart> | undefined;
    let text = '';
    const toolCalls = new StreamedToolCalls();
    let failure: unknown = undefined;
    let refusal: AppError | null = null;
    let phase: FailurePhase = 'request';
    try {
      // Retries cover opening the stream; once text flows, a failure ends it.
      const { stream } = await withRetries(
        () => model.doStream({ ...options, abortSignal: deadline.signal }),
        {
          maxRetries: this.definition.maxRetries,
          signal: deadline.signal,
          onWait: deadline.waiting,
        },
      );
      reader = stream.getReader();
      phase = 'stream';
      while (true) {
        const next = await reader.read();
        if (next.done) break;
        deadline.restart();
        const part = next.value;
        if (part.type === 'text-delta') {
          if (part.delta === '') continue;
          text += part.delta;
          yield { type: 'text', text: part.delta };
        } else if (part.type === 'stream-start') {
          // The SDK's warnings come first, before any answer: a dropped parameter ends it here.
          refusal = refusalOfWarnings(part.warnings, request, target);
          if (refusal !== null) break;
        } else if (part.type === 'error') {
          failure = part.error;
          break;
        } else if (part.type === 'finish') {
          const written = text + toolCalls.argumentsText();
          yield {
            type: 'finish',
            finishReason: finishReasonOf(part.finishReason.unified),
            usage: {
              promptTokens:
                part.usage.inputTokens.total ?? (await this.countTokens(request.messages)),
              completionTokens:
                part.usage.outputTokens.total ?? (await this.tokens.countText(written)),
              ...tokenDetailsOf(part.usage),
            },
          };
          return;
        } else {
          yield* toolCalls.translate(part);
        }
      }
    } catch (error) {
      // A connection cut mid-stream surfaces here, as a failed read.
      failure = error;
    } finally {
      deadline.dispose();
      // Ends the upstream call when the consumer stopped reading early or the stream failed.
      deadline.cancel();
      await reader?.cancel().catch(() => undefined);
    }
    if (refusal !== null) throw refusal;
    const endedEarly = failure === undefined;
    throw deadline.explain(failure, (cause) =>
      endedEarly
        ? new UpstreamError(
            'upstream_error',
            `The provider of model '${this.definition.name}' ended the stream before finishing the answer; the answer is incomplete.`,
          )
        : describeUpstreamFailure(this.definition.name, cause, phase),
    );
  }

  countTokens(messages: readonly ChatTurn[]): Promise<number> {
    return this.tokens.countMessages(messages);
  }
}

export class AiSdkEmbeddingModel implements EmbeddingModel {
  private loaded: Promise<SdkEmbeddingModel> | undefined;

  constructor(
    private readonly definition: RemoteModelDefinition,
    /** Builds the provider's model (importing its package) on the first call. */
    private readonly load: () => Promise<SdkEmbeddingModel>,
  ) {}

  async embed(texts: readonly string[], signal: AbortSignal): Promise<EmbeddingResult> {
    const deadline = new Deadline(signal, this.definition.timeoutMs);
    try {
      this.loaded ??= this.load();
      const [{ embedMany }, model] = await Promise.all([import('ai'), this.loaded]);
      const result = await embedMany({
        model,
        values: [...texts],
        maxRetries: this.definition.maxRetries,
        abortSignal: deadline.signal,
      });
      return { embeddings: result.embeddings, tokens: result.usage.tokens };
    } catch (error) {
      throw deadline.explain(error, (cause) =>
        describeUpstreamFailure(this.definition.name, cause),
      );
    } finally {
      deadline.dispose();
    }
  }
}
