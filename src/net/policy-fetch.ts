// A WHATWG `fetch` for the connections an agent's tools make (MCP servers, OpenAPI-described APIs):
// undici's fetch over an Agent whose every new connection checks its host itself — a literal
// address or a metadata host name before anything, a host name's every resolved address — and
// connects to exactly the addresses it checked, so a DNS answer that changes between a save-time
// check and the connection cannot steer it inside (the web agent's address policy and the
// operator's allow-list). Redirects are never followed. Failures carry a message fit to show: the
// URL and the rule, never a resolved address.
import { createRequire } from 'node:module';
import { isIP, type LookupFunction } from 'node:net';
import type * as Undici from 'undici';
import type { Agent, RequestInit as UndiciRequestInit } from 'undici';
import { isMetadataHostName, judgeAddress, type TargetAllowList } from './address-policy.js';
import { systemResolver, type ResolvedAddress, type Resolver } from './fetch-target.js';
import { shown, unreachableReason } from './web-fetch-error.js';
import { ConnectRefusal, failure, limited, PolicyFetchError } from './policy-fetch-failures.js';

export { PolicyFetchError, type PolicyFetchErrorReason } from './policy-fetch-failures.js';

/**
 * undici, loaded (it is CommonJS) with the first connection a tool makes: its ~110 modules take
 * ~20 MiB that a service whose agents call no MCP server or API never needs.
 */
let undici: typeof Undici | undefined;
const loadUndici = () => (undici ??= createRequire(import.meta.url)('undici') as typeof Undici);

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
  let agent: Agent | undefined;
  const newAgent = (): Agent => {
    const { Agent: UndiciAgent, buildConnector } = loadUndici();
    return new UndiciAgent({
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
  };

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
      agent ??= newAgent();
      const undiciInit = { ...init, redirect: 'manual', dispatcher: agent } as UndiciRequestInit;
      response = await loadUndici().fetch(url, undiciInit);
    } catch (error) {
      // The caller's own abort stays an abort (callers tell it from a failure by it).
      if (init?.signal?.aborted === true) throw error;
      throw failure(url, error, { connectTimeout, headersTimeout: options.headersTimeoutMs });
    }
    if (redirectStatus(response.status)) {
      await response.body?.cancel().catch(() => undefined);
      throw new PolicyFetchError(
        'redirect',
        url.href,
        `${shown(url)} answered with a redirect (HTTP ${response.status}); ${purpose} do not follow redirects.`,
      );
    }
    return limited(response, url, options.maxResponseBytes ?? 32 * 1024 * 1024);
  };

  return {
    fetch: policyFetch,
    close: () => agent?.close() ?? Promise.resolve(),
  };
}
