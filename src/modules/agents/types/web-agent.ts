// WebAgent: searches the web through the configured providers (SearXNG, Brave, Tavily) and reads
// pages — the URLs given, or the top results — through a fetch that refuses private, loopback and
// metadata addresses, with timeouts and size limits.
import Type from 'typebox';
import type { AppConfig, SecretSource } from '../../../config/config.js';
import {
  AppError,
  InvalidParameterError,
  MissingParameterError,
} from '../../../errors/app-error.js';
import type { TextPool } from '../../../text-pool/text-pool.js';
import type { AgentType } from '../agent-type.js';
import { readPage, type WebPage } from '../web/read-page.js';
import { safeFetchOptionsFromConfig, WebFetchError } from '../../../net/safe-fetch.js';
import { SearchProviderError, searchProviderNames } from '../web/search-http.js';
import { searchWithProviders } from '../web/search-providers.js';

export interface WebConfiguration {
  search_providers: Array<(typeof searchProviderNames)[number]>;
  result_count: number;
  fetch_pages: boolean;
  max_pages: number;
  max_page_chars: number;
}

const runOptions = {
  result_count: Type.Integer({ minimum: 1, maximum: 20, description: 'Search results to return.' }),
  fetch_pages: Type.Boolean({
    description: 'Read the top results’ pages (when no `urls` are given).',
  }),
  max_pages: Type.Integer({ minimum: 0, maximum: 10, description: 'Pages to read at most.' }),
};

const configurationSchema = Type.Object(
  {
    search_providers: Type.Array(
      Type.Union(searchProviderNames.map((name) => Type.Literal(name))),
      {
        minItems: 1,
        maxItems: 3,
        default: [...searchProviderNames],
        description:
          'Providers asked in this order until enough results are found; each must be configured (web.searxng_url, BRAVE_API_KEY, TAVILY_API_KEY).',
      },
    ),
    result_count: { ...runOptions.result_count, default: 5 },
    fetch_pages: { ...runOptions.fetch_pages, default: true },
    max_pages: { ...runOptions.max_pages, default: 3 },
    max_page_chars: Type.Integer({
      minimum: 500,
      maximum: 100_000,
      default: 20_000,
      description: 'Text kept per page.',
    }),
  },
  { additionalProperties: false },
);

const parametersSchema = Type.Object(
  {
    result_count: Type.Optional(runOptions.result_count),
    fetch_pages: Type.Optional(runOptions.fetch_pages),
    max_pages: Type.Optional(runOptions.max_pages),
  },
  { additionalProperties: false },
);

interface PageFailure {
  url: string;
  reason: string;
  message: string;
}

type SearchResult = { title: string; url: string; snippet: string };
type ReadPage = Pick<WebPage, 'url' | 'title' | 'text'> & { truncated: boolean };
type Settings = WebConfiguration;

interface RunDeps {
  web: AppConfig['web'];
  secrets: SecretSource;
  text: Pick<TextPool, 'page'>;
  fetchOptions: ReturnType<typeof safeFetchOptionsFromConfig>;
  signal: AbortSignal;
}

/** `text`: the worker threads where fetched pages are read (never on the event loop). */
export function createWebAgent(
  web: AppConfig['web'],
  secrets: SecretSource,
  text: Pick<TextPool, 'page'>,
): AgentType<WebConfiguration> {
  // Parsed once: a malformed allow-list entry stops the service at start-up, not a request.
  const fetchOptions = safeFetchOptionsFromConfig(web);
  return {
    id: 'WebAgent',
    name: 'Web agent',
    description:
      'Searches the web (SearXNG, Brave Search, Tavily) and extracts the readable text of pages. Page fetches refuse loopback, private, link-local and metadata addresses unless the configuration allows them.',
    capabilities: ['web_search', 'content_extraction'],
    configurationSchema,
    parametersSchema,
    validateInput(input) {
      const hasQuery = input.query !== undefined && input.query.trim() !== '';
      if (!hasQuery && (input.urls === undefined || input.urls.length === 0)) {
        throw new MissingParameterError(
          'query',
          "WebAgent needs a 'query' to search for, or 'urls' to read.",
        );
      }
      input.urls?.forEach((url, index) => {
        if (!/^https?:\/\//i.test(url)) {
          throw new InvalidParameterError(`urls[${index}]`, `'${url}' is not an http(s) URL.`);
        }
      });
    },
    async run(context, configuration, input, parameters) {
      const settings: Settings = { ...configuration, ...parameters };
      const deps: RunDeps = { web, secrets, text, fetchOptions, signal: context.signal };
      const urls = input.urls ?? [];
      const failures: PageFailure[] = [];
      const { results, providers } = await search(deps, settings, input.query?.trim() ?? '', {
        failures,
        hasUrls: urls.length > 0,
      });
      const targets =
        urls.length > 0
          ? urls
          : settings.fetch_pages
            ? results.slice(0, settings.max_pages).map((result) => result.url)
            : [];
      const pages = await readPages(deps, targets, settings.max_page_chars, failures);
      if (results.length === 0 && pages.length === 0 && failures.length > 0) {
        throw nothingRead(failures[0]!);
      }
      return { results, pages, errors: failures, providers };
    },
  };
}

/** The search step: no query, no search; a provider failure is a recorded failure when there are URLs to read. */
async function search(
  deps: RunDeps,
  settings: Settings,
  query: string,
  outcome: { failures: PageFailure[]; hasUrls: boolean },
): Promise<{ results: SearchResult[]; providers: unknown[] }> {
  if (query === '') return { results: [], providers: [] };
  try {
    const found = await searchWithProviders(settings.search_providers, query, {
      web: deps.web,
      secrets: deps.secrets,
      count: settings.result_count,
      signal: deps.signal,
    });
    return {
      results: found.results.map(({ title, url, snippet }) => ({ title, url, snippet })),
      providers: found.providers,
    };
  } catch (error) {
    if (!(error instanceof SearchProviderError)) throw error;
    // With URLs to read the run can still be useful; without, the search failing is the run failing.
    if (!outcome.hasUrls) {
      throw new AppError('service_unavailable', error.message, { cause: error });
    }
    outcome.failures.push({ url: '', reason: error.reason, message: error.message });
    return { results: [], providers: [] };
  }
}

/** Reads each page in turn; a page that cannot be read is a recorded failure. */
async function readPages(
  deps: RunDeps,
  targets: readonly string[],
  maxChars: number,
  failures: PageFailure[],
): Promise<ReadPage[]> {
  const pages: ReadPage[] = [];
  for (const url of targets) {
    try {
      const page = await readPage(url, {
        ...deps.fetchOptions,
        maxChars,
        signal: deps.signal,
        extract: (body, pageUrl, options) => deps.text.page(body, pageUrl, options, deps.signal),
      });
      pages.push({ url: page.url, title: page.title, text: page.text, truncated: page.truncated });
    } catch (error) {
      if (!(error instanceof WebFetchError)) throw error;
      failures.push({ url, reason: error.reason, message: error.message });
    }
  }
  return pages;
}

/** Nothing found and nothing read: the run fails with its first failure. */
function nothingRead(first: PageFailure): AppError {
  // A refused address, or a page too large or tangled to read in time: the request's fault.
  const refused = first.reason === 'blocked_address' || first.reason === 'unreadable';
  return new AppError(
    refused ? 'invalid_parameter' : 'service_unavailable',
    first.message,
    refused ? { param: 'urls' } : {},
  );
}
