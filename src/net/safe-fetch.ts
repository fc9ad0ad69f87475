// Fetches a user-supplied http(s) URL without letting it reach internal services (SSRF): every hop's
// addresses are checked and the socket connects to exactly those, under one deadline and a byte cap.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { pipeline, type Readable, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { AppConfig } from '../config/config.js';
import { isMetadataHostName, judgeAddress, TargetAllowList } from './address-policy.js';
import {
  acceptedMediaTypes,
  acceptHeader,
  decodeBody,
  parseContentType,
  type ContentType,
} from './body-decoding.js';

export type WebFetchErrorReason =
  /** Not an absolute http(s) URL, or one with credentials (also for a redirect's target). */
  | 'invalid_url'
  /** The host is, or resolves to, an address the SSRF rules refuse and the allow-list does not name. */
  | 'blocked_address'
  /** More redirects than `maxRedirects` (loops end here too). */
  | 'too_many_redirects'
  /** The whole fetch (DNS, redirects, body) took longer than `timeoutMs`. */
  | 'timeout'
  /** The body exceeds `maxBytes` and the caller asked for refusal rather than truncation. */
  | 'too_large'
  /** Not one of the accepted text media types, or an unknown content encoding. */
  | 'unsupported_content_type'
  /** A non-2xx answer (other than a followed redirect). */
  | 'http_error'
  /** DNS failure, refused connection, TLS failure, or a connection that broke mid-answer. */
  | 'unreachable'
  /** The caller's signal aborted. */
  | 'aborted'
  /** The page was fetched, but reading its text took longer than the text workers allow. */
  | 'unreadable';

/** A failed page fetch; the message names the URL and the rule, never resolved addresses or bodies. */
export class WebFetchError extends Error {
  /** HTTP status for `http_error`, else null. */
  readonly status: number | null;

  constructor(
    readonly reason: WebFetchErrorReason,
    /** The URL being fetched when it failed (a redirect's target, for failures after a redirect). */
    readonly url: string,
    message: string,
    options: { status?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WebFetchError';
    this.status = options.status ?? null;
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Host-name resolution: every address the name has. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.promises.lookup(hostname, { all: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

export interface SafeFetchOptions {
  allowList: TargetAllowList;
  /** Deadline for the whole fetch: DNS, every redirect hop and the body. */
  timeoutMs: number;
  /** Body bytes kept, after content decoding (gzip, br, deflate). */
  maxBytes: number;
  maxRedirects: number;
  userAgent: string;
  /**
   * What to do with a body larger than `maxBytes`: `truncate` (default) keeps the first `maxBytes`
   * and sets `truncated` (the start of a page is what extraction needs); `refuse` throws `too_large`.
   */
  onTooLarge?: 'truncate' | 'refuse';
  signal?: AbortSignal;
  /** Defaults to the system resolver (`dns.promises.lookup(host, { all: true })`). */
  resolve?: Resolver;
}

export interface SafeFetchResult {
  /** The URL that answered, after redirects. */
  url: string;
  /** Redirect targets followed, in order (empty when there were none). */
  redirects: string[];
  status: number;
  /** Lower-case media type without parameters, e.g. `text/html`. */
  contentType: string;
  /** The encoding the body was decoded with (TextDecoder's name: utf-8, windows-1252, …). */
  encoding: string;
  text: string;
  /** Body bytes kept (after content decoding). */
  bytes: number;
  /** Whether the body was cut at `maxBytes`. */
  truncated: boolean;
}

/** Options from `config.web`; parse once (a malformed allow-list entry throws AllowListEntryError). */
export function safeFetchOptionsFromConfig(
  web: AppConfig['web'],
): Omit<SafeFetchOptions, 'signal' | 'resolve' | 'onTooLarge'> {
  return {
    allowList: TargetAllowList.parse(web.allowedPrivateTargets),
    timeoutMs: web.fetchTimeoutMs,
    maxBytes: web.maxPageBytes,
    maxRedirects: web.maxRedirects,
    userAgent: web.userAgent,
  };
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);
const maxShownUrlLength = 300;

function shown(url: URL | string): string {
  const text = typeof url === 'string' ? url : url.href;
  return text.length > maxShownUrlLength ? `${text.slice(0, maxShownUrlLength)}…` : text;
}

function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** An absolute http(s) URL without credentials: the input, or a redirect's target (`from` set). */
function parseTarget(text: string, from?: URL): URL {
  const invalid = (what: string, problem: string, href: string, cause?: unknown) =>
    new WebFetchError(
      'invalid_url',
      href,
      from === undefined
        ? `${what} ${problem}.`
        : `The redirect from ${shown(from)} leads to ${what}, which ${problem}.`,
      cause === undefined ? {} : { cause },
    );
  let url: URL;
  try {
    url = new URL(text, from);
  } catch (error) {
    throw invalid(`'${shown(text)}'`, 'is not a valid URL', text, error);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(shown(url), 'is not an http or https URL', url.href);
  }
  if (url.username !== '' || url.password !== '') {
    // Neither the message nor the error's url repeats the password.
    const redacted = new URL(url.href);
    redacted.username = '';
    redacted.password = '';
    const problem = 'contains credentials (pages are fetched without them)';
    throw invalid(shown(redacted), problem, redacted.href);
  }
  return url;
}

/** Rejects when the signal aborts; a DNS lookup cannot be cancelled, but it need not be waited for. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** The addresses this hop may connect to; throws `blocked_address` when any of them is refused. */
async function checkTarget(
  url: URL,
  options: SafeFetchOptions,
  signal: AbortSignal,
  refusal: string,
): Promise<ResolvedAddress[]> {
  const host = bareHost(url);
  const port = effectivePort(url);
  const literal = isIP(host);
  if (literal === 0 && isMetadataHostName(host) && !options.allowList.allowsHost(host, port)) {
    throw new WebFetchError(
      'blocked_address',
      url.href,
      `${refusal}: ${host} is a cloud metadata service, which page fetches may not reach.`,
    );
  }
  const addresses: ResolvedAddress[] =
    literal !== 0
      ? [{ address: host, family: literal === 6 ? 6 : 4 }]
      : await abortable((options.resolve ?? systemResolver)(host), signal);
  if (addresses.length === 0) {
    const message = `Could not fetch ${shown(url)}: its host name has no address.`;
    throw new WebFetchError('unreachable', url.href, message);
  }
  // Refused when ANY address is: the connection could otherwise be steered to the bad one.
  for (const { address } of addresses) {
    const verdict = judgeAddress(options.allowList, host, address, port);
    if (!verdict.allowed) {
      // A literal's address is in the URL already; a name's resolved address stays private.
      const subject = literal !== 0 ? `${host} is` : `${host} resolves to`;
      throw new WebFetchError(
        'blocked_address',
        url.href,
        `${refusal}: ${subject} ${verdict.rule ?? 'a refused address'}, which page fetches may not reach.`,
      );
    }
  }
  return addresses;
}

/** Opens one GET to the checked addresses only: the socket's lookup answers with them, not DNS. */
function openRequest(
  url: URL,
  addresses: ResolvedAddress[],
  options: SafeFetchOptions,
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  const host = bareHost(url);
  const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
    const first = addresses[0] as ResolvedAddress;
    if (lookupOptions.all === true) callback(null, addresses);
    else callback(null, first.address, first.family);
  };
  const secure = url.protocol === 'https:';
  const requestOptions: https.RequestOptions = {
    host,
    port: effectivePort(url),
    path: `${url.pathname}${url.search}`,
    method: 'GET',
    headers: {
      'user-agent': options.userAgent,
      accept: acceptHeader,
      'accept-encoding': 'gzip, deflate, br',
    },
    // A fresh socket per hop: a pooled one could have been opened for another check.
    agent: false,
    lookup,
    signal,
    // SNI and certificate checks use the URL's host name, whatever address the socket reached.
    ...(secure && isIP(host) === 0 ? { servername: host } : {}),
  };
  return new Promise((resolve, reject) => {
    const request = (secure ? https : http).request(requestOptions, resolve);
    request.on('error', reject);
    request.end();
  });
}

function decompressor(response: http.IncomingMessage, url: URL): Transform | null {
  const encoding = (response.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  switch (encoding) {
    case 'identity':
    case '':
      return null;
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      throw new WebFetchError(
        'unsupported_content_type',
        url.href,
        `${shown(url)} was sent with content encoding '${encoding}', which page fetches do not decode.`,
      );
  }
}

/** Reads at most `maxBytes` (decoded); a larger body is cut there or refused. */
async function readBody(
  response: http.IncomingMessage,
  url: URL,
  options: SafeFetchOptions,
  signal: AbortSignal,
): Promise<{ body: Buffer; truncated: boolean }> {
  const refuse = options.onTooLarge === 'refuse';
  const tooLarge = () =>
    new WebFetchError(
      'too_large',
      url.href,
      `${shown(url)} is larger than the ${options.maxBytes}-byte limit for fetched pages.`,
    );
  const declared = Number(response.headers['content-length'] ?? Number.NaN);
  if (refuse && response.headers['content-encoding'] === undefined && declared > options.maxBytes) {
    throw tooLarge();
  }
  const decoder = decompressor(response, url);
  // pipeline() tears the decoder down when the response breaks off, so the loop below cannot hang.
  const source: Readable = decoder === null ? response : pipeline(response, decoder, () => {});
  const onAbort = () => source.destroy(signal.reason as Error);
  signal.addEventListener('abort', onAbort, { once: true });
  const chunks: Buffer[] = [];
  let total = 0;
  let truncated = false;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      const room = options.maxBytes - total;
      if (chunk.length > room) {
        if (refuse) throw tooLarge();
        chunks.push(chunk.subarray(0, room));
        total += room;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      total += chunk.length;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    decoder?.destroy();
  }
  return { body: Buffer.concat(chunks, total), truncated };
}

function checkContentType(response: http.IncomingMessage, url: URL): ContentType {
  const contentType = parseContentType(response.headers['content-type']);
  if (!acceptedMediaTypes.includes(contentType.mediaType)) {
    const what =
      contentType.mediaType === '' ? 'no content type' : `content type '${contentType.mediaType}'`;
    throw new WebFetchError(
      'unsupported_content_type',
      url.href,
      `${shown(url)} answered with ${what}; only ${acceptedMediaTypes.join(', ')} pages are read.`,
    );
  }
  return contentType;
}

const unreachableCodes: Readonly<Record<string, string>> = {
  ENOTFOUND: 'its host name does not resolve',
  EAI_AGAIN: 'its host name could not be resolved',
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
};

function unreachableReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  const known = unreachableCodes[code];
  if (known !== undefined) return known;
  if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code)) {
    return 'the TLS connection could not be established';
  }
  if (code.startsWith('HPE_')) return 'it answered with malformed HTTP';
  return 'the connection failed';
}

type Hop =
  | { kind: 'redirect'; location: string }
  | { kind: 'page'; page: Omit<SafeFetchResult, 'url' | 'redirects'> };

/** One request to checked addresses: a redirect to follow, or the page. */
async function fetchHop(
  url: URL,
  addresses: ResolvedAddress[],
  options: SafeFetchOptions,
  signal: AbortSignal,
): Promise<Hop> {
  const response = await openRequest(url, addresses, options, signal);
  try {
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (redirectStatuses.has(status) && location !== undefined) {
      return { kind: 'redirect', location };
    }
    if (status < 200 || status > 299) {
      const message = `${shown(url)} answered HTTP ${status}.`;
      throw new WebFetchError('http_error', url.href, message, { status });
    }
    const contentType = checkContentType(response, url);
    const { body, truncated } = await readBody(response, url, options, signal);
    const { text, encoding } = decodeBody(body, contentType, truncated);
    const mediaType = contentType.mediaType;
    return {
      kind: 'page',
      page: { status, contentType: mediaType, encoding, text, bytes: body.length, truncated },
    };
  } finally {
    // This hop's connection is done either way: a redirect's or a refused answer's body is not read.
    response.destroy();
  }
}

/** Fetches a page for reading: http(s) only, SSRF-checked on every hop, bounded in time and size. */
export async function safeFetch(
  input: string,
  options: SafeFetchOptions,
): Promise<SafeFetchResult> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
  const signal =
    options.signal === undefined
      ? deadline.signal
      : AbortSignal.any([options.signal, deadline.signal]);
  let url = parseTarget(input);
  const redirects: string[] = [];
  let refusal = `Refused to fetch ${shown(url)}`;
  try {
    for (;;) {
      const addresses = await checkTarget(url, options, signal, refusal);
      const hop = await fetchHop(url, addresses, options, signal);
      if (hop.kind === 'page') return { url: url.href, redirects, ...hop.page };
      const from = url;
      url = parseTarget(hop.location, from);
      if (redirects.length >= options.maxRedirects) {
        throw new WebFetchError(
          'too_many_redirects',
          url.href,
          `${shown(input)} redirected more than ${options.maxRedirects} times.`,
        );
      }
      redirects.push(url.href);
      refusal = `Refused to follow the redirect from ${shown(from)} to ${shown(url)}`;
    }
  } catch (error) {
    if (deadline.signal.aborted) {
      throw new WebFetchError(
        'timeout',
        url.href,
        `Fetching ${shown(url)} took longer than ${options.timeoutMs} ms.`,
        { cause: error },
      );
    }
    if (options.signal?.aborted === true) {
      throw new WebFetchError('aborted', url.href, `Fetching ${shown(url)} was cancelled.`, {
        cause: error,
      });
    }
    if (error instanceof WebFetchError) throw error;
    throw new WebFetchError(
      'unreachable',
      url.href,
      `Could not fetch ${shown(url)}: ${unreachableReason(error)}.`,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
  }
}
