// The real application wired to a fake OpenAI-compatible upstream over real HTTP, with a model
// catalog that exercises fallbacks, small context windows and embeddings.
import type { DialectUnderTest } from './dialects.js';
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from './fake-upstream.js';
import { startTestApp, type TestApp, type TestAppOptions } from './test-app.js';

/** The key the platform sends upstream; it must never appear in anything the platform answers. */
export const upstreamSecret = 'sk-upstream-secret-do-not-leak-0123456789';

export interface ChatHarness extends TestApp {
  upstream: FakeUpstream;
}

/**
 * Models, all served by the fake upstream:
 * - `fake-chat` (default): max_tokens 256, context 4096, two retries, falls back to `fake-backup`;
 * - `fake-backup`: the fallback;
 * - `fake-small`: context 120 tokens, max_tokens 20 (for trimming);
 * - `fake-slow`: timeout 300 ms, no retries, no fallback;
 * - `fake-embed`: an embedding model.
 */
export function fakeModelCatalog(baseUrl: string) {
  const common = {
    provider: 'openai-compatible' as const,
    base_url: baseUrl,
    api_key_env: 'FAKE_UPSTREAM_KEY',
  };
  return {
    default_model: 'fake-chat',
    models: [
      {
        ...common,
        name: 'fake-chat',
        display_name: 'Fake chat',
        model: 'gpt-4o-mini',
        max_tokens: 256,
        context_length: 4096,
        max_retries: 2,
        timeout_ms: 5000,
        fallbacks: ['fake-backup'],
      },
      {
        ...common,
        name: 'fake-backup',
        model: 'gpt-4o',
        max_tokens: 256,
        context_length: 4096,
        max_retries: 0,
        timeout_ms: 5000,
      },
      {
        ...common,
        name: 'fake-small',
        model: 'gpt-4o-mini',
        max_tokens: 20,
        context_length: 120,
        max_retries: 0,
        timeout_ms: 5000,
      },
      {
        ...common,
        name: 'fake-slow',
        model: 'gpt-4o-mini',
        max_tokens: 256,
        context_length: 4096,
        max_retries: 0,
        timeout_ms: 300,
      },
      {
        ...common,
        name: 'fake-embed',
        model: 'text-embedding-3-small',
        type: 'embedding' as const,
        max_tokens: 1,
        context_length: 8191,
        max_retries: 0,
      },
    ],
  };
}

export interface ChatHarnessOptions extends Omit<TestAppOptions, 'dialect'> {
  dialect: DialectUnderTest;
  upstream?: FakeUpstreamOptions;
  /**
   * Models added to the fake catalog (for example this machine's speech engines); a function is
   * given the fake upstream's base URL, for more models served by it.
   */
  extraModels?:
    | ReadonlyArray<Record<string, unknown>>
    | ((baseUrl: string) => ReadonlyArray<Record<string, unknown>>);
}

/** The speech engines that need no download: espeak-ng always, PocketSphinx when installed. */
export const offlineSpeechModels = [
  {
    name: 'pocketsphinx-en-us',
    provider: 'pocketsphinx',
    model: 'en-us',
    type: 'transcription',
    languages: ['en-US'],
  },
  { name: 'espeak-ng', provider: 'espeak-ng', type: 'speech', default_voice: 'en-us' },
] as const;

/** Starts a fake upstream and the platform configured to use it (as a config file would). */
export async function startChatHarness(options: ChatHarnessOptions): Promise<ChatHarness> {
  const upstream = await startFakeUpstream({ requireApiKey: upstreamSecret, ...options.upstream });
  const catalog = fakeModelCatalog(upstream.baseUrl);
  const extraModels =
    typeof options.extraModels === 'function'
      ? options.extraModels(upstream.baseUrl)
      : (options.extraModels ?? []);
  const harness = await startTestApp({
    ...options,
    env: { FAKE_UPSTREAM_KEY: upstreamSecret, ...options.env },
    overrides: {
      ...catalog,
      models: [...catalog.models, ...(extraModels as unknown as typeof catalog.models)],
      // Generous limits: these suites test chat, not rate limiting.
      rate_limits: {
        default_tier: 'test',
        tiers: { test: { per_minute: 100_000, per_day: 1_000_000 } },
      },
      ...options.overrides,
    },
  });
  return {
    ...harness,
    upstream,
    async close() {
      await harness.close();
      await upstream.close();
    },
  };
}

/** The last user message's text as the fake upstream echoes it. */
export function echoOf(text: string): string {
  return `Echo: ${text}`;
}
