// GenAI spans and metrics of model calls, as OpenTelemetry's GenAI semantic conventions give them:
// one CLIENT span `chat {model}` / `embeddings {model}` per upstream attempt. A traced model puts
// its call in the async context; each HTTP request the provider's client makes for it (the first,
// and each retry) opens an attempt span there and carries its `traceparent` (`upstreamAttempt`,
// called by the two HTTP clients); the answer's model, finish reasons and usage go on the last
// attempt. A call that makes no HTTP request (a local model) is one span of its own.
import type * as Api from '@opentelemetry/api';
import type { ModelDefinition } from '../config/config.js';
import {
  RequestAbortedError,
  type ChatModel,
  type EmbeddingModel,
  type GenerationRequest,
  type GenerationResult,
  type StreamPart,
  type TokenUsage,
} from '../models/spec.js';
import {
  errorTypeOf,
  inputMessages,
  modelAttributes,
  outputMessages,
  requestAttributes,
  serverOf,
  usageAttributes,
  type Attributes,
} from './gen-ai-attributes.js';
import { telemetry, type TelemetryRuntime } from './otel-runtime.js';

export { errorTypeOf } from './gen-ai-attributes.js';

const contextKey = Symbol.for('conversational-ai-platform.gen-ai-call');

/**
 * One model call: its attributes, the attempt spans its HTTP requests open, and how it ended.
 * The metrics are recorded once per call, when it ends.
 */
class GenAiCall implements TracedCall {
  private attempt: Api.Span | null = null;
  private attempts = 0;
  private readonly started = performance.now();
  private readonly startTime = Date.now();
  private firstContentAt: number | null = null;
  private readonly context: Api.Context;

  constructor(
    private readonly rt: TelemetryRuntime,
    private readonly name: string,
    private readonly attributes: Attributes,
    private readonly metricAttributes: Attributes,
  ) {
    this.context = rt.api.context.active().setValue(contextKey, this);
  }

  within<T>(work: () => T): T {
    return this.rt.api.context.with(this.context, work);
  }

  /** A CLIENT span of this call, a child of what is active (the request, the run, the tool). */
  private openSpan(attributes: Attributes, startTime?: number): Api.Span {
    return this.rt.tracer.startSpan(
      this.name,
      {
        kind: this.rt.api.SpanKind.CLIENT,
        attributes,
        ...(startTime === undefined ? {} : { startTime }),
      },
      this.rt.api.context.active(),
    );
  }

  /** Ends `span` as failed with `errorType`. */
  private endFailed(span: Api.Span, errorType: string): void {
    span.setAttribute('error.type', errorType);
    span.setStatus({ code: this.rt.api.SpanStatusCode.ERROR });
    span.end();
  }

  /** An HTTP request for this call begins: a span of its own, whose context the request carries. */
  begin(url: URL): Api.Span {
    // A retry: the attempt before it failed (its client said so) or was given up.
    if (this.attempt !== null) this.endAttempt(this.attempt, 'retried');
    this.attempts += 1;
    const span = this.openSpan({ ...this.attributes, ...serverOf(url) });
    this.attempt = span;
    return span;
  }

  /** The HTTP request `span` belongs to failed (its status, or a connection error). */
  endAttempt(span: Api.Span, errorType: string): void {
    this.endFailed(span, errorType);
    if (this.attempt === span) this.attempt = null;
  }

  /** The span the call's outcome goes on: the open attempt, else one covering the whole call. */
  private last(): Api.Span {
    return this.attempt ?? this.openSpan(this.attributes, this.startTime);
  }

  contentSeen(): void {
    if (this.firstContentAt !== null) return;
    this.firstContentAt = performance.now();
    const seconds = (this.firstContentAt - this.started) / 1000;
    this.rt.instruments.timeToFirstToken.record(seconds, this.metricAttributes);
  }

  /** `finishReason` null: an operation without one (embeddings), which has no output tokens. */
  succeeded(
    finishReason: string | null,
    usage: TokenUsage | undefined,
    output: string | null = null,
  ): void {
    const span = this.last();
    span.setAttributes({
      'gen_ai.response.model': this.attributes['gen_ai.request.model'] ?? '',
      ...(finishReason === null ? {} : { 'gen_ai.response.finish_reasons': [finishReason] }),
      ...(usage === undefined ? {} : usageAttributes(usage)),
    });
    if (output !== null && finishReason !== null && this.rt.captureMessageContent) {
      span.setAttribute('gen_ai.output.messages', outputMessages(output, finishReason));
    }
    span.end();
    this.attempt = null;
    this.record(undefined);
    if (usage === undefined) return;
    const { tokenUsage, timePerOutputToken } = this.rt.instruments;
    tokenUsage.record(usage.promptTokens, {
      ...this.metricAttributes,
      'gen_ai.token.type': 'input',
    });
    if (finishReason === null) return;
    tokenUsage.record(usage.completionTokens, {
      ...this.metricAttributes,
      'gen_ai.token.type': 'output',
    });
    if (this.firstContentAt !== null && usage.completionTokens > 1) {
      const seconds = (performance.now() - this.firstContentAt) / 1000;
      timePerOutputToken.record(seconds / (usage.completionTokens - 1), this.metricAttributes);
    }
  }

  failed(error: unknown): void {
    const errorType = errorTypeOf(error);
    // Every attempt ended with its own failure (an upstream's 4xx or 5xx each time): their spans
    // tell it; the call adds no span of its own, only its duration.
    if (this.attempt === null && this.attempts > 0) {
      this.record(errorType);
      return;
    }
    this.endFailed(this.last(), errorType);
    this.attempt = null;
    this.record(errorType);
  }

  private record(errorType: string | undefined): void {
    const seconds = (performance.now() - this.started) / 1000;
    this.rt.instruments.operationDuration.record(
      seconds,
      errorType === undefined
        ? this.metricAttributes
        : { ...this.metricAttributes, 'error.type': errorType },
    );
  }
}

/** What an HTTP client does with an attempt it began: tell how it failed, if it did. */
export interface UpstreamAttempt {
  failed(errorType: string): void;
}

/**
 * Called by the upstream HTTP clients before each request: when a traced model call is under way,
 * opens its attempt span and writes its `traceparent` (and `tracestate`) into `headers`.
 */
export function upstreamAttempt(url: URL, headers: Record<string, string>): UpstreamAttempt | null {
  const rt = telemetry();
  if (rt === null) return null;
  const active = rt.api.context.active();
  const call = active.getValue(contextKey) as GenAiCall | undefined;
  if (call === undefined) return null;
  const span = call.begin(url);
  rt.api.propagation.inject(rt.api.trace.setSpan(active, span), headers);
  return { failed: (errorType) => call.endAttempt(span, errorType) };
}

/** What a chat call's span is made of; `messages` when the call has them as the platform's. */
type ChatCallRequest = Pick<
  GenerationRequest,
  'maxTokens' | 'temperature' | 'params' | 'attribution'
> &
  Partial<Pick<GenerationRequest, 'messages'>>;

function callOf(
  rt: TelemetryRuntime,
  base: Attributes,
  request: ChatCallRequest,
  stream: boolean,
): GenAiCall {
  const attributes = { ...base, ...requestAttributes(request, stream) };
  if (rt.captureMessageContent && request.messages !== undefined) {
    attributes['gen_ai.input.messages'] = inputMessages(request.messages);
  }
  return new GenAiCall(rt, `chat ${String(base['gen_ai.request.model'])}`, attributes, base);
}

function tracedStream(
  rt: TelemetryRuntime,
  base: Attributes,
  model: ChatModel,
  request: GenerationRequest,
): AsyncIterable<StreamPart> {
  return {
    [Symbol.asyncIterator]() {
      const call = callOf(rt, base, request, true);
      const inner = call.within(() => model.stream(request)[Symbol.asyncIterator]());
      let text = '';
      let ended = false;
      const end = (outcome: () => void) => {
        if (ended) return;
        ended = true;
        outcome();
      };
      return {
        async next() {
          let step: IteratorResult<StreamPart>;
          try {
            step = await call.within(() => inner.next());
          } catch (error) {
            end(() => call.failed(error));
            throw error;
          }
          if (step.done === true) return step;
          const part = step.value;
          if (part.type === 'finish') {
            end(() => call.succeeded(part.finishReason, part.usage, text));
          } else if (part.type === 'text' || part.type === 'refusal' || part.type === 'tool-call') {
            call.contentSeen();
            if (part.type === 'text' && rt.captureMessageContent) text += part.text;
          } else if (part.type === 'relayed' && part.content) {
            call.contentSeen();
          }
          return step;
        },
        async return(value?: unknown) {
          end(() => call.failed(new RequestAbortedError()));
          return (await inner.return?.(value)) ?? { done: true, value: undefined };
        },
      };
    },
  };
}

/** The chat model traced, when telemetry runs; the model itself otherwise. */
export function tracedChatModel(model: ChatModel, definition: ModelDefinition): ChatModel {
  const rt = telemetry();
  if (rt === null) return model;
  const base = modelAttributes('chat', definition);
  return {
    async generate(request: GenerationRequest): Promise<GenerationResult> {
      const call = callOf(rt, base, request, false);
      try {
        const result = await call.within(() => model.generate(request));
        if (result.text !== '' || (result.toolCalls?.length ?? 0) > 0) call.contentSeen();
        call.succeeded(result.finishReason, result.usage, result.text);
        return result;
      } catch (error) {
        call.failed(error);
        throw error;
      }
    },
    stream: (request) => tracedStream(rt, base, model, request),
    countTokens: (messages) => model.countTokens(messages),
  };
}

/** The embedding model traced (`embeddings {model}`), when telemetry runs. */
export function tracedEmbeddingModel(
  model: EmbeddingModel,
  definition: ModelDefinition,
): EmbeddingModel {
  const rt = telemetry();
  if (rt === null) return model;
  const base = modelAttributes('embeddings', definition);
  const name = `embeddings ${String(base['gen_ai.request.model'])}`;
  return {
    async embed(texts, signal, attribution) {
      const attributes: Attributes = { ...base };
      if (attribution !== undefined) attributes['platform.account.id'] = attribution.accountId;
      const call = new GenAiCall(rt, name, attributes, base);
      try {
        const result = await call.within(() => model.embed(texts, signal, attribution));
        call.succeeded(null, { promptTokens: result.tokens, completionTokens: 0 });
        return result;
      } catch (error) {
        call.failed(error);
        throw error;
      }
    },
  };
}

/** A model call traced by hand (a pass-through that is no ChatModel): what its caller reports. */
export interface TracedCall {
  /** Runs `work` (that makes the call's HTTP requests) in the call's context. */
  within<T>(work: () => T): T;
  contentSeen(): void;
  succeeded(finishReason: string, usage: TokenUsage): void;
  failed(error: unknown): void;
}

/** Begins tracing one chat call of `definition`; null when telemetry does not run. */
export function traceChatCall(
  definition: ModelDefinition,
  request: ChatCallRequest,
  stream: boolean,
): TracedCall | null {
  const rt = telemetry();
  return rt === null ? null : callOf(rt, modelAttributes('chat', definition), request, stream);
}
