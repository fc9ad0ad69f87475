// Anthropic's Messages API passed through: a client's /v1/messages body sent to a model of the
// `anthropic` provider as the client wrote it — only `model` (the provider's id) and `max_tokens`
// (capped at the catalog's maximum) rewritten — and the answer or its events handed back as they
// came, parsed but not translated. The same lean path as OpenAI-compatible upstreams: the pooled
// keep-alive connection, its retries and time limits (./openai-compatible-connection.ts,
// ../upstream/), and failures mapped to the contract's errors as every provider's are
// (describeUpstreamFailure), but for a 400 of Anthropic's, whose message is about the client's
// own body and is relayed. Each call is reported to the model-call observer (the metrics) with
// the usage Anthropic metered, as the registry's models are.
import type { IncomingMessage } from 'node:http';
import { APICallError } from '@ai-sdk/provider';
import type { RemoteModelDefinition } from '../../config/config.js';
import { AppError } from '../../errors/app-error.js';
import type { ModelCallObserver, ModelCallRecord } from '../model-call-observer.js';
import {
  meteredUsageOf,
  noUsage,
  unmetered,
  type MeterTicket,
  type UsageMeter,
} from '../metering.js';
import {
  RequestAbortedError,
  UpstreamError,
  type CallAttribution,
  type TokenUsage,
} from '../spec.js';
import { CallLimits } from '../upstream/call-limits.js';
import { RetriesExhaustedError } from '../upstream/retry.js';
import { UpstreamConnection } from './openai-compatible-connection.js';
import { describeUpstreamFailure } from './upstream-failure.js';
import { traceChatCall, type TracedCall } from '../../telemetry/gen-ai-calls.js';
import {
  isObject,
  noCounts,
  takeCounts,
  usageOfCounts,
  AnthropicEventReader,
  type PassthroughEvent,
} from './anthropic-events.js';

export { AnthropicEventReader, usageOfCounts, type PassthroughEvent } from './anthropic-events.js';

/** Where provider `anthropic` is reached when its definition names no base URL. */
export const anthropicBaseUrl = 'https://api.anthropic.com/v1';

/** The API version sent when the client named none (Anthropic requires one). */
export const defaultAnthropicVersion = '2023-06-01';

/** Longest message of an Anthropic 400 relayed to the client. */
const maxRelayedMessageChars = 2000;

type Json = Record<string, unknown>;

/** One pass-through call: the client's body and headers, and its signal. */
export interface PassthroughCall {
  /** The client's body as it was parsed; `model` and `max_tokens` are rewritten, nothing else. */
  readonly body: Readonly<Json>;
  readonly maxTokens: number;
  /** The client's `anthropic-version` (default 2023-06-01) and `anthropic-beta`, forwarded. */
  readonly version: string | undefined;
  readonly beta: string | undefined;
  readonly signal: AbortSignal;
  /** Whose call it is (the usage ledger, budgets), and its input counted when a budget asks. */
  readonly attribution: CallAttribution;
  readonly countInput: () => Promise<number>;
}

/**
 * Anthropic's 400 (413, 422) refusing the client's own body, as a 400 relaying its message (the
 * client wrote what it refuses); null for any other failure, described as every provider's are,
 * without the provider's words.
 */
export function refusalOf(modelName: string, error: unknown): AppError | null {
  const last = error instanceof RetriesExhaustedError ? error.lastError : error;
  if (!APICallError.isInstance(last) || ![400, 413, 422].includes(last.statusCode ?? 0)) {
    return null;
  }
  let message: unknown;
  try {
    const body: unknown = JSON.parse(last.responseBody ?? '');
    message = isObject(body) && isObject(body.error) ? body.error.message : undefined;
  } catch {
    return null;
  }
  if (typeof message !== 'string') return null;
  return new AppError(
    'invalid_parameter',
    `Model '${modelName}' (Anthropic) refused the request: ${message.slice(0, maxRelayedMessageChars)}`,
    { cause: error },
  );
}

/** A model of the `anthropic` provider, spoken to in its own dialect. */
export class AnthropicPassthrough {
  private readonly connection: UpstreamConnection;

  constructor(
    private readonly definition: RemoteModelDefinition,
    apiKey: string | undefined,
    /** Told of every call (the service's metrics), as the registry's models report theirs. */
    private readonly observer?: ModelCallObserver,
    /** Meters every call (the usage ledger, budgets), as the registry's models are. */
    private readonly meter: UsageMeter = unmetered,
  ) {
    this.connection = new UpstreamConnection(definition.baseUrl ?? anthropicBaseUrl, apiKey, {
      path: '/messages',
      keyHeaders: (key) => ({ 'x-api-key': key }),
    });
  }

  /** The client's body (its `stream` too) with the provider's model id and the capped limit. */
  private bodyOf(call: PassthroughCall): string {
    return JSON.stringify({
      ...call.body,
      model: this.definition.model,
      max_tokens: call.maxTokens,
    });
  }

  private headersOf(call: PassthroughCall): Record<string, string> {
    return {
      'anthropic-version': call.version ?? defaultAnthropicVersion,
      ...(call.beta === undefined ? {} : { 'anthropic-beta': call.beta }),
    };
  }

  private report(
    started: number,
    record: Omit<ModelCallRecord, 'model' | 'kind' | 'seconds'>,
    ticket: MeterTicket,
    counted?: TokenUsage,
  ) {
    const seconds = (performance.now() - started) / 1000;
    this.observer?.modelCall({ model: this.definition.name, kind: 'chat', seconds, ...record });
    const usage = record.usage ?? counted;
    ticket.end({
      status: record.outcome,
      errorCode: record.errorCode ?? null,
      usage: usage === undefined ? noUsage : meteredUsageOf(usage),
      latencyMs: seconds * 1000,
    });
  }

  /** The call's GenAI span (when telemetry runs), from the client's own body. */
  private traced(call: PassthroughCall, stream: boolean): TracedCall | null {
    const { body } = call;
    const number = (value: unknown) => (typeof value === 'number' ? value : undefined);
    const stop = body.stop_sequences;
    return traceChatCall(
      this.definition,
      {
        maxTokens: call.maxTokens,
        temperature: number(body.temperature),
        params: {
          top_p: number(body.top_p),
          ...(Array.isArray(stop) ? { stop: stop.map(String) } : {}),
        },
        attribution: call.attribution,
      },
      stream,
    );
  }

  /** The meter's ticket for a call: its budgets reserved (a refusal throws, nothing sent). */
  private ticket(call: PassthroughCall): Promise<MeterTicket> {
    return this.meter.start({
      definition: this.definition,
      attribution: call.attribution,
      worstCase: async () => ({
        ...noUsage,
        inputTokens: await call.countInput(),
        outputTokens: call.maxTokens,
      }),
    });
  }

  /** What a failed call is reported as: the client's refusal, a deadline, or the provider's failure. */
  private explain(limits: CallLimits, error: unknown, phase: 'request' | 'stream'): Error {
    if (error instanceof AppError) return error;
    return (
      refusalOf(this.definition.name, error) ??
      limits.explain(error, (cause) => describeUpstreamFailure(this.definition.name, cause, phase))
    );
  }

  private failed(started: number, error: unknown, ticket: MeterTicket, counted?: TokenUsage): void {
    if (error instanceof RequestAbortedError) {
      this.report(started, { outcome: 'aborted' }, ticket, counted);
    } else {
      const errorCode = error instanceof AppError ? error.code : 'internal_error';
      this.report(started, { outcome: 'error', errorCode }, ticket, counted);
    }
  }

  /** A whole answer: Anthropic's message object as it came, and the usage it reports. */
  async create(call: PassthroughCall): Promise<{ message: Json; usage: TokenUsage }> {
    const ticket = await this.ticket(call);
    const started = performance.now();
    const limits = new CallLimits(call.signal, this.definition.timeoutMs, null);
    const trace = this.traced(call, false);
    try {
      const { connection } = this;
      const open = () =>
        connection.open(
          this.bodyOf(call),
          limits,
          this.definition.maxRetries,
          this.headersOf(call),
        );
      const incoming = await (trace === null ? open() : trace.within(open));
      const raw = await connection.readWhole(incoming);
      let message: unknown;
      try {
        message = JSON.parse(raw);
      } catch (cause) {
        throw connection.unreadable(incoming, raw, cause as Error);
      }
      if (!isObject(message) || message.type !== 'message' || !Array.isArray(message.content)) {
        throw connection.unreadable(incoming, raw, new Error('The answer is not a message.'));
      }
      const counts = noCounts();
      takeCounts(counts, message.usage);
      const usage = usageOfCounts(counts);
      this.report(started, { outcome: 'ok', usage }, ticket);
      const reason = message.stop_reason;
      trace?.succeeded(typeof reason === 'string' ? reason : 'end_turn', usage);
      return { message, usage };
    } catch (error) {
      const described = this.explain(limits, error, 'request');
      this.failed(started, described, ticket);
      trace?.failed(described);
      throw described;
    } finally {
      limits.dispose();
    }
  }

  /**
   * Opens a streamed answer: a failure to open throws (answered as an HTTP error); once open,
   * the events come as Anthropic sent them, up to `message_stop`, and a failure after that is
   * thrown by the iterator (an UpstreamError: the caller ends the stream with an error event).
   */
  async openStream(call: PassthroughCall): Promise<AsyncGenerator<PassthroughEvent>> {
    const ticket = await this.ticket(call);
    const started = performance.now();
    const limits = new CallLimits(
      call.signal,
      this.definition.timeoutMs,
      this.definition.idleTimeoutMs,
    );
    const trace = this.traced(call, true);
    let incoming: IncomingMessage;
    try {
      const open = () =>
        this.connection.open(
          this.bodyOf(call),
          limits,
          this.definition.maxRetries,
          this.headersOf(call),
        );
      incoming = await (trace === null ? open() : trace.within(open));
    } catch (error) {
      const described = this.explain(limits, error, 'request');
      limits.dispose();
      this.failed(started, described, ticket);
      trace?.failed(described);
      throw described;
    }
    return this.events(incoming, limits, started, ticket, trace);
  }

  private async *events(
    incoming: IncomingMessage,
    limits: CallLimits,
    started: number,
    ticket: MeterTicket,
    trace: TracedCall | null,
  ): AsyncGenerator<PassthroughEvent> {
    const counts = noCounts();
    let stopReason = 'end_turn';
    let finished = false;
    let reported = false;
    try {
      incoming.setEncoding('utf8');
      const reader = new AnthropicEventReader();
      const relay = (event: PassthroughEvent): PassthroughEvent => {
        const { data } = event;
        if (data.type === 'message_start' && isObject(data.message)) {
          takeCounts(counts, data.message.usage);
        } else if (data.type === 'content_block_start') {
          trace?.contentSeen();
        } else if (data.type === 'message_delta') {
          takeCounts(counts, data.usage);
          if (isObject(data.delta) && typeof data.delta.stop_reason === 'string') {
            stopReason = data.delta.stop_reason;
          }
        } else if (data.type === 'error') {
          const type = isObject(data.error) ? String(data.error.type) : 'error';
          throw new UpstreamError(
            'upstream_error',
            `The provider of model '${this.definition.name}' reported an error mid-answer (${type.slice(0, 64)}); the answer is incomplete.`,
            { cause: new Error(JSON.stringify(data).slice(0, 2000)) },
          );
        } else if (data.type === 'message_stop') finished = true;
        return event;
      };
      // Read to the end of the answer (nothing follows message_stop), so that the connection
      // is reused; what could follow it is not relayed.
      for await (const piece of incoming) {
        limits.touch();
        for (const event of reader.read(piece as string)) {
          if (!finished) yield relay(event);
        }
      }
      for (const event of reader.end()) if (!finished) yield relay(event);
      if (!finished) throw new Error('The stream ended before message_stop.');
      reported = true;
      this.report(started, { outcome: 'ok', usage: usageOfCounts(counts) }, ticket);
      trace?.succeeded(stopReason, usageOfCounts(counts));
    } catch (error) {
      const described = this.explain(limits, error, 'stream');
      reported = true;
      // What the stream reported before it failed is what it used.
      this.failed(started, described, ticket, usageOfCounts(counts));
      trace?.failed(described);
      throw described;
    } finally {
      // The consumer stopped before the end (after message_stop: the answer was whole), or the
      // client went away.
      if (!reported) {
        if (finished) trace?.succeeded(stopReason, usageOfCounts(counts));
        else trace?.failed(new RequestAbortedError());
        this.report(
          started,
          finished ? { outcome: 'ok', usage: usageOfCounts(counts) } : { outcome: 'aborted' },
          ticket,
          usageOfCounts(counts),
        );
      }
      limits.dispose();
      if (!incoming.readableEnded) incoming.destroy();
    }
  }
}
