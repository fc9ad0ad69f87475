// A scriptable fake OpenAI API on node:http, in its real wire format, for tests and benchmarks.
import { randomBytes } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** Token counts as OpenAI puts them on the wire. */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** A normal answer. Embeddings and model listings ignore every field but `kind`. */
export interface ReplyBehaviour {
  kind: 'reply';
  /** Defaults to `Echo: <text of the last user message>`, or the joined `chunks` when given. */
  content?: string;
  /** Defaults to `length` when `max_tokens` truncated the reply, else `stop`. */
  finishReason?: FinishReason;
  /** Overrides the computed counts; `total_tokens` defaults to the sum of the other two. */
  usage?: Partial<TokenUsage>;
  /** The exact content deltas of a streamed answer, used as given unless `max_tokens` cuts in. */
  chunks?: string[];
  /**
   * Function calls the answer makes (`message.tool_calls`, finish reason `tool_calls`, content null
   * unless `content` or `chunks` is given). Streamed as OpenAI streams them: per call a first delta
   * with its index, id, type and name (arguments ''), then its arguments in several fragments.
   */
  toolCalls?: Array<{ id?: string; name: string; arguments: string }>;
  /** A refusal (`message.refusal`, content null unless given), streamed word by word. */
  refusal?: string;
  /** Overrides `prompt_tokens_details.cached_tokens` and `completion_tokens_details.reasoning_tokens`. */
  usageDetails?: { cached_tokens?: number; reasoning_tokens?: number };
  /** Overrides the `system_fingerprint` of the answer and of every chunk. */
  systemFingerprint?: string;
  /**
   * Whether a request asking `logprobs: true` gets them (`choice.logprobs`, per content delta when
   * streamed). Default true, as OpenAI does.
   */
  logprobs?: boolean;
  /**
   * Streaming: sends this many events (the first, with the role, counted), then keeps the response
   * open, sending nothing more, until the client goes away: an answer still in progress for as
   * long as a test needs one, however slowly the machine runs.
   */
  holdAfterChunks?: number;
  /** Streaming: `false` sends no usage chunk even when asked (a server without `include_usage`). */
  streamUsage?: boolean;
}

/** An HTTP error; `body` defaults to OpenAI's error shape for `status`, a string is sent as is. */
export interface ErrorBehaviour {
  kind: 'error';
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Waits, then behaves as `then` (else the default behaviour); gives up if the client leaves. */
export interface DelayBehaviour {
  kind: 'delay';
  ms: number;
  then?: UpstreamBehaviour;
}

/** Streaming: sends `afterChunks` SSE events, then destroys the socket; otherwise destroys it. */
export interface CutBehaviour {
  kind: 'cut';
  afterChunks: number;
}

/** Accepts the request and never answers, until the client goes away. */
export interface HangBehaviour {
  kind: 'hang';
}

/**
 * A broken answer with status 200: not streaming, the JSON body cut in half; streaming,
 * `afterChunks` good events, then one whose data is not JSON, then the rest.
 */
export interface MalformedBehaviour {
  kind: 'malformed';
  afterChunks: number;
}

export type UpstreamBehaviour =
  | ReplyBehaviour
  | ErrorBehaviour
  | DelayBehaviour
  | CutBehaviour
  | HangBehaviour
  | MalformedBehaviour;

export type UpstreamEndpoint = 'chat' | 'embeddings' | 'models';

/** `aborted`: the client closed the connection before the response ended; `cut`: the fake did. */
export type RequestOutcome = 'pending' | 'answered' | 'aborted' | 'cut';

export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; the raw text when it was not JSON; undefined when empty. */
  body: unknown;
  /** The body's text as received ('' when empty), for byte-for-byte comparisons. */
  rawBody: string;
  /** The bearer token of the Authorization header. */
  apiKey: string | undefined;
  endpoint: UpstreamEndpoint | undefined;
  /** Whether the body asked for `stream: true`. */
  stream: boolean;
  /** Epoch milliseconds. */
  receivedAt: number;
  finishedAt: number | undefined;
  /** The behaviour that answered (undefined for 401/404/400 answered before any behaviour). */
  behaviour: UpstreamBehaviour | undefined;
  status: number | undefined;
  /** SSE events written, `data: [DONE]` included. */
  chunksSent: number;
  outcome: RequestOutcome;
  aborted: boolean;
}

export interface FakeUpstreamOptions {
  /** Answers every request no scripted behaviour claims. Default `{ kind: 'reply' }`. */
  defaultBehaviour?: UpstreamBehaviour;
  /** Wait before every behaviour starts answering (time to first token). Default 0. */
  latencyMs?: number;
  /** Wait between streamed events after the first content delta. Default 0. */
  chunkDelayMs?: number;
  /** Words per content delta when the fake splits a reply for streaming. Default 1. */
  wordsPerChunk?: number;
  /** Embedding size when the request names no `dimensions`. Default 64. */
  embeddingDimensions?: number;
  /** What `GET /v1/models` lists. */
  models?: string[];
  /** When set, requests without `Authorization: Bearer <this>` get OpenAI's 401. */
  requireApiKey?: string;
  /** Keep every request in `requests`. Default true; long benchmarks may turn it off. */
  recordRequests?: boolean;
  /** Pad stream chunks with an `obfuscation` field, as the real API does unless told not to. */
  obfuscation?: boolean;
  /**
   * Answer a request whose `tool_choice` names a function with a call to it (when nothing else
   * was scripted), as a model would; the documentation's examples rely on it. Default false.
   */
  callNamedTools?: boolean;
  /**
   * Answer a request that offers tools, and whose last message is not a tool's result, with a call
   * to the first tool offered (when nothing else was scripted), as a tool-using model's first turn
   * would; the request that brings the result gets the usual reply. For benchmarks, whose traffic
   * cannot script each request. Default false.
   */
  callOfferedTools?: boolean;
  /** Default 0, an ephemeral port. */
  port?: number;
}

export interface FakeUpstream {
  /** E.g. `http://127.0.0.1:41234/v1`, what OpenAI clients take as their base URL. */
  readonly baseUrl: string;
  readonly port: number;
  /** Requests received so far, in arrival order (after their bodies were read). */
  readonly requests: readonly RecordedRequest[];
  /** Scripted behaviours not yet consumed. */
  readonly pendingBehaviours: number;
  /** One-shot behaviours for the next requests, in order, whatever their endpoint. */
  enqueue(...behaviours: UpstreamBehaviour[]): void;
  /** One-shot behaviours only requests to `endpoint` consume. */
  enqueueFor(endpoint: UpstreamEndpoint, ...behaviours: UpstreamBehaviour[]): void;
  setDefaultBehaviour(behaviour: UpstreamBehaviour): void;
  /** Resolves once `count` requests were received (even when recording is off). */
  waitForRequests(count: number, timeoutMs?: number): Promise<readonly RecordedRequest[]>;
  /** Resolves once no request is in flight, so that `aborted` and `outcome` are final. */
  settled(timeoutMs?: number): Promise<void>;
  /** Forgets recorded requests and scripted behaviours, and restores the default behaviour. */
  reset(): void;
  close(): Promise<void>;
}

export const defaultModels = ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'];

const systemFingerprint = 'fp_fakeupstream';
const obfuscationPadding = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** The fake's notion of a token: a word, with the whitespace before it. */
const wordPattern = /\s*\S+(?:\s+$)?/g;

function words(text: string): string[] {
  return text.match(wordPattern) ?? [];
}

/** Token count the fake reports for `text`: its number of whitespace-separated words. */
export function countTokens(text: string): number {
  return words(text).length;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The fake's embedding of `text`: a signed, hashed bag of its lower-cased words, normalised to unit
 * length, so that texts sharing words have a high cosine similarity. Components are float32 values,
 * so JSON and base64 answers decode to the same numbers.
 */
export function fakeEmbedding(text: string, dimensions = 64): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const terms = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [text];
  for (const term of terms) {
    const hash = fnv1a(term);
    vector[hash % dimensions]! += hash & 0x80000000 ? -1 : 1;
  }
  const norm = Math.hypot(...vector);
  return vector.map((component) => Math.fround(norm === 0 ? 0 : component / norm));
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** OpenAI's error body, with the message, type and code it uses for common statuses. */
export function openAIErrorBody(
  status: number,
  overrides: Partial<OpenAIErrorBody['error']> = {},
): OpenAIErrorBody {
  const defaults: Record<number, OpenAIErrorBody['error']> = {
    400: { message: 'Invalid request.', type: 'invalid_request_error', param: null, code: null },
    401: {
      message: 'Incorrect API key provided.',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    },
    403: {
      message: 'You are not allowed to sample from this model.',
      type: 'invalid_request_error',
      param: null,
      code: null,
    },
    404: {
      message: 'The requested resource does not exist.',
      type: 'invalid_request_error',
      param: null,
      code: null,
    },
    429: {
      message: 'Rate limit reached for requests. Please try again later.',
      type: 'requests',
      param: null,
      code: 'rate_limit_exceeded',
    },
    500: {
      message: 'The server had an error while processing your request. Sorry about that!',
      type: 'server_error',
      param: null,
      code: null,
    },
    503: {
      message: 'The server is overloaded or not ready yet.',
      type: 'server_error',
      param: null,
      code: null,
    },
  };
  const fallback = defaults[status] ??
    defaults[status >= 500 ? 500 : 400] ?? {
      message: 'Error.',
      type: 'invalid_request_error',
      param: null,
      code: null,
    };
  return { error: { ...fallback, ...overrides } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The text of a message's `content`: a string, or the text parts of an array of parts. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text !== '')
    .join(' ');
}

function positiveInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}

/** Resolves once `data` reached the socket, so that a cut after it cannot drop it. */
function writeFlushed(response: ServerResponse, data: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    signal.addEventListener('abort', () => resolve(), { once: true });
    response.write(data, () => resolve());
  });
}

const requiredFields: Record<UpstreamEndpoint, string[]> = {
  chat: ['model', 'messages'],
  embeddings: ['model', 'input'],
  models: [],
};

/** The texts of an embeddings `input`: a string, strings, or token ids (one or several lists). */
/**
 * Like a real model, a reply to a request whose `tool_choice` names a function calls it (when no
 * tool calls or content were scripted): its required string arguments set to "example", so the
 * documentation's tool examples show a real call.
 */
function forcedCallOf(body: Record<string, unknown>, behaviour: ReplyBehaviour): ReplyBehaviour {
  if (behaviour.toolCalls !== undefined || behaviour.content !== undefined) return behaviour;
  const choice = body.tool_choice;
  if (!isRecord(choice) || !isRecord(choice.function)) return behaviour;
  const name = choice.function.name;
  if (typeof name !== 'string' || !Array.isArray(body.tools)) return behaviour;
  const declared = (body.tools as unknown[]).find(
    (entry) => isRecord(entry) && isRecord(entry.function) && entry.function.name === name,
  ) as { function: { parameters?: unknown } } | undefined;
  if (declared === undefined) return behaviour;
  const parameters = declared.function.parameters;
  const required =
    isRecord(parameters) && Array.isArray(parameters.required) ? parameters.required : [];
  const args = Object.fromEntries(
    required.filter((field) => typeof field === 'string').map((field) => [field, 'example']),
  );
  return { ...behaviour, toolCalls: [{ name, arguments: JSON.stringify(args) }] };
}

/** A call to the first tool `body` offers, unless its last message is a tool's result. */
function offeredCallOf(body: Record<string, unknown>, behaviour: ReplyBehaviour): ReplyBehaviour {
  if (behaviour.toolCalls !== undefined || behaviour.content !== undefined) return behaviour;
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last: unknown = messages.at(-1);
  if (isRecord(last) && last.role === 'tool') return behaviour;
  const first: unknown = Array.isArray(body.tools) ? body.tools[0] : undefined;
  if (!isRecord(first) || !isRecord(first.function)) return behaviour;
  const { name } = first.function;
  if (typeof name !== 'string') return behaviour;
  return forcedCallOf({ tools: body.tools, tool_choice: { function: { name } } }, behaviour);
}

function embeddingInputs(input: unknown): string[] {
  const isTokens = (value: unknown): value is number[] =>
    Array.isArray(value) && value.every((token) => typeof token === 'number');
  const tokensText = (tokens: number[]) => tokens.map((token) => `#${token}`).join(' ');
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) return [];
  if (isTokens(input)) return [tokensText(input)];
  const texts: string[] = [];
  for (const item of input as unknown[]) {
    if (typeof item === 'string') texts.push(item);
    else if (isTokens(item)) texts.push(tokensText(item));
    else return [];
  }
  return texts;
}

interface QueuedBehaviour {
  endpoint: UpstreamEndpoint | undefined;
  behaviour: UpstreamBehaviour;
}

interface Route {
  endpoint: UpstreamEndpoint;
  modelId?: string;
}

function route(method: string, path: string): Route | undefined {
  if (method === 'POST' && path === '/v1/chat/completions') return { endpoint: 'chat' };
  if (method === 'POST' && path === '/v1/embeddings') return { endpoint: 'embeddings' };
  if (method === 'GET' && path === '/v1/models') return { endpoint: 'models' };
  if (method === 'GET' && path.startsWith('/v1/models/') && path.length > '/v1/models/'.length)
    return { endpoint: 'models', modelId: decodeURIComponent(path.slice('/v1/models/'.length)) };
  return undefined;
}

/** Everything one request's handling needs. */
interface Exchange {
  request: IncomingMessage;
  response: ServerResponse;
  record: RecordedRequest;
  body: Record<string, unknown>;
  route: Route;
  signal: AbortSignal;
  startedAt: number;
}

export async function startFakeUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const latencyMs = options.latencyMs ?? 0;
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const wordsPerChunk = Math.max(1, options.wordsPerChunk ?? 1);
  const embeddingDimensions = options.embeddingDimensions ?? 64;
  const models = options.models ?? defaultModels;
  const recordRequests = options.recordRequests ?? true;
  const obfuscation = options.obfuscation ?? true;
  const initialDefault: UpstreamBehaviour = options.defaultBehaviour ?? { kind: 'reply' };

  // A per-instance tag keeps ids distinct across fakes while a counter keeps them cheap.
  const instanceTag = randomBytes(4).toString('hex');
  let sequence = 0;
  const nextId = (prefix: string) => `${prefix}${instanceTag}${(++sequence).toString(36)}`;

  let defaultBehaviour = initialDefault;
  let queue: QueuedBehaviour[] = [];
  let requests: RecordedRequest[] = [];
  let received = 0;
  let inFlight = 0;
  let requestWaiters: Array<() => void> = [];
  let settleWaiters: Array<() => void> = [];

  const notifyReceived = () => {
    const waiters = requestWaiters;
    requestWaiters = [];
    for (const waiter of waiters) waiter();
  };
  const notifySettled = () => {
    if (inFlight !== 0) return;
    const waiters = settleWaiters;
    settleWaiters = [];
    for (const waiter of waiters) waiter();
  };

  const takeBehaviour = (endpoint: UpstreamEndpoint): UpstreamBehaviour => {
    const index = queue.findIndex(
      (queued) => queued.endpoint === undefined || queued.endpoint === endpoint,
    );
    if (index === -1) return defaultBehaviour;
    return queue.splice(index, 1)[0]!.behaviour;
  };

  const commonHeaders = (exchange: Exchange): Record<string, string> => ({
    'x-request-id': nextId('req_'),
    'openai-version': '2020-10-01',
    'openai-processing-ms': String(Math.round(performance.now() - exchange.startedAt)),
  });

  const sendJson = (
    exchange: Exchange,
    status: number,
    payload: unknown,
    headers: Record<string, string> = {},
  ) => {
    if (exchange.signal.aborted) return;
    const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
    exchange.record.status = status;
    exchange.response.writeHead(status, {
      'content-type':
        typeof payload === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      ...commonHeaders(exchange),
      ...headers,
    });
    exchange.response.end(text);
  };

  const cutNow = (exchange: Exchange) => {
    exchange.record.outcome = 'cut';
    exchange.request.socket.destroy();
  };

  const usageFor = (promptTokens: number, completionTokens: number, behaviour: ReplyBehaviour) => {
    const prompt = behaviour.usage?.prompt_tokens ?? promptTokens;
    const completion = behaviour.usage?.completion_tokens ?? completionTokens;
    return {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: behaviour.usage?.total_tokens ?? prompt + completion,
      prompt_tokens_details: {
        cached_tokens: behaviour.usageDetails?.cached_tokens ?? 0,
        audio_tokens: 0,
      },
      completion_tokens_details: {
        reasoning_tokens: behaviour.usageDetails?.reasoning_tokens ?? 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    };
  };

  /** Content, deltas, finish reason and usage of a chat answer, truncated to the token limit. */
  const composeReply = (body: Record<string, unknown>, scripted: ReplyBehaviour) => {
    const named = options.callNamedTools === true ? forcedCallOf(body, scripted) : scripted;
    const behaviour = options.callOfferedTools === true ? offeredCallOf(body, named) : named;
    const messages = Array.isArray(body.messages) ? body.messages : [];
    let promptTokens = 0;
    let lastUserText = '';
    for (const message of messages) {
      if (!isRecord(message)) continue;
      const text = messageText(message.content);
      promptTokens += countTokens(text);
      if (message.role === 'user') lastUserText = text;
    }
    // A tool call or a refusal comes without content unless some is given.
    const noContent = behaviour.toolCalls !== undefined || behaviour.refusal !== undefined;
    const fullContent =
      behaviour.content ?? behaviour.chunks?.join('') ?? (noContent ? '' : `Echo: ${lastUserText}`);
    const limit =
      positiveInteger(body.max_completion_tokens) ?? positiveInteger(body.max_tokens) ?? Infinity;
    const allWords = words(fullContent);
    const truncated = allWords.length > limit;
    const content = truncated ? allWords.slice(0, limit).join('') : fullContent;
    const contentWords = truncated ? allWords.slice(0, limit) : allWords;
    let deltas: string[];
    if (behaviour.chunks !== undefined && !truncated) {
      deltas = behaviour.chunks;
    } else {
      deltas = [];
      for (let index = 0; index < contentWords.length; index += wordsPerChunk)
        deltas.push(contentWords.slice(index, index + wordsPerChunk).join(''));
      if (deltas.length === 0 && content !== '') deltas.push(content);
    }
    const toolCalls = behaviour.toolCalls?.map((call, index) => ({
      id: call.id ?? `call_${instanceTag}${index}`,
      type: 'function' as const,
      function: { name: call.name, arguments: call.arguments },
    }));
    const completionTokens =
      contentWords.length +
      countTokens(behaviour.refusal ?? '') +
      (toolCalls ?? []).reduce((sum, call) => sum + countTokens(call.function.arguments), 0);
    return {
      content: content === '' && noContent ? null : content,
      deltas,
      toolCalls,
      refusal: behaviour.refusal,
      finishReason:
        behaviour.finishReason ??
        (truncated ? 'length' : toolCalls !== undefined ? 'tool_calls' : 'stop'),
      usage: usageFor(promptTokens, completionTokens, behaviour),
    };
  };

  /** A plausible `logprobs.content` for `text`: one entry per word, `top` alternatives each. */
  const logprobsFor = (text: string, top: number) => ({
    content: words(text).map((token, index) => ({
      token,
      logprob: -0.01 * (index + 1),
      bytes: [...Buffer.from(token, 'utf8')],
      top_logprobs: Array.from({ length: top }, (_, rank) => ({
        token: rank === 0 ? token : `${token.trim()}${rank}`,
        logprob: -0.01 * (index + 1) - rank,
        bytes: [...Buffer.from(rank === 0 ? token : `${token.trim()}${rank}`, 'utf8')],
      })),
    })),
    refusal: null,
  });

  /** `arguments` in about three fragments, as the real API streams them. */
  const fragments = (text: string): string[] => {
    const size = Math.max(1, Math.ceil(text.length / 3));
    const pieces: string[] = [];
    for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
    return pieces;
  };

  const replyChat = async (
    exchange: Exchange,
    behaviour: ReplyBehaviour | CutBehaviour | MalformedBehaviour,
  ) => {
    const { body } = exchange;
    const reply = composeReply(body, behaviour.kind === 'reply' ? behaviour : { kind: 'reply' });
    const id = nextId('chatcmpl-');
    const created = Math.floor(Date.now() / 1000);
    const model = typeof body.model === 'string' ? body.model : 'unknown';
    const fingerprint =
      (behaviour.kind === 'reply' ? behaviour.systemFingerprint : undefined) ?? systemFingerprint;
    const withLogprobs =
      body.logprobs === true && (behaviour.kind !== 'reply' || behaviour.logprobs !== false);
    const topLogprobs = typeof body.top_logprobs === 'number' ? body.top_logprobs : 0;

    if (!exchange.record.stream) {
      if (behaviour.kind === 'cut') return cutNow(exchange);
      const answer = {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: reply.content,
              refusal: reply.refusal ?? null,
              ...(reply.toolCalls === undefined ? {} : { tool_calls: reply.toolCalls }),
              annotations: [],
            },
            logprobs: withLogprobs ? logprobsFor(reply.content ?? '', topLogprobs) : null,
            finish_reason: reply.finishReason,
          },
        ],
        usage: reply.usage,
        service_tier: 'default',
        system_fingerprint: fingerprint,
      };
      if (behaviour.kind === 'malformed') {
        const text = JSON.stringify(answer);
        exchange.record.status = 200;
        exchange.response.writeHead(200, {
          'content-type': 'application/json',
          ...commonHeaders(exchange),
        });
        exchange.response.end(text.slice(0, Math.floor(text.length / 2)));
        return;
      }
      sendJson(exchange, 200, answer);
      return;
    }

    const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
    const includeUsage =
      streamOptions.include_usage === true &&
      !(behaviour.kind === 'reply' && behaviour.streamUsage === false);
    const obfuscate = obfuscation && streamOptions.include_obfuscation !== false;
    const chunk = (choices: unknown[], usage: unknown, padding: number) => {
      const payload: Record<string, unknown> = {
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        service_tier: 'default',
        system_fingerprint: fingerprint,
        choices,
      };
      if (includeUsage) payload.usage = usage;
      // The real API pads with random characters; a deterministic pad keeps costs predictable.
      if (obfuscate) payload.obfuscation = obfuscationPadding.slice(0, 2 + (padding % 12));
      return `data: ${JSON.stringify(payload)}\n\n`;
    };
    const choice = (
      delta: Record<string, unknown>,
      finishReason: FinishReason | null,
      logprobs: unknown = null,
    ) => [{ index: 0, delta, logprobs, finish_reason: finishReason }];
    const first: Record<string, unknown> = {
      role: 'assistant',
      content: reply.content === null ? null : '',
      refusal: reply.refusal === undefined ? null : '',
    };
    const events = [chunk(choice(first, null), null, 0)];
    for (const delta of reply.deltas)
      events.push(
        chunk(
          choice({ content: delta }, null, withLogprobs ? logprobsFor(delta, topLogprobs) : null),
          null,
          delta.length,
        ),
      );
    for (const piece of words(reply.refusal ?? ''))
      events.push(chunk(choice({ refusal: piece }, null), null, piece.length));
    for (const [index, call] of (reply.toolCalls ?? []).entries()) {
      const opening = {
        index,
        id: call.id,
        type: 'function',
        function: { name: call.function.name, arguments: '' },
      };
      events.push(chunk(choice({ tool_calls: [opening] }, null), null, index));
      for (const piece of fragments(call.function.arguments))
        events.push(
          chunk(
            choice({ tool_calls: [{ index, function: { arguments: piece } }] }, null),
            null,
            piece.length,
          ),
        );
    }
    events.push(chunk(choice({}, reply.finishReason), null, 1));
    if (includeUsage) events.push(chunk([], reply.usage, 3));
    events.push('data: [DONE]\n\n');

    const { response, signal, record } = exchange;
    record.status = 200;
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      ...commonHeaders(exchange),
    });

    if (behaviour.kind === 'malformed') {
      events.splice(Math.max(0, behaviour.afterChunks), 0, 'data: {"id": "broken", "choi\n\n');
    }
    if (behaviour.kind === 'cut') {
      const sent = events.slice(0, Math.max(0, behaviour.afterChunks));
      // An empty write still sends the headers, and its callback says they reached the socket.
      await writeFlushed(response, sent.join(''), signal);
      record.chunksSent = sent.length;
      if (!signal.aborted) cutNow(exchange);
      return;
    }

    const hold = behaviour.kind === 'reply' ? behaviour.holdAfterChunks : undefined;
    const sending = hold === undefined ? events : events.slice(0, hold);
    if (chunkDelayMs === 0) {
      response.cork();
      for (const event of sending) response.write(event);
      record.chunksSent = sending.length;
      if (hold === undefined) response.end();
      response.uncork();
    } else {
      for (const [index, event] of sending.entries()) {
        if (index >= 2 && !(await abortableSleep(chunkDelayMs, signal))) return;
        response.write(event);
        record.chunksSent = index + 1;
      }
      if (hold === undefined) response.end();
    }
    if (hold !== undefined) await waitForAbort(signal);
  };

  const replyEmbeddings = (exchange: Exchange) => {
    const { body } = exchange;
    const inputs = embeddingInputs(body.input);
    if (inputs.length === 0 || inputs.some((input) => input === '')) {
      sendJson(
        exchange,
        400,
        openAIErrorBody(400, {
          message:
            "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
        }),
      );
      return;
    }
    const dimensions = positiveInteger(body.dimensions) ?? embeddingDimensions;
    const base64 = body.encoding_format === 'base64';
    let promptTokens = 0;
    const data = inputs.map((input, index) => {
      promptTokens += countTokens(input);
      const vector = fakeEmbedding(input, dimensions);
      return {
        object: 'embedding',
        index,
        embedding: base64
          ? Buffer.from(new Float32Array(vector).buffer).toString('base64')
          : vector,
      };
    });
    sendJson(exchange, 200, {
      object: 'list',
      data,
      model: typeof body.model === 'string' ? body.model : 'unknown',
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    });
  };

  const modelObject = (id: string) => ({
    id,
    object: 'model',
    created: 1_700_000_000,
    owned_by: 'openai',
  });

  const replyModels = (exchange: Exchange) => {
    const { modelId } = exchange.route;
    if (modelId === undefined) {
      sendJson(exchange, 200, { object: 'list', data: models.map(modelObject) });
    } else if (models.includes(modelId)) {
      sendJson(exchange, 200, modelObject(modelId));
    } else {
      sendJson(
        exchange,
        404,
        openAIErrorBody(404, {
          message: `The model '${modelId}' does not exist`,
          param: 'model',
          code: 'model_not_found',
        }),
      );
    }
  };

  const behave = async (exchange: Exchange, behaviour: UpstreamBehaviour): Promise<void> => {
    switch (behaviour.kind) {
      case 'reply':
        if (exchange.route.endpoint === 'chat') return replyChat(exchange, behaviour);
        if (exchange.route.endpoint === 'embeddings') return replyEmbeddings(exchange);
        return replyModels(exchange);
      case 'error':
        return sendJson(
          exchange,
          behaviour.status,
          behaviour.body ?? openAIErrorBody(behaviour.status),
          behaviour.headers,
        );
      case 'delay':
        if (!(await abortableSleep(behaviour.ms, exchange.signal))) return;
        return behave(exchange, behaviour.then ?? defaultBehaviour);
      case 'cut':
        if (exchange.route.endpoint === 'chat') return replyChat(exchange, behaviour);
        return cutNow(exchange);
      case 'malformed':
        if (exchange.route.endpoint === 'chat') return replyChat(exchange, behaviour);
        return cutNow(exchange);
      case 'hang':
        return waitForAbort(exchange.signal);
    }
  };

  const readBody = async (request: IncomingMessage): Promise<string> => {
    const parts: Buffer[] = [];
    for await (const part of request) parts.push(part as Buffer);
    return Buffer.concat(parts).toString('utf8');
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const startedAt = performance.now();
    const controller = new AbortController();
    const url = request.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const authorization = request.headers.authorization;
    const record: RecordedRequest = {
      method: request.method ?? 'GET',
      path,
      headers: request.headers,
      body: undefined,
      rawBody: '',
      apiKey: authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined,
      endpoint: undefined,
      stream: false,
      receivedAt: Date.now(),
      finishedAt: undefined,
      behaviour: undefined,
      status: undefined,
      chunksSent: 0,
      outcome: 'pending',
      aborted: false,
    };
    inFlight++;
    response.on('close', () => {
      if (record.outcome === 'pending') {
        record.outcome = response.writableFinished ? 'answered' : 'aborted';
        record.aborted = record.outcome === 'aborted';
      }
      record.finishedAt = Date.now();
      controller.abort();
      inFlight--;
      notifySettled();
    });
    // A client that goes away mid-request is an outcome to record, not a crash.
    request.on('error', () => undefined);
    response.on('error', () => undefined);

    let text: string;
    try {
      text = await readBody(request);
    } catch {
      return;
    }
    let parsed: unknown;
    let validJson = true;
    if (text !== '') {
      try {
        parsed = JSON.parse(text) as unknown;
      } catch {
        parsed = text;
        validJson = false;
      }
    }
    const body = isRecord(parsed) ? parsed : {};
    const matched = route(record.method, path);
    record.body = parsed;
    record.rawBody = text;
    record.endpoint = matched?.endpoint;
    record.stream = body.stream === true;
    received++;
    if (recordRequests) requests.push(record);
    notifyReceived();
    if (controller.signal.aborted) return;

    const exchange = {
      request,
      response,
      record,
      body,
      route: matched ?? { endpoint: 'chat' },
      signal: controller.signal,
      startedAt,
    } satisfies Exchange;

    if (matched === undefined) {
      return sendJson(
        exchange,
        404,
        openAIErrorBody(404, { message: `Invalid URL (${record.method} ${path})` }),
      );
    }
    if (options.requireApiKey !== undefined && record.apiKey !== options.requireApiKey) {
      return sendJson(
        exchange,
        401,
        openAIErrorBody(401, {
          message:
            record.apiKey === undefined
              ? "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
              : 'Incorrect API key provided.',
          code: record.apiKey === undefined ? null : 'invalid_api_key',
        }),
      );
    }
    if (!validJson || (record.method === 'POST' && !isRecord(parsed))) {
      return sendJson(
        exchange,
        400,
        openAIErrorBody(400, {
          message:
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
        }),
      );
    }
    for (const required of requiredFields[matched.endpoint]) {
      if (body[required] === undefined) {
        return sendJson(
          exchange,
          400,
          openAIErrorBody(400, {
            message: `Missing required parameter: '${required}'.`,
            param: required,
            code: 'missing_required_parameter',
          }),
        );
      }
    }

    const behaviour = takeBehaviour(matched.endpoint);
    record.behaviour = behaviour;
    if (!(await abortableSleep(latencyMs, controller.signal))) return;
    await behave(exchange, behaviour);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent && !response.destroyed) {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify(
            openAIErrorBody(500, { message: `Fake upstream failed: ${String(error)}` }),
          ),
        );
      } else {
        response.destroy();
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  const withTimeout = <T>(
    promise: Promise<T>,
    timeoutMs: number,
    describe: () => string,
  ): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(describe())), timeoutMs);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  };

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    get requests() {
      return requests;
    },
    get pendingBehaviours() {
      return queue.length;
    },
    enqueue(...behaviours) {
      for (const behaviour of behaviours) queue.push({ endpoint: undefined, behaviour });
    },
    enqueueFor(endpoint, ...behaviours) {
      for (const behaviour of behaviours) queue.push({ endpoint, behaviour });
    },
    setDefaultBehaviour(behaviour) {
      defaultBehaviour = behaviour;
    },
    waitForRequests(count, timeoutMs = 5000) {
      const reached = new Promise<readonly RecordedRequest[]>((resolve) => {
        const check = () => {
          if (received >= count) resolve(requests);
          else requestWaiters.push(check);
        };
        check();
      });
      return withTimeout(
        reached,
        timeoutMs,
        () => `fake upstream: ${received} of ${count} requests after ${timeoutMs} ms`,
      );
    },
    settled(timeoutMs = 5000) {
      const idle = new Promise<void>((resolve) => {
        settleWaiters.push(resolve);
        notifySettled();
      });
      return withTimeout(
        idle,
        timeoutMs,
        () => `fake upstream: ${inFlight} requests still in flight after ${timeoutMs} ms`,
      );
    },
    reset() {
      requests = [];
      queue = [];
      received = 0;
      defaultBehaviour = initialDefault;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}
