// The web agent's configuration: the search services it queries and how it fetches pages (`web`
// in the config file; the allow-list's entries are checked by the loader, with the address policy).
import Type, { type Static } from 'typebox';
import {
  Closed,
  EnvironmentVariableName,
  HttpUrl,
  OptionalInteger,
  type EnvReader,
} from '../../config/config-kit.js';

export const WebFileSchema = Closed({
  searxng_url: Type.Optional(HttpUrl()),
  brave_base_url: Type.Optional(HttpUrl()),
  brave_api_key_env: Type.Optional(EnvironmentVariableName()),
  tavily_base_url: Type.Optional(HttpUrl()),
  tavily_api_key_env: Type.Optional(EnvironmentVariableName()),
  allowed_private_targets: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 }),
  ),
  fetch_timeout_ms: OptionalInteger(100, 120_000),
  max_page_bytes: OptionalInteger(1024, 50 * 1024 * 1024),
  max_redirects: OptionalInteger(0, 20),
  user_agent: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
});

type WebFile = Static<typeof WebFileSchema>;

export function readWebEnv(env: EnvReader): WebFile {
  return { searxng_url: env.url('SEARXNG_URL') };
}

/** Web search and page fetching: the environment's SearXNG, else the file's, else defaults. */
export function webConfig(fromEnv: WebFile, file: WebFile = {}, defaultUserAgent: string) {
  return {
    searxngUrl: fromEnv.searxng_url ?? file.searxng_url ?? null,
    braveBaseUrl: file.brave_base_url ?? 'https://api.search.brave.com',
    braveApiKeyEnv: file.brave_api_key_env ?? 'BRAVE_API_KEY',
    tavilyBaseUrl: file.tavily_base_url ?? 'https://api.tavily.com',
    tavilyApiKeyEnv: file.tavily_api_key_env ?? 'TAVILY_API_KEY',
    allowedPrivateTargets: file.allowed_private_targets ?? [],
    fetchTimeoutMs: file.fetch_timeout_ms ?? 10_000,
    maxPageBytes: file.max_page_bytes ?? 2 * 1024 * 1024,
    maxRedirects: file.max_redirects ?? 5,
    userAgent: file.user_agent ?? defaultUserAgent,
  };
}
