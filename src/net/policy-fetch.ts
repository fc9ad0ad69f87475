// A WHATWG `fetch` for the connections an agent's tools make (MCP servers, OpenAPI-described APIs):
// undici's fetch over an Agent whose every new connection checks its host itself — a literal
// address or a metadata host name before anything, a host name's every resolved address — and
// connects to exactly the addresses it checked, so a DNS answer that changes between a save-time
// check and the connection cannot steer it inside (the web agent's address policy and the
// operator's allow-list). Redirects are never followed. Failures carry a message fit to show: the
// URL and the rule, never a resolved address.
import { isIP, type LookupFunction } from 'node:net';
import {
  Agent,
  buildConnector,
  fetch as undiciFetch,
  type RequestInit as UndiciRequestInit,
} from 'undici';
import { isMetadataHostName, judgeAddress, type TargetAllowList } from './address-policy.js';
import { systemResolver, type ResolvedAddress, type Resolver } from './fetch-target.js';
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
class ConnectRefusal extends Error {
  constructor(
    readonly reason: 'blocked_address' | 'unreachable',
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'ConnectRefusal';
  }
}

export interface PolicyFetchOptions {
  allowList: TargetAllowList;
  /** Defaults to the system resolver; tests inject one. */
  resolve?: Resolver;
  /** Time to open a connection, DNS included. */
  connectTimeoutMs: number;
  /** Time from a request to its answer's headers. */
  headersTimeoutMs: number;
  /** Longest silence within a body; 0 (default): none (event streams stay open while idle). */
  bodyTimeoutMs?: number;
  /** What refusals call the connections ("tool connections"). */
  purpose?: string;
  /**
   * Bytes one answer's body may carry (an event stream: over its whole life); past it the body
   * errors and the connection closes. Default 32 MiB: a server cannot fill the service's memory.
   */
  maxResponseBytes?: number;
}

export type FetchFunction = (
  input: string | URL | Request,
  init?: RequestInit,
) => Promise<Response>;

export interface PolicyFetch {
  readonly fetch: FetchFunction;
  /** Closes the pooled connections. */
  close(): Promise<void>;
}

const redirectStatus = (status: number) => status >= 300 && status <= 399 && status !== 304;

function defaultPort(protocol: string): number {
  return protocol === 'https:' ? 443 : 80;
}

/** The addresses one connection to host:port may use; throws ConnectRefusal when any is refused. */
async function checkedAddresses(
  options: PolicyFetchOptions,
  purpose: string,
  hostname: string,
  port: number,
): Promise<ResolvedAddress[]> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  if (literal === 0 && isMetadataHostName(host) && !options.allowList.allowsHost(host, port)) {
    throw new ConnectRefusal(
      'blocked_address',
      `${host} is a cloud metadata service, which ${purpose} may not reach`,
    );
  }
  const addresses: ResolvedAddress[] =
    literal !== 0
      ? [{ address: host, family: literal === 6 ? 6 : 4 }]
      : await (options.resolve ?? systemResolver)(host);
  if (addresses.length === 0)
    throw new ConnectRefusal('unreachable', 'its host name has no address');
  // Refused when ANY address is: the connection could otherwise be steered to the bad one.
  for (const { address } of addresses) {
    const verdict = judgeAddress(options.allowList, host, address, port);
    if (!verdict.allowed) {
      const subject = literal !== 0 ? `${host} is` : `${host} resolves to`;
      throw new ConnectRefusal(
        'blocked_address',
        `${subject} ${verdict.rule ?? 'a refused address'}, which ${purpose} may not reach`,
      );
    }
  }
  return addresses;
}

/** A socket lookup that answers with the checked addresses, never asking DNS again. */
function answering(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, lookupOptions, callback) => {
    const first = addresses[0] as ResolvedAddress;
    if (lookupOptions.all === true) callback(null, addresses);
    else callback(null, first.address, first.family);
  };
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

function targetOf(input: string | URL | Request): string {
  if (typeof input === 'string') return input;
  if (input instanceof URL) return input.href;
  return input.url;
}

/** An http(s) URL without credentials, or PolicyFetchError `invalid_url`. */
export function parseToolUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch (error) {
    throw new PolicyFetchError('invalid_url', text, `'${shown(text)}' is not a valid URL.`, {
      cause: error,
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new PolicyFetchError(
      'invalid_url',
      url.href,
      `${shown(url)} is not an http or https URL.`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    const redacted = new URL(url.href);
    redacted.username = '';
    redacted.password = '';
    throw new PolicyFetchError(
      'invalid_url',
      redacted.href,
      `${shown(redacted)} contains credentials in the URL; give a bearer token instead.`,
    );
  }
  return url;
}

/**
 * Checks a URL's host as a connection to it would (its literal address, metadata name, every
 * resolved address), without connecting: for save-time checks. Throws PolicyFetchError.
 */
export async function checkToolUrl(
  text: string,
  options: Pick<PolicyFetchOptions, 'allowList' | 'resolve' | 'purpose'>,
): Promise<URL> {
  const url = parseToolUrl(text);
  const purpose = options.purpose ?? 'tool connections';
  const port = url.port === '' ? defaultPort(url.protocol) : Number(url.port);
  try {
    await checkedAddresses(
      { ...options, connectTimeoutMs: 0, headersTimeoutMs: 0 },
      purpose,
      url.hostname,
      port,
    );
  } catch (error) {
    if (error instanceof ConnectRefusal) {
      throw new PolicyFetchError(
        error.reason,
        url.href,
        `Refused to connect to ${shown(url)}: ${error.detail}.`,
      );
    }
    throw new PolicyFetchError(
      'unreachable',
      url.href,
      `Could not connect to ${shown(url)}: ${unreachableReason(error)}.`,
      { cause: error },
    );
  }
  return url;
}

/** A fetch whose connections pass the address policy, with connect and header timeouts. */
export function createPolicyFetch(options: PolicyFetchOptions): PolicyFetch {
  const purpose = options.purpose ?? 'tool connections';
  const connectTimeout = options.connectTimeoutMs;
  const agent = new Agent({
    connectTimeout,
    headersTimeout: options.headersTimeoutMs,
    bodyTimeout: options.bodyTimeoutMs ?? 0,
    connect(connectOptions, callback) {
      const port =
        connectOptions.port === ''
          ? defaultPort(connectOptions.protocol)
          : Number(connectOptions.port);
      checkedAddresses(options, purpose, connectOptions.hostname, port).then(
        (addresses) => {
          // A connector per connection: its lookup answers this connection's checked addresses.
          const connector = buildConnector({
            timeout: connectTimeout,
            lookup: answering(addresses),
          });
          connector(connectOptions, callback);
        },
        (error: Error) => callback(error, null),
      );
    },
  });

  const policyFetch: FetchFunction = async (input, init) => {
    const url = parseToolUrl(targetOf(input));
    const port = url.port === '' ? defaultPort(url.protocol) : Number(url.port);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // Literal addresses and metadata names are refused before anything is sent.
    if (isIP(host) !== 0 || isMetadataHostName(host)) {
      try {
        await checkedAddresses(options, purpose, host, port);
      } catch (error) {
        if (!(error instanceof ConnectRefusal)) throw error;
        throw new PolicyFetchError(
          error.reason,
          url.href,
          `Refused to connect to ${shown(url)}: ${error.detail}.`,
        );
      }
    }
    let response: Response;
    try {
      // The caller's init is the WHATWG one (Node's bundled undici); this undici reads it alike.
      const undiciInit = { ...init, redirect: 'manual', dispatcher: agent } as UndiciRequestInit;
      response = await undiciFetch(url, undiciInit);
    } catch (error) {
      // The caller's own abort stays an abort (callers tell it from a failure by it).
      if (init?.signal?.aborted === true) throw error;
      throw failure(url, error);
    }
    if (redirectStatus(response.status)) {
      await response.body?.cancel().catch(() => undefined);
      throw new PolicyFetchError(
        'redirect',
        url.href,
        `${shown(url)} answered with a redirect (HTTP ${response.status}); ${purpose} do not follow redirects.`,
      );
    }
    return limited(response, url);
  };

  const maxResponseBytes = options.maxResponseBytes ?? 32 * 1024 * 1024;
  const nullBodyStatuses = new Set([101, 103, 204, 205, 304]);

  /** The response, its body cut off with an error past `maxResponseBytes`. */
  function limited(response: Response, url: URL): Response {
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

  function failure(url: URL, error: unknown): PolicyFetchError {
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
        `Could not connect to ${shown(url)} within ${connectTimeout} ms.`,
        { cause: error },
      );
    }
    if (code === 'UND_ERR_HEADERS_TIMEOUT') {
      return new PolicyFetchError(
        'timeout',
        url.href,
        `${shown(url)} did not answer within ${options.headersTimeoutMs} ms.`,
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

  return {
    fetch: policyFetch,
    close: () => agent.close(),
  };
}
