// The search providers against fake SearXNG, Brave and Tavily servers replaying the real JSON shapes:
// the exact requests sent, the mapping to {title, url, snippet}, errors, and the multi-provider order.
import type http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppConfig } from '../../../config/config.js';
import {
  sendJson,
  startTestServer,
  type RecordedRequest,
  type TestServer,
} from '../../../../test/support/web-servers.js';
import { SearchProviderError } from './search-http.js';
import {
  configuredSearchProviders,
  createSearchProvider,
  searchWithProviders,
  type SearchDependencies,
} from './search-providers.js';

const braveKey = 'BSA-test-key-123';
const tavilyKey = 'tvly-test-key-456';
const userAgent = 'web-agent-test/1.0';

/** A SearXNG `format=json` answer (fields as a real instance sends them). */
const searxngAnswer = {
  query: 'how tides work',
  number_of_results: 0,
  results: [
    {
      url: 'https://en.wikipedia.org/wiki/Tide',
      title: 'Tide - Wikipedia',
      content:
        'Tides are the rise and fall of sea levels caused by the combined effects of gravity.',
      engine: 'duckduckgo',
      parsed_url: ['https', 'en.wikipedia.org', '/wiki/Tide', '', '', ''],
      template: 'default.html',
      engines: ['duckduckgo', 'google'],
      positions: [1, 1],
      score: 4,
      category: 'general',
    },
    {
      url: 'https://oceanservice.noaa.gov/facts/tides.html',
      title: 'What are tides?',
      content: 'Tides are very long-period waves that move through the oceans.',
      engine: 'google',
      engines: ['google'],
      positions: [2],
      score: 1,
      category: 'general',
    },
    {
      url: 'https://www.nationalgeographic.org/encyclopedia/tide/',
      title: 'Tide | National Geographic Society',
      content: 'A tide is the rise and fall of the ocean.',
      engine: 'bing',
      engines: ['bing'],
      positions: [3],
      score: 0.5,
      category: 'general',
    },
  ],
  answers: [],
  corrections: [],
  infoboxes: [],
  suggestions: ['tides today'],
  unresponsive_engines: [],
};

/** A Brave Web Search answer: highlighting markup and entities in descriptions, extra sections. */
const braveAnswer = {
  type: 'search',
  query: { original: 'how tides work', more_results_available: true },
  mixed: { type: 'mixed', main: [{ type: 'web', index: 0, all: false }], top: [], side: [] },
  web: {
    type: 'search',
    family_friendly: true,
    results: [
      {
        title: 'Tide - Wikipedia',
        url: 'https://en.wikipedia.org/wiki/Tide/',
        is_source_local: false,
        is_source_both: false,
        description:
          '<strong>Tides</strong> are the rise &amp; fall of sea levels&#39; &#x2014; caused by gravity.',
        profile: {
          name: 'Wikipedia',
          url: 'https://en.wikipedia.org/wiki/Tide',
          long_name: 'en.wikipedia.org',
        },
        language: 'en',
        family_friendly: true,
        type: 'search_result',
        subtype: 'generic',
        meta_url: {
          scheme: 'https',
          netloc: 'en.wikipedia.org',
          hostname: 'en.wikipedia.org',
          path: '› wiki › Tide',
        },
        age: 'March 3, 2024',
      },
      {
        title: 'Bad link',
        url: 'javascript:alert(1)',
        description: 'dropped',
        type: 'search_result',
      },
      {
        title: 'Tides and Water Levels',
        url: 'https://oceanservice.noaa.gov/education/tutorial_tides/',
        description: 'A tutorial on <strong>tides</strong>.',
        type: 'search_result',
      },
      {
        title: 'Tide tables',
        url: 'https://tidesandcurrents.noaa.gov/',
        description: 'Predictions for every station.',
        type: 'search_result',
      },
    ],
  },
};

/** A Tavily /search answer. */
const tavilyAnswer = {
  query: 'how tides work',
  follow_up_questions: null,
  answer: null,
  images: [],
  results: [
    {
      title: 'Tide | Definition, Causes, Types, & Facts | Britannica',
      url: 'https://www.britannica.com/science/tide',
      content:
        'Tide, any of the cyclic deformations of one astronomical body caused by the gravitational forces exerted by others.',
      score: 0.81025416,
      raw_content: null,
    },
  ],
  response_time: 1.67,
  request_id: '123e4567-e89b-12d3-a456-426614174111',
};

type Reply = (request: RecordedRequest, response: http.ServerResponse) => void;

let searxng: TestServer;
let brave: TestServer;
let tavily: TestServer;
const replies: Record<'searxng' | 'brave' | 'tavily', Reply> = {
  searxng: () => undefined,
  brave: () => undefined,
  tavily: () => undefined,
};

const defaultReplies: typeof replies = {
  searxng: (_request, response) => sendJson(response, 200, searxngAnswer),
  brave: (_request, response) => sendJson(response, 200, braveAnswer),
  tavily: (_request, response) => sendJson(response, 200, tavilyAnswer),
};

beforeAll(async () => {
  searxng = await startTestServer((request, response) => replies.searxng(request, response));
  brave = await startTestServer((request, response) => replies.brave(request, response));
  tavily = await startTestServer((request, response) => replies.tavily(request, response));
});

afterAll(async () => {
  await Promise.all([searxng.close(), brave.close(), tavily.close()]);
});

beforeEach(() => {
  Object.assign(replies, defaultReplies);
  for (const server of [searxng, brave, tavily]) server.reset();
});

function deps(
  web: Partial<AppConfig['web']> = {},
  secrets: Record<string, string> = { TEST_BRAVE_KEY: braveKey, TEST_TAVILY_KEY: tavilyKey },
  timeoutMs?: number,
): SearchDependencies {
  return {
    web: {
      searxngUrl: searxng.origin,
      braveBaseUrl: brave.origin,
      braveApiKeyEnv: 'TEST_BRAVE_KEY',
      tavilyBaseUrl: tavily.origin,
      tavilyApiKeyEnv: 'TEST_TAVILY_KEY',
      allowedPrivateTargets: [],
      fetchTimeoutMs: 2_000,
      maxPageBytes: 1_000_000,
      maxRedirects: 3,
      userAgent,
      ...web,
    },
    secrets: { get: (name) => secrets[name] },
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}

async function failure(promise: Promise<unknown>): Promise<SearchProviderError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SearchProviderError) return error;
    throw error;
  }
  throw new Error('expected the search to fail');
}

describe('SearXNG', () => {
  it('sends GET /search?q=…&format=json and maps results[].{title,url,content}', async () => {
    const results = await createSearchProvider('searxng', deps()).search('how tides work', {
      count: 2,
    });
    expect(searxng.requests).toHaveLength(1);
    const [request] = searxng.requests;
    expect(request?.method).toBe('GET');
    expect(request?.url.pathname).toBe('/search');
    expect([...(request?.url.searchParams ?? [])]).toEqual([
      ['q', 'how tides work'],
      ['format', 'json'],
    ]);
    expect(request?.headers.accept).toBe('application/json');
    expect(request?.headers['user-agent']).toBe(userAgent);
    expect(results).toEqual([
      {
        title: 'Tide - Wikipedia',
        url: 'https://en.wikipedia.org/wiki/Tide',
        snippet:
          'Tides are the rise and fall of sea levels caused by the combined effects of gravity.',
      },
      {
        title: 'What are tides?',
        url: 'https://oceanservice.noaa.gov/facts/tides.html',
        snippet: 'Tides are very long-period waves that move through the oceans.',
      },
    ]);
  });

  it('keeps a path prefix of its base URL', async () => {
    await createSearchProvider('searxng', deps({ searxngUrl: `${searxng.origin}/searx/` })).search(
      'tides',
    );
    expect(searxng.requests[0]?.url.pathname).toBe('/searx/search');
  });

  it('explains a 403 (JSON output not enabled)', async () => {
    replies.searxng = (_request, response) => response.writeHead(403).end('Forbidden');
    const error = await failure(createSearchProvider('searxng', deps()).search('tides'));
    expect(error).toMatchObject({ reason: 'http_error', status: 403, provider: 'searxng' });
    expect(error.message).toBe(
      'SearXNG refused JSON output (HTTP 403); enable the json format in search.formats of its settings.yml.',
    );
  });

  it('is not configured without a URL', () => {
    expect(() => createSearchProvider('searxng', deps({ searxngUrl: null }))).toThrow(
      'SearXNG is not configured: set web.searxng_url in the config file or SEARXNG_URL.',
    );
  });
});

describe('Brave Search', () => {
  it('sends GET /res/v1/web/search?q=…&count=… with X-Subscription-Token and maps web.results', async () => {
    const results = await createSearchProvider('brave', deps()).search('how tides work', {
      count: 3,
    });
    const [request] = brave.requests;
    expect(request?.method).toBe('GET');
    expect(request?.url.pathname).toBe('/res/v1/web/search');
    expect([...(request?.url.searchParams ?? [])]).toEqual([
      ['q', 'how tides work'],
      ['count', '3'],
      ['text_decorations', 'false'],
    ]);
    expect(request?.headers['x-subscription-token']).toBe(braveKey);
    expect(request?.headers.accept).toBe('application/json');
    expect(request?.headers['user-agent']).toBe(userAgent);
    expect(results).toEqual([
      {
        title: 'Tide - Wikipedia',
        url: 'https://en.wikipedia.org/wiki/Tide/',
        snippet: "Tides are the rise & fall of sea levels' \u2014 caused by gravity.",
      },
      {
        title: 'Tides and Water Levels',
        url: 'https://oceanservice.noaa.gov/education/tutorial_tides/',
        snippet: 'A tutorial on tides.',
      },
      {
        title: 'Tide tables',
        url: 'https://tidesandcurrents.noaa.gov/',
        snippet: 'Predictions for every station.',
      },
    ]);
  });

  it('clamps count to Brave’s 1–20', async () => {
    await createSearchProvider('brave', deps()).search('tides', { count: 50 });
    expect(brave.requests[0]?.url.searchParams.get('count')).toBe('20');
  });

  it('answers no results when the answer has no web section', async () => {
    replies.brave = (_request, response) =>
      sendJson(response, 200, { type: 'search', query: { original: 'x' } });
    await expect(createSearchProvider('brave', deps()).search('x')).resolves.toEqual([]);
  });

  it('reports a refused key without the key or the answer body', async () => {
    replies.brave = (request, response) =>
      sendJson(response, 401, {
        type: 'ErrorResponse',
        error: {
          code: 'SUBSCRIPTION_TOKEN_INVALID',
          detail: `SECRET_DETAIL for ${String(request.headers['x-subscription-token'])}`,
        },
      });
    const error = await failure(createSearchProvider('brave', deps()).search('tides'));
    expect(error).toMatchObject({ reason: 'http_error', status: 401, provider: 'brave' });
    expect(error.message).toBe(
      'Brave Search refused the API key (HTTP 401); check TEST_BRAVE_KEY.',
    );
    expect(error.message).not.toContain(braveKey);
    expect(error.message).not.toContain('SECRET_DETAIL');
  });

  it('is not configured without a key, and reads the key when it searches', async () => {
    const secrets: Record<string, string> = {};
    expect(() => createSearchProvider('brave', deps({}, secrets))).toThrow(
      'Brave Search is not configured: set the TEST_BRAVE_KEY environment variable.',
    );
    secrets.TEST_BRAVE_KEY = 'first-key';
    const provider = createSearchProvider('brave', deps({}, secrets));
    secrets.TEST_BRAVE_KEY = 'rotated-key';
    await provider.search('tides');
    expect(brave.requests[0]?.headers['x-subscription-token']).toBe('rotated-key');
  });

  it('refuses queries over its limits before sending them', async () => {
    const error = await failure(createSearchProvider('brave', deps()).search('word '.repeat(51)));
    expect(error.reason).toBe('invalid_query');
    expect(brave.requests).toHaveLength(0);
  });

  it('does not follow a redirect (the key would go along)', async () => {
    const elsewhere = await startTestServer((_request, response) =>
      sendJson(response, 200, braveAnswer),
    );
    try {
      replies.brave = (_request, response) =>
        response.writeHead(302, { location: `${elsewhere.origin}/res/v1/web/search` }).end();
      const error = await failure(createSearchProvider('brave', deps()).search('tides'));
      expect(error).toMatchObject({ reason: 'http_error', status: 302 });
      expect(error.message).toBe(
        'Brave Search answered with a redirect (HTTP 302); point its base URL at the API itself.',
      );
      expect(elsewhere.requests).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });
});

describe('Tavily', () => {
  it('sends POST /search with a Bearer key and a JSON body, and maps results', async () => {
    const results = await createSearchProvider('tavily', deps()).search('  how tides work ', {
      count: 4,
    });
    const [request] = tavily.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/search');
    expect(request?.headers.authorization).toBe(`Bearer ${tavilyKey}`);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      query: 'how tides work',
      max_results: 4,
      search_depth: 'basic',
      topic: 'general',
      include_answer: false,
      include_raw_content: false,
      include_images: false,
    });
    expect(results).toEqual([
      {
        title: 'Tide | Definition, Causes, Types, & Facts | Britannica',
        url: 'https://www.britannica.com/science/tide',
        snippet:
          'Tide, any of the cyclic deformations of one astronomical body caused by the gravitational forces exerted by others.',
      },
    ]);
  });

  it('reports server errors and non-JSON answers without their bodies', async () => {
    replies.tavily = (_request, response) => response.writeHead(500).end('SECRET_TRACEBACK');
    const error = await failure(createSearchProvider('tavily', deps()).search('tides'));
    expect(error.message).toBe('Tavily answered HTTP 500.');

    replies.tavily = (_request, response) =>
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>SECRET_PAGE</html>');
    const invalid = await failure(createSearchProvider('tavily', deps()).search('tides'));
    expect(invalid).toMatchObject({
      reason: 'invalid_response',
      message: 'Tavily did not answer JSON.',
    });

    replies.tavily = (_request, response) => sendJson(response, 200, { detail: 'no results key' });
    const shape = await failure(createSearchProvider('tavily', deps()).search('tides'));
    expect(shape.message).toBe('Tavily answered without a results list.');
  });

  it('times out', async () => {
    replies.tavily = () => undefined; // never answers
    const error = await failure(
      createSearchProvider('tavily', deps({}, undefined, 200)).search('tides'),
    );
    expect(error).toMatchObject({
      reason: 'timeout',
      message: 'Tavily did not answer within 200 ms.',
    });
  });

  it('reports a provider that cannot be reached', async () => {
    const gone = await startTestServer(() => undefined);
    await gone.close();
    const error = await failure(
      createSearchProvider('tavily', deps({ tavilyBaseUrl: gone.origin })).search('tides'),
    );
    expect(error).toMatchObject({ reason: 'unreachable', message: 'Could not reach Tavily.' });
  });
});

describe('configuredSearchProviders', () => {
  it('lists the providers with a URL or key', () => {
    expect(configuredSearchProviders(deps())).toEqual(['searxng', 'brave', 'tavily']);
    expect(configuredSearchProviders(deps({ searxngUrl: null }, { TEST_TAVILY_KEY: 'k' }))).toEqual(
      ['tavily'],
    );
    expect(configuredSearchProviders(deps({ searxngUrl: null }, {}))).toEqual([]);
  });
});

describe('searchWithProviders', () => {
  it('uses the first provider that fills the list, and asks no more', async () => {
    const outcome = await searchWithProviders(['searxng', 'brave', 'tavily'], 'tides', {
      ...deps(),
      count: 3,
    });
    expect(outcome.results.map((result) => result.url)).toEqual(
      searxngAnswer.results.map((result) => result.url),
    );
    expect(outcome.providers).toEqual([{ name: 'searxng', results: 3, error: null, reason: null }]);
    expect(brave.requests).toHaveLength(0);
    expect(tavily.requests).toHaveLength(0);
  });

  it('falls through failures and short lists, dropping duplicate URLs', async () => {
    replies.searxng = (_request, response) => response.writeHead(502).end();
    replies.brave = (_request, response) =>
      sendJson(response, 200, {
        type: 'search',
        web: { results: [braveAnswer.web.results[0], braveAnswer.web.results[2]] },
      });
    replies.tavily = (_request, response) =>
      sendJson(response, 200, {
        ...tavilyAnswer,
        results: [
          {
            title: 'Tide again',
            url: 'https://en.wikipedia.org/wiki/Tide#Physics',
            content: 'dup',
          },
          ...tavilyAnswer.results,
        ],
      });
    const outcome = await searchWithProviders(['searxng', 'brave', 'tavily'], 'tides', {
      ...deps(),
      count: 3,
    });
    expect(outcome.results.map((result) => result.url)).toEqual([
      'https://en.wikipedia.org/wiki/Tide/',
      'https://oceanservice.noaa.gov/education/tutorial_tides/',
      'https://www.britannica.com/science/tide',
    ]);
    expect(outcome.providers).toEqual([
      { name: 'searxng', results: 0, error: 'SearXNG answered HTTP 502.', reason: 'http_error' },
      { name: 'brave', results: 2, error: null, reason: null },
      { name: 'tavily', results: 1, error: null, reason: null },
    ]);
  });

  it('skips providers that are not configured', async () => {
    const outcome = await searchWithProviders(['searxng', 'tavily'], 'tides', {
      ...deps({ searxngUrl: null }),
      count: 1,
    });
    expect(outcome.results).toHaveLength(1);
    expect(outcome.providers[0]).toMatchObject({ name: 'searxng', reason: 'not_configured' });
  });

  it('fails when every provider fails, naming each failure', async () => {
    replies.searxng = (_request, response) => response.writeHead(500).end();
    const error = await failure(searchWithProviders(['searxng', 'brave'], 'tides', deps({}, {})));
    expect(error).toMatchObject({ reason: 'unavailable', provider: null });
    expect(error.message).toBe(
      'Web search failed: SearXNG answered HTTP 500. Brave Search is not configured: set the TEST_BRAVE_KEY environment variable.',
    );

    const none = await failure(searchWithProviders(['brave', 'tavily'], 'tides', deps({}, {})));
    expect(none.reason).toBe('not_configured');
  });

  it('refuses an empty query without asking anyone', async () => {
    const error = await failure(searchWithProviders(['searxng'], '   ', deps()));
    expect(error.reason).toBe('invalid_query');
    expect(searxng.requests).toHaveLength(0);
  });
});
