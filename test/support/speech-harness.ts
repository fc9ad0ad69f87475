// The real application with the speech models of this machine (pocketsphinx, espeak-ng), a
// sherpa-onnx model whose files are missing, and cloud speech models on a fake upstream — next to
// the fake chat upstream, for the speech and voice suites.
import type { DialectUnderTest } from './dialects.js';
import { fakeModelCatalog, upstreamSecret } from './chat-harness.js';
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from './fake-upstream.js';
import { startFakeSpeechUpstream, type FakeSpeechUpstream } from './fake-speech-upstream.js';
import { startTestApp, type TestApp, type TestAppOptions } from './test-app.js';

export const openAiSpeechKey = 'sk-fake-openai-speech-key-0123456789';
export const deepgramKey = 'dg-fake-deepgram-key-0123456789';

export interface SpeechHarness extends TestApp {
  upstream: FakeUpstream;
  speechUpstream: FakeSpeechUpstream;
}

export function speechModelCatalog(speech: FakeSpeechUpstream) {
  return [
    {
      name: 'pocketsphinx-en-us',
      provider: 'pocketsphinx' as const,
      model: 'en-us',
      type: 'transcription' as const,
      languages: ['en-US'],
    },
    {
      name: 'whisper-tiny',
      provider: 'sherpa-onnx' as const,
      type: 'transcription' as const,
      architecture: 'whisper' as const,
      files: {
        encoder: { source: 'hf:csukuangfj/sherpa-onnx-whisper-tiny/tiny-encoder.int8.onnx' },
        decoder: { source: 'hf:csukuangfj/sherpa-onnx-whisper-tiny/tiny-decoder.int8.onnx' },
        tokens: { source: 'hf:csukuangfj/sherpa-onnx-whisper-tiny/tiny-tokens.txt' },
      },
    },
    {
      name: 'cloud-whisper',
      provider: 'openai-compatible' as const,
      model: 'whisper-1',
      type: 'transcription' as const,
      base_url: speech.openAiBaseUrl,
      api_key_env: 'FAKE_OPENAI_SPEECH_KEY',
      max_retries: 0,
    },
    {
      name: 'deepgram-nova',
      provider: 'deepgram' as const,
      model: 'nova-3',
      type: 'transcription' as const,
      base_url: speech.deepgramBaseUrl,
      api_key_env: 'FAKE_DEEPGRAM_KEY',
      max_retries: 0,
    },
    {
      name: 'espeak-ng',
      provider: 'espeak-ng' as const,
      type: 'speech' as const,
      default_voice: 'en-us',
    },
    {
      name: 'cloud-tts',
      provider: 'openai-compatible' as const,
      model: 'tts-1',
      type: 'speech' as const,
      base_url: speech.openAiBaseUrl,
      api_key_env: 'FAKE_OPENAI_SPEECH_KEY',
      voices: [{ id: 'alloy' }, { id: 'nova', languages: ['en-US'] }],
      max_retries: 0,
    },
    {
      name: 'deepgram-aura',
      provider: 'deepgram' as const,
      model: 'aura-2',
      type: 'speech' as const,
      base_url: speech.deepgramBaseUrl,
      api_key_env: 'FAKE_DEEPGRAM_KEY',
      voices: [{ id: 'aura-2-thalia-en', languages: ['en-US'] }],
      max_retries: 0,
    },
  ];
}

export interface SpeechHarnessOptions extends Omit<TestAppOptions, 'dialect'> {
  dialect: DialectUnderTest;
  upstream?: FakeUpstreamOptions;
  /** Replaces the speech models (the chat models stay). */
  speechModels?: (speech: FakeSpeechUpstream) => unknown[];
}

export async function startSpeechHarness(options: SpeechHarnessOptions): Promise<SpeechHarness> {
  const upstream = await startFakeUpstream({ requireApiKey: upstreamSecret, ...options.upstream });
  const speechUpstream = await startFakeSpeechUpstream({
    openAiKey: openAiSpeechKey,
    deepgramKey,
  });
  const chat = fakeModelCatalog(upstream.baseUrl);
  const speechModels = (options.speechModels ?? speechModelCatalog)(speechUpstream);
  const harness = await startTestApp({
    ...options,
    env: {
      FAKE_UPSTREAM_KEY: upstreamSecret,
      FAKE_OPENAI_SPEECH_KEY: openAiSpeechKey,
      FAKE_DEEPGRAM_KEY: deepgramKey,
      MODELS_DIR: '/nonexistent/speech-test-models',
      ...options.env,
    },
    overrides: {
      default_model: chat.default_model,
      models: [...chat.models, ...speechModels] as never,
      rate_limits: {
        default_tier: 'test',
        tiers: { test: { per_minute: 100_000, per_day: 1_000_000 } },
      },
      speech: { worker_threads: 1 },
      ...options.overrides,
    },
  });
  return {
    ...harness,
    upstream,
    speechUpstream,
    async close() {
      await harness.close();
      await upstream.close();
      await speechUpstream.close();
    },
  };
}
