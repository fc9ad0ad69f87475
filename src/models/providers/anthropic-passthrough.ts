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
import { APICallError, JSONParseError } from '@ai-sdk/provider';
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
import { SseLines } from './sse-lines.js';
import { describeUpstreamFailure } from './upstream-failure.js';

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

/** One event of Anthropic's stream: its `event:` name and its parsed `data:`. */
export interface PassthroughEvent {
  readonly event: string;
  readonly data: Json;
}

/** Token counts as Anthropic reports them (input excludes the cache's reads and writes). */
interface AnthropicCounts {
  input: number;
  output: number;
  cacheRead: number | undefined;
  cacheCreation: number | undefined;
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;

/** Takes the counts a `usage` object reports, leaving the others as they were. */
function takeCounts(counts: AnthropicCounts, usage: unknown): void {
  if (!isObject(usage)) return;
  counts.input = count(usage.input_tokens) ?? counts.input;
  counts.output = count(usage.output_tokens) ?? counts.output;
  counts.cacheRead = count(usage.cache_read_input_tokens) ?? counts.cacheRead;
  counts.cacheCreation = count(usage.cache_creation_input_tokens) ?? counts.cacheCreation;
}

/** The platform's usage (OpenAI's reading: the prompt includes what the cache served). */
export function usageOfCounts(counts: AnthropicCounts): TokenUsage {
  const promptTokens = counts.input + (counts.cacheRead ?? 0) + (counts.cacheCreation ?? 0);
  return {
    promptTokens,
    completionTokens: counts.output,
    ...(counts.cacheRead === undefined ? {} : { cachedTokens: counts.cacheRead }),
    ...(counts.cacheCreation === undefined ? {} : { cacheWriteTokens: counts.cacheCreation }),
  };
}

const noCounts = (): AnthropicCounts => ({
  input: 0,
  output: 0,
  cacheRead: undefined,
  cacheCreation: undefined,
});

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

/** Reads Anthropic's Server-Sent Events as the socket delivers them: `event:` and `data:` lines. */
export class AnthropicEventReader {
  private readonly lines = new SseLines();
  private name: string | null = null;
  private data: string | null = null;

  /** The events this piece completed; throws on a line past the bound or data that is not JSON. */
  read(piece: string): PassthroughEvent[] {
    const events: PassthroughEvent[] = [];
    this.lines.split(piece, (line) => this.readLine(line, events));
    return events;
  }

  /** The last event, when the stream ended without the blank line after it. */
  end(): PassthroughEvent[] {
    const events: PassthroughEvent[] = [];
    this.lines.end((line) => this.readLine(line, events));
    return events;
  }

  private readLine(line: string, events: PassthroughEvent[]): void {
    if (line === '') {
      const { name, data } = this;
      this.name = null;
      this.data = null;
      if (data === null) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch (cause) {
        throw new JSONParseError({ text: data.slice(0, 200), cause });
      }
      if (!isObject(parsed) || typeof parsed.type !== 'string') {
        throw new JSONParseError({
          text: data.slice(0, 200),
          cause: new Error('An event is not an object with a type.'),
        });
      }
      events.push({ event: name ?? parsed.type, data: parsed });
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value =
      colon === -1
        ? ''
        : line.charCodeAt(colon + 1) === 32
          ? line.slice(colon + 2)
          : line.slice(colon + 1);
    if (field === 'event') this.name = value;
    else if (field === 'data') this.data = this.data === null ? value : `${this.data}\n${value}`;
  }
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
    try {
      const { connection } = this;
      const incoming = await connection.open(
        this.bodyOf(call),
        limits,
        this.definition.maxRetries,
        this.headersOf(call),
      );
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
      return { message, usage };
    } catch (error) {
      const described = this.explain(limits, error, 'request');
      this.failed(started, described, ticket);
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
    let incoming: IncomingMessage;
    try {
      incoming = await this.connection.open(
        this.bodyOf(call),
        limits,
        this.definition.maxRetries,
        this.headersOf(call),
      );
    } catch (error) {
      const described = this.explain(limits, error, 'request');
      limits.dispose();
      this.failed(started, described, ticket);
      throw described;
    }
    return this.events(incoming, limits, started, ticket);
  }

  private async *events(
    incoming: IncomingMessage,
    limits: CallLimits,
    started: number,
    ticket: MeterTicket,
  ): AsyncGenerator<PassthroughEvent> {
    const counts = noCounts();
    let finished = false;
    let reported = false;
    try {
      incoming.setEncoding('utf8');
      const reader = new AnthropicEventReader();
      const relay = (event: PassthroughEvent): PassthroughEvent => {
        const { data } = event;
        if (data.type === 'message_start' && isObject(data.message)) {
          takeCounts(counts, data.message.usage);
        } else if (data.type === 'message_delta') {
          takeCounts(counts, data.usage);
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
    } catch (error) {
      const described = this.explain(limits, error, 'stream');
      reported = true;
      // What the stream reported before it failed is what it used.
      this.failed(started, described, ticket, usageOfCounts(counts));
      throw described;
    } finally {
      // The consumer stopped before the end (after message_stop: the answer was whole), or the
      // client went away.
      if (!reported) {
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
