// Where a fetch may go: an absolute http(s) URL without credentials, whose host resolves only to
// addresses the policy allows.
import dns from 'node:dns';
import { isIP } from 'node:net';
import { isMetadataHostName, judgeAddress } from './address-policy.js';
import type { ResolvedAddress, Resolver, SafeFetchOptions } from './fetch-options.js';
import { shown, WebFetchError } from './web-fetch-error.js';

export type { ResolvedAddress, Resolver } from './fetch-options.js';

export const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.promises.lookup(hostname, { all: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

export function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** An absolute http(s) URL without credentials: the input, or a redirect's target (`from` set). */
export function parseTarget(text: string, from?: URL): URL {
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
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
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
export async function checkTarget(
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
