// A `fetch` for the AI SDK's providers over Node's http/https with keep-alive agents. Node's global
// fetch (undici's WHATWG layer) costs ~600 µs of CPU per call on this service's reference machine
// against ~260 µs for this (bench/results/gateway.md); at gateway rates that is most of the budget.
// Anything it does not handle (redirects, non-text bodies) goes to the global fetch.
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { PooledHttpAgent, PooledHttpsAgent } from '../../net/pool-agents.js';
import { errorTypeOf, upstreamAttempt } from '../../telemetry/gen-ai-calls.js';

/**
 * How long an idle pooled connection is kept: 4 s, as Node's global fetch (undici) does, under the
 * 5 s that common servers keep one (Node's, uvicorn's), or 1 s under what the upstream announces in
 * `Keep-Alive: timeout=N` when that is shorter. A connection the upstream closes as a request goes
 * out on it fails that request ("could not be reached") whatever the model's retries; closing it
 * first is what keeps that race from happening. Without this option Node keeps idle connections
 * for ever and ignores the announcement.
 */
export const idleConnectionMs = 4_000;

/** The connection pools every upstream call shares (the AI SDK's and the lean path's). */
export const keepAliveAgents = {
  'http:': new PooledHttpAgent({ keepAlive: true, timeout: idleConnectionMs }),
  'https:': new PooledHttpsAgent({ keepAlive: true, timeout: idleConnectionMs }),
};
const agents = keepAliveAgents;

function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  return Object.fromEntries(new Headers(headers).entries());
}

function responseHeaders(incoming: http.IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return headers;
}

export function keepAliveFetch(
  input: string | URL | Request,
  init: RequestInit = {},
): Promise<Response> {
  const body = init.body;
  const plainBody =
    body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
  if (input instanceof Request || !plainBody) return fetch(input, init);
  const url = new URL(input);
  const agent =
    url.protocol === 'https:'
      ? agents['https:']
      : url.protocol === 'http:'
        ? agents['http:']
        : null;
  if (agent === null) return fetch(input, init);
  const client = url.protocol === 'https:' ? https : http;
  // Compressed answers would need decoding that the global fetch does and this does not.
  const headers = { 'accept-encoding': 'identity', ...headerRecord(init.headers) };
  // The attempt's span, when a traced model call made this request (its traceparent goes along).
  const attempt = upstreamAttempt(url, headers);

  return new Promise<Response>((resolve, reject) => {
    const outgoing = client.request(
      url,
      {
        method: init.method ?? 'GET',
        agent,
        headers,
        ...(init.signal === null || init.signal === undefined ? {} : { signal: init.signal }),
      },
      (incoming) => {
        const status = incoming.statusCode ?? 0;
        if (status >= 400) attempt?.failed(String(status));
        if (status >= 300 && status < 400 && incoming.headers.location !== undefined) {
          incoming.resume();
          resolve(fetch(input, init));
          return;
        }
        const hasBody = status !== 204 && status !== 304 && init.method !== 'HEAD';
        resolve(
          new Response(hasBody ? (Readable.toWeb(incoming) as ReadableStream<Uint8Array>) : null, {
            status,
            statusText: incoming.statusMessage ?? '',
            headers: responseHeaders(incoming),
          }),
        );
      },
    );
    outgoing.on('error', (error: Error) => {
      attempt?.failed(errorTypeOf(error));
      // The AI SDK recognises aborts by name, and connection failures by undici's TypeError.
      if (error.name === 'AbortError') reject(error);
      else reject(new TypeError('fetch failed', { cause: error }));
    });
    outgoing.end(body ?? undefined);
  });
}
