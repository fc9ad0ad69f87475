// Web search through the operator's providers (SearXNG's JSON API, Brave Search API, Tavily), each
// spoken in its own wire format and normalised to {title, url, snippet}.
import type { AppConfig, SecretSource } from '../../../config/config.js';
import {
  checkQuery,
  clampCount,
  dedupeKey,
  endpoint,
  requestJson,
  resultsOf,
  SearchProviderError,
  searchProviderLabels as labels,
  searchProviderNames,
  type ProviderRequest,
  type SearchErrorReason,
  type SearchOptions,
  type SearchProviderName,
  type SearchResult,
} from './search-http.js';

export interface SearchProvider {
  readonly name: SearchProviderName;
  /** How messages name it ("Brave Search"). */
  readonly label: string;
  search(query: string, options?: SearchOptions): Promise<SearchResult[]>;
}

export interface SearchDependencies {
  web: AppConfig['web'];
  secrets: SecretSource;
  /** Per provider request; defaults to `web.fetchTimeoutMs`. */
  timeoutMs?: number;
}

function notConfigured(provider: SearchProviderName, how: string): SearchProviderError {
  return new SearchProviderError(
    'not_configured',
    provider,
    `${labels[provider]} is not configured: ${how}.`,
  );
}

function apiKey(deps: SearchDependencies, variable: string): string | null {
  const key = deps.secrets.get(variable)?.trim();
  return key === undefined || key === '' ? null : key;
}

/**
 * SearXNG: `GET {base}/search?q=…&format=json` → `results[].{title, url, content}`. It has no
 * result-count parameter (a page holds about 20), so the list is cut here. The JSON format must be
 * enabled in the instance's settings.yml (`search.formats`); otherwise it answers 403.
 */
function searxng(deps: SearchDependencies, base: string, timeoutMs: number): SearchProvider {
  return {
    name: 'searxng',
    label: labels.searxng,
    async search(query, options = {}) {
      const q = checkQuery('searxng', query);
      const url = endpoint(base, 'search');
      url.searchParams.set('q', q);
      url.searchParams.set('format', 'json');
      const request: ProviderRequest = {
        method: 'GET',
        url,
        headers: { accept: 'application/json', 'user-agent': deps.web.userAgent },
      };
      const body = await requestJson('searxng', request, options, timeoutMs, (status) =>
        status === 403
          ? 'SearXNG refused JSON output (HTTP 403); enable the json format in search.formats of its settings.yml.'
          : null,
      );
      return resultsOf('searxng', body.results, 'content', clampCount(options.count));
    },
  };
}

/**
 * Brave Search API: `GET {base}/res/v1/web/search?q=…&count=…` with `X-Subscription-Token` →
 * `web.results[].{title, url, description}`. `text_decorations=false` asks for snippets without
 * highlighting markup. Queries are limited to 400 characters and 50 words.
 */
function brave(deps: SearchDependencies, keyVariable: string, timeoutMs: number): SearchProvider {
  return {
    name: 'brave',
    label: labels.brave,
    async search(query, options = {}) {
      const q = checkQuery('brave', query);
      if (q.length > 400 || q.split(/\s+/).length > 50) {
        throw new SearchProviderError(
          'invalid_query',
          'brave',
          'Brave Search accepts queries of at most 400 characters and 50 words.',
        );
      }
      const key = apiKey(deps, keyVariable);
      if (key === null) {
        throw notConfigured('brave', `set the ${keyVariable} environment variable`);
      }
      const count = clampCount(options.count);
      const url = endpoint(deps.web.braveBaseUrl, 'res/v1/web/search');
      url.searchParams.set('q', q);
      url.searchParams.set('count', String(count));
      url.searchParams.set('text_decorations', 'false');
      const body = await requestJson(
        'brave',
        {
          method: 'GET',
          url,
          headers: {
            accept: 'application/json',
            'user-agent': deps.web.userAgent,
            'x-subscription-token': key,
          },
          keyVariable,
        },
        options,
        timeoutMs,
      );
      // No `web` section means no web results (the API leaves out empty sections).
      const web = body.web;
      if (web === undefined) return [];
      const items = typeof web === 'object' && web !== null ? (web as { results?: unknown }) : {};
      return resultsOf('brave', items.results, 'description', count);
    },
  };
}

/**
 * Tavily: `POST {base}/search` with `Authorization: Bearer <key>` and JSON
 * `{query, max_results, search_depth: 'basic', include_answer: false, …}` → `results[].{title, url,
 * content}`. Basic depth costs one credit; the answer, raw content and images are not asked for.
 */
function tavily(deps: SearchDependencies, keyVariable: string, timeoutMs: number): SearchProvider {
  return {
    name: 'tavily',
    label: labels.tavily,
    async search(query, options = {}) {
      const q = checkQuery('tavily', query);
      const key = apiKey(deps, keyVariable);
      if (key === null) {
        throw notConfigured('tavily', `set the ${keyVariable} environment variable`);
      }
      const count = clampCount(options.count);
      const body = await requestJson(
        'tavily',
        {
          method: 'POST',
          url: endpoint(deps.web.tavilyBaseUrl, 'search'),
          headers: {
            accept: 'application/json',
            'content-type': 'application/json',
            'user-agent': deps.web.userAgent,
            authorization: `Bearer ${key}`,
          },
          body: JSON.stringify({
            query: q,
            max_results: count,
            search_depth: 'basic',
            topic: 'general',
            include_answer: false,
            include_raw_content: false,
            include_images: false,
          }),
          keyVariable,
        },
        options,
        timeoutMs,
      );
      return resultsOf('tavily', body.results, 'content', count);
    },
  };
}

/**
 * The provider `name`, reading its key from the secrets when it searches (so a rotated key is
 * picked up). Throws `not_configured` when its URL or key is missing.
 */
export function createSearchProvider(
  name: SearchProviderName,
  deps: SearchDependencies,
): SearchProvider {
  const timeoutMs = deps.timeoutMs ?? deps.web.fetchTimeoutMs;
  switch (name) {
    case 'searxng':
      if (deps.web.searxngUrl === null) {
        throw notConfigured('searxng', 'set web.searxng_url in the config file or SEARXNG_URL');
      }
      return searxng(deps, deps.web.searxngUrl, timeoutMs);
    case 'brave':
      if (apiKey(deps, deps.web.braveApiKeyEnv) === null) {
        throw notConfigured('brave', `set the ${deps.web.braveApiKeyEnv} environment variable`);
      }
      return brave(deps, deps.web.braveApiKeyEnv, timeoutMs);
    case 'tavily':
      if (apiKey(deps, deps.web.tavilyApiKeyEnv) === null) {
        throw notConfigured('tavily', `set the ${deps.web.tavilyApiKeyEnv} environment variable`);
      }
      return tavily(deps, deps.web.tavilyApiKeyEnv, timeoutMs);
  }
}

/** The providers whose URL or key is configured, in the canonical order. */
export function configuredSearchProviders(deps: SearchDependencies): SearchProviderName[] {
  return searchProviderNames.filter((name) => {
    try {
      createSearchProvider(name, deps);
      return true;
    } catch {
      return false;
    }
  });
}

export interface ProviderOutcome {
  name: SearchProviderName;
  /** New (not duplicate) results it contributed. */
  results: number;
  /** Why it failed, when it did (the error's message; safe to show). */
  error: string | null;
  reason: SearchErrorReason | null;
}

export interface MultiSearchResult {
  results: SearchResult[];
  /** The providers asked, in order. */
  providers: ProviderOutcome[];
}

/**
 * Asks the providers in the given order until `count` distinct results are gathered: the next one
 * is asked only when the previous failed, is not configured, or returned fewer (duplicates by URL
 * are dropped). In order rather than all at once because Brave and Tavily bill per query, and the
 * first configured provider usually fills the list. Throws `unavailable` (or `not_configured` when
 * none is configured) only when no results were found and every provider asked failed.
 */
export async function searchWithProviders(
  names: readonly SearchProviderName[],
  query: string,
  deps: SearchDependencies & SearchOptions,
): Promise<MultiSearchResult> {
  const count = clampCount(deps.count);
  if (query.trim() === '') {
    throw new SearchProviderError('invalid_query', null, 'The search query is empty.');
  }
  const results: SearchResult[] = [];
  const seen = new Set<string>();
  const outcomes: ProviderOutcome[] = [];
  const errors: SearchProviderError[] = [];
  for (const name of new Set(names)) {
    if (results.length >= count) break;
    try {
      const provider = createSearchProvider(name, deps);
      const found = await provider.search(query, {
        count,
        ...(deps.signal === undefined ? {} : { signal: deps.signal }),
      });
      let added = 0;
      for (const result of found) {
        const key = dedupeKey(result.url);
        if (seen.has(key) || results.length >= count) continue;
        seen.add(key);
        results.push(result);
        added += 1;
      }
      outcomes.push({ name, results: added, error: null, reason: null });
    } catch (error) {
      if (!(error instanceof SearchProviderError)) throw error;
      // A cancelled run stops here; any other failure passes the query to the next provider.
      if (error.reason === 'aborted') throw error;
      errors.push(error);
      outcomes.push({ name, results: 0, error: error.message, reason: error.reason });
    }
  }
  if (results.length === 0 && errors.length === outcomes.length) {
    if (outcomes.length === 0) {
      throw new SearchProviderError('not_configured', null, 'No search provider is configured.');
    }
    const allUnconfigured = errors.every((error) => error.reason === 'not_configured');
    throw new SearchProviderError(
      allUnconfigured ? 'not_configured' : 'unavailable',
      null,
      `Web search failed: ${errors.map((error) => error.message).join(' ')}`,
    );
  }
  return { results, providers: outcomes };
}
