// The plumbing every search provider shares: JSON requests with a timeout and errors that carry
// neither answer bodies nor keys, and the normalisation of results to {title, url, snippet}.
import { truncateText } from '../../../text/cut.js';
import { htmlFragmentText } from '../../../text/html-text.js';

export const searchProviderNames = ['searxng', 'brave', 'tavily'] as const;
export type SearchProviderName = (typeof searchProviderNames)[number];

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export interface SearchOptions {
  /** Results wanted, 1–20 (default 5); providers may return fewer. */
  count?: number;
  signal?: AbortSignal;
}

export type SearchErrorReason =
  /** Its URL or key is missing from the configuration. */
  | 'not_configured'
  /** Empty, or longer than the provider accepts. */
  | 'invalid_query'
  /** A non-2xx answer (a redirect included: base URLs should point at the API itself). */
  | 'http_error'
  /** The answer was not the JSON the provider documents. */
  | 'invalid_response'
  | 'timeout'
  | 'unreachable'
  | 'aborted'
  /** Every provider tried failed (searchWithProviders only). */
  | 'unavailable';

/** A failed search; the message never carries a provider's answer body or key. */
export class SearchProviderError extends Error {
  readonly status: number | null;

  constructor(
    readonly reason: SearchErrorReason,
    /** Null for a failure of several providers together. */
    readonly provider: SearchProviderName | null,
    message: string,
    options: { status?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SearchProviderError';
    this.status = options.status ?? null;
  }
}

export const defaultResultCount = 5;
export const maxResultCount = 20;
const maxSnippetChars = 500;
const maxTitleChars = 300;

/** How messages name each provider. */
export const searchProviderLabels: Readonly<Record<SearchProviderName, string>> = {
  searxng: 'SearXNG',
  brave: 'Brave Search',
  tavily: 'Tavily',
};

/** Results to ask for: 1–20, default 5 (Brave and Tavily accept at most 20). */
export function clampCount(count: number | undefined): number {
  const wanted = Math.trunc(count ?? defaultResultCount);
  return Math.min(maxResultCount, Math.max(1, Number.isFinite(wanted) ? wanted : 1));
}

/** `base` + `path`, keeping any path prefix of the base (a SearXNG behind /searx/, say). */
export function endpoint(base: string, path: string): URL {
  return new URL(path, base.endsWith('/') ? base : `${base}/`);
}

/**
 * Snippets may carry highlighting (<strong>) and entities; the agent wants plain text. Parsed on
 * the event loop, so only as much markup as could make `maxChars` of text is read.
 */
function plainText(value: unknown, maxChars: number): string {
  if (typeof value !== 'string') return '';
  const text = htmlFragmentText(value.slice(0, maxChars * 8));
  return text.length > maxChars ? `${truncateText(text, maxChars - 1).text}…` : text;
}

function httpUrl(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** Maps a provider's result array; entries without an http(s) URL are dropped. */
function normaliseResults(
  items: unknown,
  snippetField: string,
  count: number,
): SearchResult[] | null {
  if (!Array.isArray(items)) return null;
  const results: SearchResult[] = [];
  const seen = new Set<string>();
  for (const item of items as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const record = item as Record<string, unknown>;
    const url = httpUrl(record.url);
    if (url === null || seen.has(dedupeKey(url))) continue;
    seen.add(dedupeKey(url));
    results.push({
      title: plainText(record.title, maxTitleChars) || url,
      url,
      snippet: plainText(record[snippetField], maxSnippetChars),
    });
    if (results.length >= count) break;
  }
  return results;
}

/** URLs that differ only in fragment, trailing slash or host case count as one result. */
export function dedupeKey(url: string): string {
  const parsed = new URL(url);
  parsed.hash = '';
  if (parsed.pathname.length > 1) parsed.pathname = parsed.pathname.replace(/\/+$/, '');
  return parsed.href;
}

export interface ProviderRequest {
  method: 'GET' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body?: string;
  /** Names the secret's variable in a 401/403 message (never its value). */
  keyVariable?: string;
}

function httpFailure(label: string, status: number, request: ProviderRequest): string {
  if (status >= 300 && status < 400) {
    return `${label} answered with a redirect (HTTP ${status}); point its base URL at the API itself.`;
  }
  if ((status === 401 || status === 403) && request.keyVariable !== undefined) {
    return `${label} refused the API key (HTTP ${status}); check ${request.keyVariable}.`;
  }
  if (status === 429) return `${label} is rate limiting requests (HTTP 429); try again later.`;
  return `${label} answered HTTP ${status}.`;
}

/**
 * One JSON request to a provider within `timeoutMs`. Failures become SearchProviderErrors whose
 * message names the provider and status, never the answer body (it may echo the key).
 */
export async function requestJson(
  provider: SearchProviderName,
  request: ProviderRequest,
  options: SearchOptions,
  timeoutMs: number,
  failureMessage: (status: number) => string | null = () => null,
): Promise<Record<string, unknown>> {
  const label = searchProviderLabels[provider];
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal =
    options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
  try {
    // Redirects are not followed: a key header must not travel to wherever a redirect points.
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: 'manual',
      signal,
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw new SearchProviderError(
        'http_error',
        provider,
        failureMessage(response.status) ?? httpFailure(label, response.status, request),
        { status: response.status },
      );
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new SearchProviderError('invalid_response', provider, `${label} did not answer JSON.`, {
        cause: error,
      });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new SearchProviderError(
        'invalid_response',
        provider,
        `${label} answered JSON of an unexpected shape.`,
      );
    }
    return parsed as Record<string, unknown>;
  } catch (error) {
    if (error instanceof SearchProviderError) throw error;
    if (timeout.aborted) {
      throw new SearchProviderError(
        'timeout',
        provider,
        `${label} did not answer within ${timeoutMs} ms.`,
        { cause: error },
      );
    }
    if (options.signal?.aborted === true) {
      throw new SearchProviderError('aborted', provider, `The ${label} search was cancelled.`, {
        cause: error,
      });
    }
    throw new SearchProviderError('unreachable', provider, `Could not reach ${label}.`, {
      cause: error,
    });
  }
}

/** The trimmed query; an empty one is refused before any request. */
export function checkQuery(provider: SearchProviderName, query: string): string {
  const trimmed = query.trim();
  if (trimmed === '') {
    throw new SearchProviderError('invalid_query', provider, 'The search query is empty.');
  }
  return trimmed;
}

/** The provider's result list as SearchResults; `invalid_response` when there is no list. */
export function resultsOf(
  provider: SearchProviderName,
  items: unknown,
  snippetField: string,
  count: number,
): SearchResult[] {
  const results = normaliseResults(items, snippetField, count);
  if (results === null) {
    throw new SearchProviderError(
      'invalid_response',
      provider,
      `${searchProviderLabels[provider]} answered without a results list.`,
    );
  }
  return results;
}
