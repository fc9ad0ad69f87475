// Speech operations end to end on both dialects: providers, transcription by the system's
// pocketsphinx (a round trip with the built-in synthesiser), every accepted audio format, limits,
// the cloud providers' wire formats against a fake upstream, voices and the voice_chat feature.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { startSpeechHarness, type SpeechHarness } from '../support/speech-harness.js';
import { bearer, createKey } from '../support/test-app.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/audio/${name}`, import.meta.url)).toString('base64');

interface ErrorJson {
  error: { code: string; param: string | null; message: string; required_scope?: string };
}

const numbers = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

/** How many of the spoken numbers the transcription heard (recognisers make mistakes). */
function heard(text: string): number {
  const words = new Set(text.toLowerCase().split(/\s+/));
  return numbers.filter((word) => words.has(word)).length;
}

/** The WAV the fake cloud received: its sample rate and duration. */
function wavInfo(bytes: Uint8Array): { sampleRate: number; seconds: number } {
  const view = Buffer.from(bytes);
  return {
    sampleRate: view.readUInt32LE(24),
    seconds: view.readUInt32LE(40) / 2 / view.readUInt32LE(24),
  };
}

describe.each(allDialects)('speech operations ($name)', (dialect) => {
  let harness: SpeechHarness;
  const post = (url: string, payload: unknown, key = harness.adminKey) =>
    harness.app.inject({ method: 'POST', url, headers: bearer(key), payload: payload as object });
  const get = (url: string, key = harness.adminKey) =>
    harness.app.inject({ method: 'GET', url, headers: bearer(key) });

  beforeAll(async () => {
    harness = await startSpeechHarness({ dialect });
  });
  afterAll(() => harness.close());

  it('lists speech models in the catalog with their type, and why one is unavailable', async () => {
    const response = await get('/v1/models');
    const models = response.json<{
      models: {
        name: string;
        type: string;
        connection: string;
        available: boolean;
        unavailable_reason: string | null;
      }[];
    }>().models;
    expect(models.find((model) => model.name === 'pocketsphinx-en-us')).toMatchObject({
      type: 'transcription',
      connection: 'pocketsphinx',
      available: true,
    });
    expect(models.find((model) => model.name === 'espeak-ng')).toMatchObject({
      type: 'speech',
      available: true,
    });
    const whisper = models.find((model) => model.name === 'whisper-tiny');
    expect(whisper).toMatchObject({
      type: 'transcription',
      connection: 'sherpa-onnx',
      available: false,
    });
    expect(whisper?.unavailable_reason).toContain('npm run models -- pull whisper-tiny');
  });

  it('lists transcription providers, available ones first; the first is the default', async () => {
    const response = await get('/v1/speech/providers');
    expect(response.statusCode).toBe(200);
    const body = response.json<{ providers: Record<string, string>; default: string }>();
    expect(Object.keys(body.providers)).toEqual([
      'pocketsphinx',
      'openai-compatible',
      'deepgram',
      'sherpa-onnx',
    ]);
    expect(body.default).toBe('pocketsphinx');
  });

  it('speaks a sentence with espeak-ng and pocketsphinx hears it back', async () => {
    const spoken = await post('/v1/speech/synthesize', {
      text: numbers.join(' '),
      voice_id: 'en-us+klatt',
      format: 'wav',
      sample_rate: 16000,
    });
    expect(spoken.statusCode).toBe(200);
    const synthesis = spoken.json<{
      audio: string;
      format: string;
      sample_rate: number;
      duration_seconds: number;
    }>();
    expect(synthesis).toMatchObject({ format: 'wav', sample_rate: 16000 });
    expect(synthesis.duration_seconds).toBeGreaterThan(2);
    const transcribed = await post('/v1/speech/transcribe', {
      audio: synthesis.audio,
      config: { language_code: 'en-US' },
    });
    expect(transcribed.statusCode).toBe(200);
    const result = transcribed.json<{
      text: string;
      detected_language: string;
      confidence: number;
      model: string;
    }>();
    expect(result.model).toBe('pocketsphinx-en-us');
    expect(result.detected_language).toBe('en');
    expect(heard(result.text)).toBeGreaterThanOrEqual(5);
    expect(result.confidence).toBeGreaterThan(0);
    expect(result.confidence).toBeLessThanOrEqual(1);
  });

  it('answers MP3 by default, encoded on the server, and raw PCM at the asked rate', async () => {
    const mp3 = await post('/v1/speech/synthesize', { text: 'Hello there.' });
    expect(mp3.statusCode).toBe(200);
    const body = mp3.json<{
      audio: string;
      format: string;
      sample_rate: number;
      duration_seconds: number;
      voice_id: string;
    }>();
    expect(body).toMatchObject({ format: 'mp3', sample_rate: 22050, voice_id: 'en-us' });
    const bytes = Buffer.from(body.audio, 'base64');
    expect(bytes[0] === 0xff || bytes.subarray(0, 3).toString() === 'ID3').toBe(true);
    const pcm = await post('/v1/speech/synthesize', {
      text: 'Hello there.',
      format: 'pcm',
      sample_rate: 8000,
    });
    const raw = pcm.json<{ audio: string; duration_seconds: number }>();
    const samples = Buffer.from(raw.audio, 'base64').length / 2;
    expect(Math.abs(samples / 8000 - raw.duration_seconds)).toBeLessThan(0.05);
    const french = await post('/v1/speech/synthesize', {
      text: 'Bonjour.',
      language_code: 'fr-FR',
    });
    expect(french.json<{ voice_id: string }>().voice_id).toMatch(/^fr/);
  });

  it.each([
    ['numbers.wav', undefined],
    ['numbers.mp3', 'MP3'],
    ['numbers.ogg', 'OGG_OPUS'],
    ['numbers.flac', undefined],
    ['numbers.webm', 'WEBM_OPUS'],
  ])(
    'decodes %s and hands the engine 16 kHz mono audio of the same length',
    async (file, encoding) => {
      const before = harness.speechUpstream.requests.length;
      const response = await post('/v1/speech/transcribe', {
        audio: fixture(file),
        model: 'cloud-whisper',
        ...(encoding === undefined ? {} : { config: { encoding } }),
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toMatchObject({
        text: 'hello from the fake',
        detected_language: 'en',
        provider: 'openai-compatible',
      });
      const sent = harness.speechUpstream.requests[before]!;
      const info = wavInfo(sent.audio!);
      expect(info.sampleRate).toBe(16000);
      expect(info.seconds).toBeGreaterThan(3.8);
      expect(info.seconds).toBeLessThan(4.2);
    },
  );

  it('takes raw LINEAR16 with its sample rate and channels', async () => {
    const before = harness.speechUpstream.requests.length;
    const response = await post('/v1/speech/transcribe', {
      audio: fixture('numbers.raw'),
      config: { encoding: 'LINEAR16', sample_rate: 16000, channels: 1, language_code: 'en-US' },
      model: 'cloud-whisper',
    });
    expect(response.statusCode).toBe(200);
    expect(wavInfo(harness.speechUpstream.requests[before]!.audio!).seconds).toBeCloseTo(3.98, 1);
    expect(harness.speechUpstream.requests[before]!.fields).toMatchObject({
      model: 'whisper-1',
      language: 'en',
      response_format: 'verbose_json',
    });
    // Whisper's segment log-probabilities (-0.1, -0.3) average to exp(-0.2).
    expect(response.json<{ confidence: number }>().confidence).toBeCloseTo(Math.exp(-0.2), 5);
  });

  it('answers silence with empty text, not an error', async () => {
    const silence = Buffer.alloc(32000).toString('base64');
    const response = await post('/v1/speech/transcribe', {
      audio: silence,
      config: { encoding: 'LINEAR16', sample_rate: 16000 },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ text: '' });
  });

  it('refuses bad audio, unknown or unavailable models and a provider that does not match', async () => {
    const invalid = await post('/v1/speech/transcribe', { audio: 'not base64!' });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json<ErrorJson>().error).toMatchObject({
      code: 'invalid_parameter',
      param: 'audio',
    });
    const garbage = await post('/v1/speech/transcribe', {
      audio: Buffer.from('garbage bytes').toString('base64'),
    });
    expect(garbage.statusCode).toBe(400);
    expect(garbage.json<ErrorJson>().error.param).toBe('audio');
    const unknown = await post('/v1/speech/transcribe', {
      audio: fixture('numbers.wav'),
      model: 'nope',
    });
    expect(unknown.json<ErrorJson>().error).toMatchObject({
      code: 'unknown_model',
      param: 'model',
    });
    const wrongKind = await post('/v1/speech/transcribe', {
      audio: fixture('numbers.wav'),
      model: 'espeak-ng',
    });
    expect(wrongKind.statusCode).toBe(400);
    const unavailable = await post('/v1/speech/transcribe', {
      audio: fixture('numbers.wav'),
      model: 'whisper-tiny',
    });
    expect(unavailable.statusCode).toBe(503);
    expect(unavailable.json<ErrorJson>().error.code).toBe('model_unavailable');
    expect(unavailable.json<ErrorJson>().error.message).toContain(
      'npm run models -- pull whisper-tiny',
    );
    const mismatch = await post('/v1/speech/transcribe', {
      audio: fixture('numbers.wav'),
      model: 'cloud-whisper',
      provider: 'deepgram',
    });
    expect(mismatch.json<ErrorJson>().error).toMatchObject({
      code: 'invalid_parameter',
      param: 'provider',
    });
    const badEncoding = await post('/v1/speech/transcribe', {
      audio: fixture('numbers.wav'),
      config: { encoding: 'AAC' },
    });
    expect(badEncoding.json<ErrorJson>().error.param).toBe('config.encoding');
    const nul = await post('/v1/speech/synthesize', { text: 'a\u0000b' });
    expect(nul.statusCode).toBe(400);
    expect(nul.json<ErrorJson>().error.param).toBe('text');
    const voice = await post('/v1/speech/synthesize', { text: 'hi', voice_id: 'xx-nobody' });
    expect(voice.json<ErrorJson>().error).toMatchObject({
      code: 'invalid_parameter',
      param: 'voice_id',
    });
    const mp3Rate = await post('/v1/speech/synthesize', { text: 'hi', sample_rate: 9000 });
    expect(mp3Rate.json<ErrorJson>().error.param).toBe('sample_rate');
  });

  it('transcribes and speaks through Deepgram’s API, and maps its failures', async () => {
    harness.speechUpstream.transcript = 'deepgram heard this';
    const before = harness.speechUpstream.requests.length;
    const listened = await post('/v1/speech/transcribe', {
      audio: fixture('numbers.mp3'),
      provider: 'deepgram',
    });
    expect(listened.statusCode).toBe(200);
    expect(listened.json()).toMatchObject({
      text: 'deepgram heard this',
      confidence: 0.87,
      detected_language: 'en',
      model: 'deepgram-nova',
    });
    const listen = harness.speechUpstream.requests[before]!;
    expect(listen.query).toMatchObject({ model: 'nova-3', detect_language: 'true' });
    expect(listen.headers['content-type']).toBe('audio/wav');
    harness.speechUpstream.transcript = 'hello from the fake';

    const spoken = await post('/v1/speech/synthesize', {
      text: 'Twenty chars of text',
      model: 'deepgram-aura',
      format: 'wav',
    });
    expect(spoken.statusCode).toBe(200);
    expect(spoken.json()).toMatchObject({
      sample_rate: 24000,
      voice_id: 'aura-2-thalia-en',
      duration_seconds: 1,
    });
    expect(harness.speechUpstream.requests.at(-1)!.query).toMatchObject({
      model: 'aura-2-thalia-en',
      encoding: 'linear16',
      container: 'none',
    });

    harness.speechUpstream.failNext(429, { 'retry-after': '7' });
    const limited = await post('/v1/speech/transcribe', {
      audio: fixture('numbers.wav'),
      model: 'deepgram-nova',
    });
    expect(limited.statusCode).toBe(503);
    expect(limited.headers['retry-after']).toBe('7');
    expect(limited.body).not.toContain('Simulated');
  });

  it('speaks through an OpenAI-compatible /audio/speech and lists each model’s voices', async () => {
    const spoken = await post('/v1/speech/synthesize', {
      text: 'Ten chars!',
      model: 'cloud-tts',
      voice_id: 'nova',
      format: 'pcm',
    });
    expect(spoken.statusCode).toBe(200);
    expect(spoken.json()).toMatchObject({
      sample_rate: 24000,
      duration_seconds: 0.5,
      voice_id: 'nova',
    });
    expect(harness.speechUpstream.requests.at(-1)!.json).toEqual({
      model: 'tts-1',
      input: 'Ten chars!',
      voice: 'nova',
      response_format: 'pcm',
    });
    const voices = await get('/v1/speech/voices?language_code=en-US');
    expect(voices.statusCode).toBe(200);
    const models = voices.json<{
      models: { model: string; voices: { id: string; languages: string[] }[] }[];
    }>().models;
    const espeak = models.find((model) => model.model === 'espeak-ng')!;
    expect(espeak.voices.some((voice) => voice.id === 'en-us')).toBe(true);
    expect(
      espeak.voices.every((voice) => voice.languages.some((tag) => tag.startsWith('en'))),
    ).toBe(true);
    expect(
      models.find((model) => model.model === 'cloud-tts')!.voices.map((voice) => voice.id),
    ).toEqual(['alloy', 'nova']);
  });

  it('needs voice:read to transcribe and voice:write to speak', async () => {
    const reader = await createKey(harness.app, harness.adminKey, { scopes: ['voice:read'] });
    const denied = await post('/v1/speech/synthesize', { text: 'hi' }, reader.key);
    expect(denied.statusCode).toBe(403);
    expect(denied.json<ErrorJson>().error.required_scope).toBe('voice:write');
    const allowed = await get('/v1/speech/providers', reader.key);
    expect(allowed.statusCode).toBe(200);
  });

  it('reports voice_chat enabled with a recogniser and a synthesiser available', async () => {
    const features = await get('/v1/features');
    expect(
      features
        .json<{ features: { id: string; enabled: boolean; reason: string | null }[] }>()
        .features.find((feature) => feature.id === 'voice_chat'),
    ).toMatchObject({ enabled: true, reason: null });
  });
});

describe.each(allDialects)('voice_chat without engines or switched off ($name)', (dialect) => {
  it('says which engine is missing, and answers feature_disabled when switched off', async () => {
    const harness = await startSpeechHarness({
      dialect,
      speechModels: () => [
        {
          name: 'whisper-tiny',
          provider: 'sherpa-onnx',
          type: 'transcription',
          architecture: 'tdnn',
          files: {
            model: { file: '/nonexistent/model.onnx' },
            tokens: { file: '/nonexistent/tokens.txt' },
          },
        },
        { name: 'espeak-ng', provider: 'espeak-ng', type: 'speech' },
      ],
    });
    try {
      const features = await harness.app.inject({
        method: 'GET',
        url: '/v1/features',
        headers: bearer(harness.adminKey),
      });
      const voice = features
        .json<{ features: { id: string; enabled: boolean; reason: string | null }[] }>()
        .features.find((feature) => feature.id === 'voice_chat')!;
      expect(voice.enabled).toBe(false);
      expect(voice.reason).toContain('speech recogniser');
      expect(voice.reason).toContain('whisper-tiny');
      expect(voice.reason).not.toContain('synthesiser');
    } finally {
      await harness.close();
    }
    const off = await startSpeechHarness({
      dialect,
      overrides: { features: { voice_chat: false } },
    });
    try {
      const response = await off.app.inject({
        method: 'GET',
        url: '/v1/speech/providers',
        headers: bearer(off.adminKey),
      });
      expect(response.statusCode).toBe(403);
      expect(response.json<ErrorJson>().error.code).toBe('feature_disabled');
    } finally {
      await off.close();
    }
  });
});

describe.each(allDialects)('the built-in speech engines and a config file ($name)', (dialect) => {
  const voiceChat = async (overrides: Record<string, unknown>) => {
    const harness = await startChatHarness({ dialect, overrides });
    try {
      const features = await harness.app.inject({
        method: 'GET',
        url: '/v1/features',
        headers: bearer(harness.adminKey),
      });
      return features
        .json<{ features: { id: string; enabled: boolean; reason: string | null }[] }>()
        .features.find((feature) => feature.id === 'voice_chat')!;
    } finally {
      await harness.close();
    }
  };

  it('keeps voice on when the file lists only chat models (the built-in engines stay)', async () => {
    // The harness lists chat models only; builtin_engines on, as in a user's file.
    const voice = await voiceChat({ speech: { builtin_engines: true } });
    expect(voice).toMatchObject({ enabled: true, reason: null });
  });

  it('says in one sentence what is missing and how to add it when they are switched off', async () => {
    const voice = await voiceChat({ speech: { builtin_engines: false } });
    expect(voice.enabled).toBe(false);
    expect(voice.reason).toBe(
      "Voice chat needs a speech recogniser, and the configuration has none (add a model with type: transcription, provider: pocketsphinx under 'models', or remove speech.builtin_engines: false); it also needs a speech synthesiser, and the configuration has none (add a model with type: speech, provider: espeak-ng under 'models', or remove speech.builtin_engines: false).",
    );
  });
});
