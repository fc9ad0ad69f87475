// A ChatModel over any Vercel AI SDK language model (OpenAI, Anthropic, Google, OpenAI-compatible):
// retries with retry-after come from the SDK; timeouts, aborts and the mapping of failures to the
// contract's 502/503/504 are added here, without letting upstream bodies or secrets through.
import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3FinishReason,
  type LanguageModelV3Prompt,
  type LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { embedMany, type EmbeddingModel as SdkEmbeddingModel } from 'ai';
import type { RemoteModelDefinition } from '../../config/config.js';
import type { BpeTokenCounter } from '../bpe-token-counter.js';
import { RetriesExhaustedError, withRetries } from './retry.js';
import {
  RequestAbortedError,
  UpstreamError,
  type ChatModel,
  type ChatTurn,
  type EmbeddingModel,
  type EmbeddingResult,
  type FinishReason,
  type GenerationRequest,
  type GenerationResult,
  type StreamPart,
} from '../spec.js';

type SdkFinishReason = LanguageModelV3FinishReason['unified'];

function finishReasonOf(reason: SdkFinishReason | undefined): FinishReason {
  if (reason === 'stop' || reason === 'length') return reason;
  if (reason === 'content-filter') return 'content_filter';
  return 'other';
}

/**
 * Aborts when the client goes away or when the model has been silent for `timeoutMs` (for a
 * stream: since the request or since its last part), and says which of the two it was.
 */
class Deadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private timedOut = false;
  private readonly onClientAbort = () => this.controller.abort(new RequestAbortedError());

  constructor(
    private readonly clientSignal: AbortSignal,
    private readonly timeoutMs: number,
  ) {
    if (clientSignal.aborted) this.controller.abort(new RequestAbortedError());
    else clientSignal.addEventListener('abort', this.onClientAbort, { once: true });
    this.restart();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  restart(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new DOMException('model timed out', 'TimeoutError'));
    }, this.timeoutMs);
  }

  /** The error to surface for a failure seen while this deadline was running. */
  explain(error: unknown, describe: (error: unknown) => UpstreamError): Error {
    if (this.clientSignal.aborted) return new RequestAbortedError();
    if (this.timedOut) {
      return new UpstreamError(
        'upstream_timeout',
        `The model did not answer within ${this.timeoutMs} ms.`,
        { cause: error },
      );
    }
    return describe(error);
  }

  /** Ends the upstream call if it is still running (its consumer stopped reading). */
  cancel(): void {
    if (!this.controller.signal.aborted) this.controller.abort(new RequestAbortedError());
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.clientSignal.removeEventListener('abort', this.onClientAbort);
  }
}

function retryAfterSecondsOf(error: APICallError): number | null {
  const header = error.responseHeaders?.['retry-after'];
  if (header === undefined) return null;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : null;
}

/** Maps an SDK failure to the contract's upstream errors; the message names no upstream detail. */
export function describeUpstreamFailure(modelName: string, error: unknown): UpstreamError {
  const last = error instanceof RetriesExhaustedError ? error.lastError : error;
  const attempts = error instanceof RetriesExhaustedError ? error.attempts : 1;
  const tried = attempts > 1 ? ` after ${attempts} attempts` : '';
  if (APICallError.isInstance(last)) {
    const status = last.statusCode;
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
  return new UpstreamError(
    'upstream_error',
    `The provider of model '${modelName}' failed or sent a response that could not be read.`,
    { cause: error },
  );
}

/** The AI SDK's specification prompt: system prompts as system messages, never as user text. */
function toPrompt(messages: readonly ChatTurn[]): LanguageModelV3Prompt {
  return messages.map((message) =>
    message.role === 'system'
      ? { role: 'system', content: message.content }
      : { role: message.role, content: [{ type: 'text', text: message.content }] },
  );
}

/**
 * Calls the provider model through the AI SDK's specification interface (doGenerate/doStream):
 * the provider packages speak each vendor's wire format; the SDK's convenience layer
 * (generateText/streamText) is skipped on this hot path because it costs more CPU per call than
 * the whole rest of a gateway request (see docs/decisions.md). Retries are ./retry.ts.
 */
export class AiSdkChatModel implements ChatModel {
  constructor(
    private readonly definition: RemoteModelDefinition,
    private readonly model: LanguageModelV3,
    private readonly tokens: BpeTokenCounter,
  ) {}

  private callOptions(request: GenerationRequest, signal: AbortSignal) {
    return {
      prompt: toPrompt(request.messages),
      maxOutputTokens: request.maxTokens,
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      ...(request.responseSchema === undefined
        ? {}
        : {
            responseFormat: {
              type: 'json' as const,
              schema: request.responseSchema,
              name: 'result',
            },
          }),
      abortSignal: signal,
    };
  }

  async generate(request: GenerationRequest): Promise<GenerationResult> {
    const deadline = new Deadline(request.signal, this.definition.timeoutMs);
    try {
      const result = await withRetries(
        () => this.model.doGenerate(this.callOptions(request, deadline.signal)),
        { maxRetries: this.definition.maxRetries, signal: deadline.signal },
      );
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      return {
        text,
        finishReason: finishReasonOf(result.finishReason.unified),
        usage: {
          promptTokens:
            result.usage.inputTokens.total ?? (await this.countTokens(request.messages)),
          completionTokens: result.usage.outputTokens.total ?? (await this.tokens.countText(text)),
        },
      };
    } catch (error) {
      throw deadline.explain(error, (cause) =>
        describeUpstreamFailure(this.definition.name, cause),
      );
    } finally {
      deadline.dispose();
    }
  }

  async *stream(request: GenerationRequest): AsyncIterable<StreamPart> {
    const deadline = new Deadline(request.signal, this.definition.timeoutMs);
    let reader: ReadableStreamDefaultReader<LanguageModelV3StreamPart> | undefined;
    let text = '';
    let failure: unknown = undefined;
    try {
      // Retries cover opening the stream; once text flows, a failure ends it.
      const { stream } = await withRetries(
        () => this.model.doStream(this.callOptions(request, deadline.signal)),
        { maxRetries: this.definition.maxRetries, signal: deadline.signal },
      );
      reader = stream.getReader();
      while (true) {
        const next = await reader.read();
        if (next.done) break;
        deadline.restart();
        const part = next.value;
        if (part.type === 'text-delta' && part.delta !== '') {
          text += part.delta;
          yield { type: 'text', text: part.delta };
        } else if (part.type === 'error') {
          failure = part.error;
          break;
        } else if (part.type === 'finish') {
          yield {
            type: 'finish',
            finishReason: finishReasonOf(part.finishReason.unified),
            usage: {
              promptTokens:
                part.usage.inputTokens.total ?? (await this.countTokens(request.messages)),
              completionTokens:
                part.usage.outputTokens.total ?? (await this.tokens.countText(text)),
            },
          };
          return;
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
    throw deadline.explain(
      failure ?? new Error('the stream ended without a finish part'),
      (cause) => describeUpstreamFailure(this.definition.name, cause),
    );
  }

  countTokens(messages: readonly ChatTurn[]): Promise<number> {
    return this.tokens.countMessages(messages);
  }
}

export class AiSdkEmbeddingModel implements EmbeddingModel {
  constructor(
    private readonly definition: RemoteModelDefinition,
    private readonly model: SdkEmbeddingModel,
  ) {}

  async embed(texts: readonly string[], signal: AbortSignal): Promise<EmbeddingResult> {
    const deadline = new Deadline(signal, this.definition.timeoutMs);
    try {
      const result = await embedMany({
        model: this.model,
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
