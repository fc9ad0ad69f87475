// The lean OpenAI-compatible path's connection (./openai-compatible-chat-model.ts): the POST to an
// upstream's /chat/completions (or, for Anthropic's pass-through, its /messages with its own key
// header: ./anthropic-passthrough.ts) over the shared keep-alive agents (node:http/https), retried
// and bounded in time by the block every provider call uses (../upstream/), and a whole answer
// read with a size bound. Failures become the same APICallErrors the AI SDK raises, so retries and
// the mapping to the contract's errors (./upstream-failure.ts) are shared with the other providers.
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { APICallError } from '@ai-sdk/provider';
import type { CallLimits } from '../upstream/call-limits.js';
import { withRetries } from '../upstream/retry.js';
import { keepAliveAgents } from './keep-alive-fetch.js';
import { errorTypeOf, upstreamAttempt } from '../../telemetry/gen-ai-calls.js';

/** Largest whole (not streamed) answer read; a larger one is refused, not buffered. */
export const maxAnswerBytes = 16 * 1024 * 1024;
/** How much of an error answer is kept (for the log; the client never sees it). */
const maxErrorBodyBytes = 64 * 1024;

function headerRecord(incoming: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
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
    // 'close' also follows every 'end': no error is made then (its stack trace costs a few µs).
    incoming.once('close', () => {
      if (!settled) settle(new Error('The answer was cut short.'));
    });
  });
}

/** A non-2xx answer: its head and the start of its body, as the AI SDK's APICallError. */
function rejectWithErrorAnswer(
  incoming: IncomingMessage,
  url: string,
  reject: (error: Error) => void,
): void {
  const status = incoming.statusCode ?? 0;
  const parts: Buffer[] = [];
  let kept = 0;
  incoming.on('data', (part: Buffer) => {
    // The rest is read and dropped, so the connection can be reused.
    if (kept >= maxErrorBodyBytes) return;
    parts.push(part.subarray(0, maxErrorBodyBytes - kept));
    kept += Math.min(part.length, maxErrorBodyBytes - kept);
  });
  incoming.on('error', reject);
  let ended = false;
  // Cut before its end: the 'end' below never comes.
  incoming.on('close', () => {
    if (!ended) reject(new Error('The error answer was cut short.'));
  });
  incoming.on('end', () => {
    ended = true;
    reject(
      new APICallError({
        message: `HTTP ${status}`,
        url,
        requestBodyValues: {},
        statusCode: status,
        responseHeaders: headerRecord(incoming),
        responseBody: Buffer.concat(parts).toString('utf8'),
      }),
    );
  });
}

/** Another endpoint than OpenAI's (Anthropic's /messages, for its pass-through). */
export interface EndpointOptions {
  /** The path under the base URL (default `/chat/completions`). */
  readonly path?: string;
  /** The headers that carry the key (default `Authorization: Bearer <key>`). */
  readonly keyHeaders?: (apiKey: string) => Record<string, string>;
}

const bearerHeaders = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

/** One upstream's /chat/completions, reached over a pooled keep-alive connection. */
export class UpstreamConnection {
  readonly url: string;
  private readonly target: URL;
  private readonly client: typeof http | typeof https;
  private readonly requestOptions: http.RequestOptions;

  constructor(
    baseUrl: string | null | undefined,
    apiKey: string | undefined,
    endpoint: EndpointOptions = {},
  ) {
    const base = (baseUrl ?? '').replace(/\/+$/, '');
    this.url = `${base}${endpoint.path ?? '/chat/completions'}`;
    const url = new URL(this.url);
    this.target = url;
    const secure = url.protocol === 'https:';
    this.client = secure ? https : http;
    this.requestOptions = {
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
      path: `${url.pathname}${url.search}`,
      agent: secure ? keepAliveAgents['https:'] : keepAliveAgents['http:'],
      headers: {
        'content-type': 'application/json',
        // Compressed answers would need decoding; plain ones are relayed as they come.
        'accept-encoding': 'identity',
        ...(apiKey === undefined ? {} : (endpoint.keyHeaders ?? bearerHeaders)(apiKey)),
      },
    };
  }

  /** One attempt: resolves with the answer's head on 2xx, rejects with an APICallError else. */
  private send(
    body: string,
    limits: CallLimits,
    headers: Readonly<Record<string, string>>,
  ): Promise<IncomingMessage> {
    const sent: Record<string, string> = {
      ...headers,
      ...(this.requestOptions.headers as Record<string, string>),
      'content-length': String(Buffer.byteLength(body)),
    };
    // The attempt's span, when the call is traced (its traceparent goes into the headers).
    const attempt = upstreamAttempt(this.target, sent);
    return new Promise((resolve, reject) => {
      const outgoing = this.client.request(
        { ...this.requestOptions, headers: sent },
        (incoming) => {
          const status = incoming.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve(incoming);
          else {
            attempt?.failed(String(status));
            rejectWithErrorAnswer(incoming, this.url, reject);
          }
        },
      );
      outgoing.on('error', (error: Error) => {
        attempt?.failed(errorTypeOf(error));
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

  /**
   * Opens the answer, retrying as ../upstream/retry.ts does (408, 409, 429, 5xx, unreachable).
   * `headers`: the call's own (Anthropic's version and betas); they never override the
   * connection's.
   */
  open(
    body: string,
    limits: CallLimits,
    maxRetries: number,
    headers: Readonly<Record<string, string>> = {},
  ): Promise<IncomingMessage> {
    return withRetries(() => this.send(body, limits, headers), limits, { maxRetries });
  }

  /** A whole answer's text, refused (as unreadable) past `maxAnswerBytes`. */
  async readWhole(incoming: IncomingMessage): Promise<string> {
    const raw = await readAnswer(incoming, () =>
      this.unreadable(
        incoming,
        '',
        new Error(`The answer is larger than ${maxAnswerBytes} bytes.`),
      ),
    );
    return raw.toString('utf8');
  }

  /** A 2xx answer whose body cannot be read, as the AI SDK reports it. */
  unreadable(incoming: IncomingMessage, raw: string, cause: Error): APICallError {
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
}
