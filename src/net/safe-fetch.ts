// Fetches a user-supplied http(s) URL without letting it reach internal services (SSRF): every hop's
// addresses are checked and the socket connects to exactly those, under one deadline and a byte cap.
// A page is read as text (safeFetch); an image a provider needs as bytes is read as is
// (safeFetchBinary), through the same checks.
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { TargetAllowList } from './address-policy.js';
import { acceptHeader, decodeBody, parseContentType } from './body-decoding.js';
import { checkContentType, readBody } from './fetch-body.js';
import type { SafeFetchOptions, WebFetchSettings } from './fetch-options.js';
import {
  bareHost,
  checkTarget,
  effectivePort,
  parseTarget,
  type ResolvedAddress,
} from './fetch-target.js';
import { shown, unreachableReason, WebFetchError } from './web-fetch-error.js';

export { systemResolver, type ResolvedAddress, type Resolver } from './fetch-target.js';
export type { SafeFetchOptions, WebFetchSettings } from './fetch-options.js';
export { WebFetchError, type WebFetchErrorReason } from './web-fetch-error.js';

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
  web: WebFetchSettings,
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
  accept: string,
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
      accept,
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

/** How a hop's 2xx answer is read: what it asks for, and how its body becomes the result. */
interface BodyReading<T> {
  accept: string;
  read(response: http.IncomingMessage, url: URL, signal: AbortSignal): Promise<T>;
}

type Hop<T> = { kind: 'redirect'; location: string } | { kind: 'body'; body: T };

/** One request to checked addresses: a redirect to follow, or the body as `reading` reads it. */
async function fetchHop<T>(
  url: URL,
  addresses: ResolvedAddress[],
  options: SafeFetchOptions,
  reading: BodyReading<T>,
  signal: AbortSignal,
): Promise<Hop<T>> {
  const response = await openRequest(url, addresses, options, reading.accept, signal);
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
    return { kind: 'body', body: await reading.read(response, url, signal) };
  } finally {
    // This hop's connection is done either way: a redirect's or a refused answer's body is not read.
    response.destroy();
  }
}

/** A page's text: of an accepted text media type, decoded with its character encoding. */
function pageReading(
  options: SafeFetchOptions,
): BodyReading<Omit<SafeFetchResult, 'url' | 'redirects'>> {
  return {
    accept: acceptHeader,
    async read(response, url, signal) {
      const contentType = checkContentType(response, url);
      const { body, truncated } = await readBody(response, url, options, signal);
      const { text, encoding } = decodeBody(body, contentType, truncated);
      return {
        status: response.statusCode ?? 0,
        contentType: contentType.mediaType,
        encoding,
        text,
        bytes: body.length,
        truncated,
      };
    },
  };
}

/** Fetches a page for reading: http(s) only, SSRF-checked on every hop, bounded in time and size. */
export async function safeFetch(
  input: string,
  options: SafeFetchOptions,
): Promise<SafeFetchResult> {
  const { url, redirects, body } = await fetchChecked(input, options, pageReading(options));
  return { url, redirects, ...body };
}

export interface SafeFetchBinaryResult {
  /** The URL that answered, after redirects. */
  url: string;
  /** Lower-case media type without parameters, e.g. `image/png`. */
  contentType: string;
  /** The body as sent (after content decoding), at most `maxBytes`. */
  data: Buffer;
}

/** Which media types a binary fetch takes: the `accept` header sent, and the test of the answer. */
export interface BinaryAccept {
  header: string;
  accepts(mediaType: string): boolean;
  /** How refusals name what was expected: "image/* content". */
  description: string;
}

/**
 * Fetches a body as bytes (an image a provider needs inline) under the same address checks and
 * limits as a page; a body of another media type, or larger than `maxBytes`, is refused.
 */
export async function safeFetchBinary(
  input: string,
  options: SafeFetchOptions,
  accept: BinaryAccept,
): Promise<SafeFetchBinaryResult> {
  const refusing: SafeFetchOptions = { ...options, onTooLarge: 'refuse' };
  const { url, body } = await fetchChecked(input, refusing, {
    accept: accept.header,
    async read(response, url, signal) {
      const { mediaType } = parseContentType(response.headers['content-type']);
      if (!accept.accepts(mediaType)) {
        const what = mediaType === '' ? 'no content type' : `content type '${mediaType}'`;
        throw new WebFetchError(
          'unsupported_content_type',
          url.href,
          `${shown(url)} answered with ${what}; only ${accept.description} is accepted.`,
        );
      }
      const { body } = await readBody(response, url, refusing, signal);
      return { contentType: mediaType, data: body };
    },
  });
  return { url, ...body };
}

/** The checked fetch itself: every hop's target checked, redirects bounded, one deadline. */
async function fetchChecked<T>(
  input: string,
  options: SafeFetchOptions,
  reading: BodyReading<T>,
): Promise<{ url: string; redirects: string[]; body: T }> {
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
      const hop = await fetchHop(url, addresses, options, reading, signal);
      if (hop.kind === 'body') return { url: url.href, redirects, body: hop.body };
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
