// The lean path for OpenAI-compatible upstreams (vLLM, llama.cpp, Ollama, LM Studio, Groq…): the
// Chat Completions request is written straight from the turns with the upstream's model id, sent
// over a pooled keep-alive connection (node:http/https), and the answer is read without fetch
// emulation or web streams — a JSON answer parsed once, a streamed one split into SSE lines as
// the socket delivers them, with text, finish reason and usage picked out and the shape checked
// by hand. Failures become the same APICallErrors the AI SDK raises, so retries (./retry.ts) and
// the mapping to the contract's errors (describeUpstreamFailure) are shared with the other
// providers. Structured output (a response schema) still goes through the AI SDK model.
import http, { type ClientRequest, type IncomingMessage } from 'node:http';
import https from 'node:https';
import {
  APICallError,
  JSONParseError,
  TypeValidationError,
  type LanguageModelV3,
} from '@ai-sdk/provider';
import type { RemoteModelDefinition } from '../../config/config.js';
import type { BpeTokenCounter } from '../bpe-token-counter.js';
import type { UpstreamError } from '../spec.js';
import {
  RequestAbortedError,
  type ChatModel,
  type ChatTurn,
  type FinishReason,
  type GenerationRequest,
  type GenerationResult,
  type StreamPart,
} from '../spec.js';
import { AiSdkChatModel, describeUpstreamFailure } from './ai-sdk-chat-model.js';
import { keepAliveAgents } from './keep-alive-fetch.js';
import { explainDeadlineFailure } from './deadline-failure.js';
import { RetriesExhaustedError, retryWaitMs } from './retry.js';

/** OpenAI's finish reasons as the service names them (a refusal is a content filter). */
function finishReasonOf(raw: unknown, refused: boolean): FinishReason {
  if (raw === 'stop') return refused ? 'content_filter' : 'stop';
  if (raw === 'length') return 'length';
  if (raw === 'content_filter') return 'content_filter';
  return 'other';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The text of a message or delta `content`: a string, or the text parts of an array. */
function contentText(content: unknown): string | undefined {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  let text = '';
  for (const part of content as unknown[]) {
    if (!isObject(part) || typeof part.type !== 'string') return undefined;
    if (part.type === 'text' && typeof part.text === 'string') text += part.text;
  }
  return text;
}

function optionalNumber(value: unknown): number | undefined | null {
  if (value === null || value === undefined) return undefined;
  return typeof value === 'number' ? value : null;
}

interface UsageCounts {
  promptTokens: number | undefined;
  completionTokens: number | undefined;
}

/** `usage` as sent, or null when it is present but not in OpenAI's shape. */
function usageOf(value: unknown): UsageCounts | null {
  if (value === null || value === undefined) {
    return { promptTokens: undefined, completionTokens: undefined };
  }
  if (!isObject(value)) return null;
  const promptTokens = optionalNumber(value.prompt_tokens);
  const completionTokens = optionalNumber(value.completion_tokens);
  if (promptTokens === null || completionTokens === null) return null;
  return { promptTokens, completionTokens };
}

function invalidShape(value: unknown, message: string): TypeValidationError {
  return new TypeValidationError({ value, cause: new Error(message) });
}

function headerRecord(incoming: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** Largest whole (not streamed) answer read; a larger one is refused, not buffered. */
export const maxAnswerBytes = 16 * 1024 * 1024;
/** Longest line of a streamed answer; a longer one is an invalid chunk (it is never buffered whole). */
export const maxStreamLineChars = 1024 * 1024;
/** How much of an error answer is kept (for the log; the client never sees it). */
const maxErrorBodyBytes = 64 * 1024;

/**
 * One call's time limits and cancellation, without an AbortController of its own: the total and
 * idle timers and the client's signal destroy the upstream request in flight (or end a retry's
 * wait), and `explain` says afterwards which of them it was.
 */
class CallLimits {
  private readonly totalTimer: NodeJS.Timeout;
  private idleTimer: NodeJS.Timeout | undefined;
  private timedOut: 'total' | 'idle' | null = null;
  private current: ClientRequest | null = null;
  private wake: (() => void) | null = null;
  private listening = false;

  constructor(
    private readonly clientSignal: AbortSignal,
    private readonly totalMs: number,
    private readonly idleMs: number | null,
  ) {
    this.totalTimer = setTimeout(() => this.stop('total'), totalMs);
    this.touch();
  }

  /** True once the client left or a limit passed: nothing more is to be sent upstream. */
  get stopped(): boolean {
    return this.timedOut !== null || this.clientSignal.aborted;
  }

  private readonly onClientAbort = () => this.stop(null);

  private stop(which: 'total' | 'idle' | null): void {
    if (which !== null) this.timedOut ??= which;
    this.current?.destroy(new RequestAbortedError());
    this.wake?.();
  }

  /** Whether a time limit (not the client) stopped the call. */
  get timedOutNow(): boolean {
    return this.timedOut !== null && !this.clientSignal.aborted;
  }

  /** The request now in flight, destroyed if a limit passes or the client leaves. */
  attach(request: ClientRequest): void {
    this.current = request;
    this.touch();
    if (!this.listening) {
      this.listening = true;
      this.clientSignal.addEventListener('abort', this.onClientAbort, { once: true });
    }
    if (this.stopped) request.destroy(new RequestAbortedError());
  }

  /** The model just sent something: its silence starts again. */
  touch(): void {
    if (this.idleMs === null) return;
    // One timer for the whole call, pushed back rather than replaced.
    if (this.idleTimer === undefined) {
      this.idleTimer = setTimeout(() => this.stop('idle'), this.idleMs);
    } else this.idleTimer.refresh();
  }

  /**
   * Waits between retries; ends early (rejecting) when the call is stopped. The service's own
   * waiting is not the model's silence: the idle timer stops meanwhile and starts afresh with the
   * next attempt (`attach`).
   */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.stopped) {
        reject(new RequestAbortedError());
        return;
      }
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        reject(new RequestAbortedError());
      };
      if (!this.listening) {
        this.listening = true;
        this.clientSignal.addEventListener('abort', this.onClientAbort, { once: true });
      }
    });
  }

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

  dispose(): void {
    clearTimeout(this.totalTimer);
    clearTimeout(this.idleTimer);
    if (this.listening) this.clientSignal.removeEventListener('abort', this.onClientAbort);
  }
}

/**
 * The whole body of an answer, refused past `maxAnswerBytes` without reading further. Read with
 * events rather than an async iterator, which costs more per call than the body takes to read.
 */
function readAnswer(incoming: IncomingMessage, tooLarge: () => Error): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      if (error === null) resolve(Buffer.concat(parts, size));
      else reject(error);
    };
    incoming.on('data', (part: Buffer) => {
      if (settled) return;
      size += part.length;
      if (size > maxAnswerBytes) {
        incoming.destroy();
        settle(tooLarge());
        return;
      }
      parts.push(part);
    });
    incoming.once('end', () => settle(null));
    incoming.once('error', settle);
    // Closed before its end (the connection was cut or the call stopped): 'end' never comes.
    incoming.once('close', () => settle(new Error('The answer was cut short.')));
  });
}

/** What the stream parser took from the events so far. */
interface StreamState {
  finishRaw: unknown;
  refused: boolean;
  usage: UsageCounts;
  /** Text of SSE `data:` lines of the event being read (events end at a blank line). */
  data: string | null;
  /** An event that could not be read: raised once the text before it has been passed on. */
  failure: Error | null;
}

export class OpenAiCompatibleChatModel implements ChatModel {
  private readonly client: typeof http | typeof https;
  private readonly agent: http.Agent;
  private readonly requestOptions: http.RequestOptions;
  private readonly url: string;

  constructor(
    private readonly definition: RemoteModelDefinition,
    apiKey: string | undefined,
    private readonly tokens: BpeTokenCounter,
    /** Builds the AI SDK model for what this path does not do (structured output). */
    private readonly sdkModel: () => Promise<LanguageModelV3>,
  ) {
    const base = (definition.baseUrl ?? '').replace(/\/+$/, '');
    this.url = `${base}/chat/completions`;
    const url = new URL(this.url);
    const secure = url.protocol === 'https:';
    this.client = secure ? https : http;
    this.agent = secure ? keepAliveAgents['https:'] : keepAliveAgents['http:'];
    this.requestOptions = {
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
      path: `${url.pathname}${url.search}`,
      agent: this.agent,
      headers: {
        'content-type': 'application/json',
        // Compressed answers would need decoding; plain ones are relayed as they come.
        'accept-encoding': 'identity',
        ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }),
      },
    };
  }

  private sdk: AiSdkChatModel | undefined;

  private structured(): AiSdkChatModel {
    this.sdk ??= new AiSdkChatModel(this.definition, this.sdkModel, this.tokens);
    return this.sdk;
  }

  private body(request: GenerationRequest, stream: boolean): string {
    const messages = request.messages.map((turn) => ({ role: turn.role, content: turn.content }));
    return JSON.stringify({
      model: this.definition.model,
      max_tokens: request.maxTokens,
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      messages,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    });
  }

  /** One attempt: resolves with the answer's head on 2xx, rejects with an APICallError else. */
  private send(body: string, limits: CallLimits): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const outgoing = this.client.request(
        {
          ...this.requestOptions,
          headers: { ...this.requestOptions.headers, 'content-length': Buffer.byteLength(body) },
        },
        (incoming) => {
          const status = incoming.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            resolve(incoming);
            return;
          }
          const parts: Buffer[] = [];
          let kept = 0;
          incoming.on('data', (part: Buffer) => {
            // The rest is read and dropped, so the connection can be reused.
            if (kept >= maxErrorBodyBytes) return;
            parts.push(part.subarray(0, maxErrorBodyBytes - kept));
            kept += Math.min(part.length, maxErrorBodyBytes - kept);
          });
          incoming.on('error', reject);
          // Cut before its end: the 'end' below never comes.
          incoming.on('close', () => reject(new Error('The error answer was cut short.')));
          incoming.on('end', () => {
            reject(
              new APICallError({
                message: `HTTP ${status}`,
                url: this.url,
                requestBodyValues: {},
                statusCode: status,
                responseHeaders: headerRecord(incoming),
                responseBody: Buffer.concat(parts).toString('utf8'),
              }),
            );
          });
        },
      );
      outgoing.on('error', (error: Error) => {
        if (limits.stopped) {
          reject(error);
          return;
        }
        // The AI SDK's reading of an unreachable server: retryable, no status.
        reject(
          new APICallError({
            message: `Cannot connect to API: ${error.message}`,
            url: this.url,
            requestBodyValues: {},
            cause: error,
            isRetryable: true,
          }),
        );
      });
      limits.attach(outgoing);
      outgoing.end(body);
    });
  }

  /** Opens the answer, retrying as ./retry.ts does (408, 409, 429, 5xx, unreachable). */
  private async open(body: string, limits: CallLimits): Promise<IncomingMessage> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.send(body, limits);
      } catch (error) {
        const retryable = APICallError.isInstance(error) && error.isRetryable;
        if (!retryable || limits.stopped) {
          throw attempt === 0 ? error : new RetriesExhaustedError(error, attempt + 1);
        }
        if (attempt >= this.definition.maxRetries) {
          throw new RetriesExhaustedError(error, attempt + 1);
        }
        try {
          await limits.sleep(retryWaitMs(error, attempt));
        } catch (interrupted) {
          // A time limit ending the wait is not the model timing out: what failed is still the
          // provider's last answer (reported as such, streamed or not).
          if (limits.timedOutNow) throw new RetriesExhaustedError(error, attempt + 1, true);
          throw interrupted;
        }
      }
    }
  }

  async generate(request: GenerationRequest): Promise<GenerationResult> {
    if (request.responseSchema !== undefined) return this.structured().generate(request);
    const limits = new CallLimits(request.signal, this.definition.timeoutMs, null);
    try {
      const incoming = await this.open(this.body(request, false), limits);
      const raw = (
        await readAnswer(incoming, () =>
          this.unreadable(
            incoming,
            '',
            new Error(`The answer is larger than ${maxAnswerBytes} bytes.`),
          ),
        )
      ).toString('utf8');
      let answer: unknown;
      try {
        answer = JSON.parse(raw);
      } catch (cause) {
        throw this.unreadable(incoming, raw, new JSONParseError({ text: raw, cause }));
      }
      const choices = isObject(answer) ? answer.choices : undefined;
      const usage = isObject(answer) ? usageOf(answer.usage) : null;
      if (!Array.isArray(choices) || usage === null) {
        throw this.unreadable(incoming, raw, invalidShape(answer, 'not a chat.completion'));
      }
      const choice: unknown = choices[0];
      if (choice === undefined) throw new Error('Response did not contain any choices.');
      const message = isObject(choice) ? choice.message : undefined;
      const content = isObject(message) ? contentText(message.content) : undefined;
      const refusal = isObject(message) ? message.refusal : undefined;
      if (content === undefined || !isObject(choice)) {
        throw this.unreadable(incoming, raw, invalidShape(answer, 'not a chat.completion'));
      }
      const refused = typeof refusal === 'string' && refusal.length > 0;
      const text = refused ? content + refusal : content;
      return {
        text,
        finishReason: finishReasonOf(choice.finish_reason, refused),
        usage: {
          promptTokens: usage.promptTokens ?? (await this.countTokens(request.messages)),
          completionTokens: usage.completionTokens ?? (await this.tokens.countText(text)),
        },
      };
    } catch (error) {
      throw limits.explain(error, (cause) => describeUpstreamFailure(this.definition.name, cause));
    } finally {
      limits.dispose();
    }
  }

  /** A 2xx answer whose body cannot be read, as the AI SDK reports it. */
  private unreadable(incoming: IncomingMessage, raw: string, cause: Error): APICallError {
    return new APICallError({
      message: 'Invalid JSON response',
      url: this.url,
      requestBodyValues: {},
      statusCode: incoming.statusCode ?? 200,
      responseHeaders: headerRecord(incoming),
      responseBody: raw,
      cause,
      isRetryable: false,
    });
  }

  async *stream(request: GenerationRequest): AsyncIterable<StreamPart> {
    if (request.responseSchema !== undefined) {
      yield* this.structured().stream(request);
      return;
    }
    const limits = new CallLimits(
      request.signal,
      this.definition.timeoutMs,
      this.definition.idleTimeoutMs,
    );
    let incoming: IncomingMessage | undefined;
    let finished = false;
    let phase: 'request' | 'stream' = 'request';
    let text = '';
    try {
      incoming = await this.open(this.body(request, true), limits);
      phase = 'stream';
      incoming.setEncoding('utf8');
      const state: StreamState = {
        finishRaw: undefined,
        refused: false,
        usage: { promptTokens: undefined, completionTokens: undefined },
        data: null,
        failure: null,
      };
      let rest = '';
      const texts: string[] = [];
      for await (const chunk of incoming) {
        limits.touch();
        const received = rest + (chunk as string);
        let start = 0;
        // `rest` holds no line end: look only at what arrived (no rescan of a long line).
        for (
          let end = received.indexOf('\n', rest.length);
          end !== -1 && state.failure === null;
          end = received.indexOf('\n', start)
        ) {
          const line =
            end > start && received.charCodeAt(end - 1) === 13
              ? received.slice(start, end - 1)
              : received.slice(start, end);
          start = end + 1;
          this.readLine(line, state, texts);
        }
        rest = received.slice(start);
        if (rest.length > maxStreamLineChars) {
          throw new JSONParseError({
            text: rest.slice(0, 200),
            cause: new Error(
              `A line of the stream is longer than ${maxStreamLineChars} characters.`,
            ),
          });
        }
        for (const delta of texts) {
          text += delta;
          yield { type: 'text', text: delta };
        }
        texts.length = 0;
        if (state.failure !== null) throw state.failure;
      }
      // A last event not followed by a blank line still counts.
      if (rest !== '') this.readLine(rest, state, texts);
      this.readLine('', state, texts);
      for (const delta of texts) {
        text += delta;
        yield { type: 'text', text: delta };
      }
      if (state.failure !== null) throw state.failure;
      finished = true;
      if (state.finishRaw === undefined || state.finishRaw === null) {
        throw new Error('Response stream ended without a finish reason.');
      }
      yield {
        type: 'finish',
        finishReason: finishReasonOf(state.finishRaw, state.refused),
        usage: {
          promptTokens: state.usage.promptTokens ?? (await this.countTokens(request.messages)),
          completionTokens: state.usage.completionTokens ?? (await this.tokens.countText(text)),
        },
      };
    } catch (error) {
      throw limits.explain(error, (cause) =>
        describeUpstreamFailure(this.definition.name, cause, phase),
      );
    } finally {
      limits.dispose();
      // The consumer stopped early or the stream failed: the connection is not reused.
      if (!finished) incoming?.destroy();
    }
  }

  /** One SSE line: `data:` lines gather into the event a blank line ends. */
  private readLine(line: string, state: StreamState, texts: string[]): void {
    if (line === '') {
      const data = state.data;
      state.data = null;
      if (data === null || data === '[DONE]' || state.failure !== null) return;
      try {
        this.readEvent(data, state, texts);
      } catch (error) {
        state.failure = error as Error;
      }
      return;
    }
    if (!line.startsWith('data:')) return;
    const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    state.data = state.data === null ? value : `${state.data}\n${value}`;
  }

  private readEvent(data: string, state: StreamState, texts: string[]): void {
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch (cause) {
      throw new JSONParseError({ text: data, cause });
    }
    if (!isObject(event)) throw invalidShape(event, 'not a chat.completion.chunk');
    if (isObject(event.error)) {
      throw new Error(`The provider reported an error mid-stream.`, { cause: event.error });
    }
    const { choices } = event;
    const usage = usageOf(event.usage);
    if (!Array.isArray(choices) || usage === null) {
      throw invalidShape(event, 'not a chat.completion.chunk');
    }
    if (event.usage !== undefined && event.usage !== null) state.usage = usage;
    const choice: unknown = choices[0];
    if (choice === undefined) return;
    if (!isObject(choice)) throw invalidShape(event, 'not a chat.completion.chunk');
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
      if (typeof choice.finish_reason !== 'string') {
        throw invalidShape(event, 'finish_reason is not a string');
      }
      state.finishRaw = choice.finish_reason;
    }
    const delta = choice.delta;
    if (delta === undefined || delta === null) return;
    if (!isObject(delta)) throw invalidShape(event, 'delta is not an object');
    const content = contentText(delta.content);
    if (content === undefined) throw invalidShape(event, 'content is not text');
    if (content !== '') texts.push(content);
    if (typeof delta.refusal === 'string' && delta.refusal.length > 0) {
      state.refused = true;
      texts.push(delta.refusal);
    }
  }

  countTokens(messages: readonly ChatTurn[]): Promise<number> {
    return this.tokens.countMessages(messages);
  }
}
