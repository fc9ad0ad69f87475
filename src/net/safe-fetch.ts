// Fetches a user-supplied http(s) URL without letting it reach internal services (SSRF): every hop's
// addresses are checked and the socket connects to exactly those, under one deadline and a byte cap.
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { AppConfig } from '../config/config.js';
import { TargetAllowList } from './address-policy.js';
import { acceptHeader, decodeBody } from './body-decoding.js';
import { checkContentType, readBody } from './fetch-body.js';
import {
  bareHost,
  checkTarget,
  effectivePort,
  parseTarget,
  type ResolvedAddress,
  type Resolver,
} from './fetch-target.js';
import { shown, unreachableReason, WebFetchError } from './web-fetch-error.js';

export { systemResolver, type ResolvedAddress, type Resolver } from './fetch-target.js';
export { WebFetchError, type WebFetchErrorReason } from './web-fetch-error.js';

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
