// The failures of a policy fetch (policy-fetch.ts): PolicyFetchError, whose message names the URL
// and the rule but never a resolved address; the connector's refusal; a failed fetch read back to
// its cause; and an answer's body cut off past its bound.
import { shown, unreachableReason } from './web-fetch-error.js';

export type PolicyFetchErrorReason =
  /** Not an absolute http(s) URL, or one with credentials. */
  | 'invalid_url'
  /** The host is, or resolves to, an address the policy refuses. */
  | 'blocked_address'
  /** The answer was a redirect, which is not followed. */
  | 'redirect'
  /** The answer's body went past `maxResponseBytes`. */
  | 'too_large'
  /** Connecting, or waiting for the answer's headers, took longer than allowed. */
  | 'timeout'
  /** DNS failure, refused or broken connection, TLS failure. */
  | 'unreachable';

/** A refused or failed tool connection; the message names the URL and why, nothing internal. */
export class PolicyFetchError extends Error {
  constructor(
    readonly reason: PolicyFetchErrorReason,
    readonly url: string,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PolicyFetchError';
  }
}

/** Why the connector refused a host (the URL is added by the fetch that sees it). */
export class ConnectRefusal extends Error {
  constructor(
    readonly reason: 'blocked_address' | 'unreachable',
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'ConnectRefusal';
  }
}

/** The error in `error`'s cause chain that is an instance of `type`, if any. */
function findCause<T>(error: unknown, type: abstract new (...args: never[]) => T): T | null {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth += 1) {
    if (current instanceof type) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** The innermost error of a cause chain that carries a code (ECONNREFUSED, UND_ERR_…). */
function codeOf(error: unknown): string {
  let current: unknown = error;
  let code = '';
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth += 1) {
    const found = (current as { code?: unknown }).code;
    if (typeof found === 'string') code = found;
    current = (current as { cause?: unknown }).cause;
  }
  return code;
}

/** Whether an error of the cause chain has exactly this message (undici's refusals carry no code). */
function findMessage(error: unknown, message: string): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth += 1) {
    if ((current as { message?: unknown }).message === message) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

const nullBodyStatuses = new Set([101, 103, 204, 205, 304]);

/** The response, its body cut off with an error past `maxResponseBytes`. */
export function limited(response: Response, url: URL, maxResponseBytes: number): Response {
  if (response.body === null || nullBodyStatuses.has(response.status)) return response;
  let seen = 0;
  const limiter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen <= maxResponseBytes) {
        controller.enqueue(chunk);
        return;
      }
      controller.error(
        new PolicyFetchError(
          'too_large',
          url.href,
          `${shown(url)} answered more than ${maxResponseBytes} bytes; the answer was cut off.`,
        ),
      );
    },
  });
  return new Response((response.body as ReadableStream<Uint8Array>).pipeThrough(limiter), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** A failed fetch as the PolicyFetchError that says why, naming the URL and nothing internal. */
export function failure(
  url: URL,
  error: unknown,
  timeouts: { connectTimeout: number; headersTimeout: number },
): PolicyFetchError {
  const refusal = findCause(error, ConnectRefusal);
  if (refusal !== null) {
    const lead =
      refusal.reason === 'blocked_address' ? 'Refused to connect to' : 'Could not connect to';
    return new PolicyFetchError(
      refusal.reason,
      url.href,
      `${lead} ${shown(url)}: ${refusal.detail}.`,
      {
        cause: error,
      },
    );
  }
  if (findMessage(error, 'bad port')) {
    // The fetch standard's list (SMTP, IRC…): refused before any connection.
    return new PolicyFetchError(
      'blocked_address',
      url.href,
      `Refused to connect to ${shown(url)}: port ${url.port} is not one fetch may use.`,
      { cause: error },
    );
  }
  const code = codeOf(error);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new PolicyFetchError(
      'timeout',
      url.href,
      `Could not connect to ${shown(url)} within ${timeouts.connectTimeout} ms.`,
      { cause: error },
    );
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') {
    return new PolicyFetchError(
      'timeout',
      url.href,
      `${shown(url)} did not answer within ${timeouts.headersTimeout} ms.`,
      { cause: error },
    );
  }
  const reason = code.startsWith('UND_ERR_SOCKET')
    ? 'the connection broke'
    : unreachableReason({ code });
  return new PolicyFetchError(
    'unreachable',
    url.href,
    `Could not connect to ${shown(url)}: ${reason}.`,
    {
      cause: error,
    },
  );
}
