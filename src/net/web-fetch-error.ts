// Why a page could not be fetched, in words safe to show: over-long URLs are cut short.

const maxShownUrlLength = 300;

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

export function shown(url: URL | string): string {
  const text = typeof url === 'string' ? url : url.href;
  return text.length > maxShownUrlLength ? `${text.slice(0, maxShownUrlLength)}…` : text;
}

export const unreachableCodes: Readonly<Record<string, string>> = {
  ENOTFOUND: 'its host name does not resolve',
  EAI_AGAIN: 'its host name could not be resolved',
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
};

export function unreachableReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  const known = unreachableCodes[code];
  if (known !== undefined) return known;
  if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code)) {
    return 'the TLS connection could not be established';
  }
  if (code.startsWith('HPE_')) return 'it answered with malformed HTTP';
  return 'the connection failed';
}
