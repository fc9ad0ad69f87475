// The catalog's token fields mean something only for models that count tokens: transcription and
// speech models list max_tokens and context_length as 0 (integers, as the spec asks) instead of the definition's defaults
// (1024 / 8192, figures nobody configured), and every entry stays a valid OpenAI `Model`.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { openAISchemas } from '../support/openai-schemas.js';
import { bearer, startTestApp, type TestApp } from '../support/test-app.js';

interface Entry {
  name: string;
  type: string;
  max_tokens: number;
  context_length: number;
}

const schemas = openAISchemas();
const numbersWav = new URL('../fixtures/audio/numbers.wav', import.meta.url);

describe.each(allDialects)('the model catalog on $name', (dialect) => {
  let harness: TestApp;
  beforeAll(async () => {
    // The built-in catalog: chat models, an embedding model and the offline speech engines.
    harness = await startTestApp({ dialect });
  });
  afterAll(async () => {
    await harness.close();
  });

  const get = (url: string) =>
    harness.app.inject({ method: 'GET', url, headers: bearer(harness.adminKey) });

  it.each(['/models', '/v1/models'])(
    '%s: token figures for chat and embedding models only; each entry an OpenAI Model',
    async (path) => {
      const response = await get(path);
      expect(response.statusCode).toBe(200);
      const body = response.json<{ data: Entry[]; models: Entry[] }>();
      expect(schemas.problems('ListModelsResponse', body)).toEqual([]);
      for (const entry of body.data) expect(schemas.problems('Model', entry)).toEqual([]);
      const audio = body.models.filter(
        (entry) => entry.type === 'transcription' || entry.type === 'speech',
      );
      expect(audio.map((entry) => entry.type)).toEqual(
        expect.arrayContaining(['transcription', 'speech']),
      );
      for (const entry of audio) {
        expect(entry, entry.name).toMatchObject({ max_tokens: 0, context_length: 0 });
      }
      const textual = body.models.filter(
        (entry) => entry.type === 'chat' || entry.type === 'embedding',
      );
      expect(textual.length).toBeGreaterThan(0);
      for (const entry of textual) {
        expect(Number.isInteger(entry.max_tokens), entry.name).toBe(true);
        expect(Number.isInteger(entry.context_length), entry.name).toBe(true);
      }
      const gpt = body.models.find((entry) => entry.name === 'gpt-4o-mini');
      expect(gpt).toMatchObject({ max_tokens: 16_384, context_length: 128_000 });
      // Prices: the built-in catalog's, dated; free on this machine; unknown where not published.
      const pricing = (name: string) =>
        (body.models.find((entry) => entry.name === name) as { pricing?: unknown } | undefined)
          ?.pricing;
      expect(pricing('gpt-4o-mini')).toMatchObject({
        input_per_mtok: 0.15,
        cached_input_per_mtok: 0.075,
        output_per_mtok: 0.6,
        as_of: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      });
      expect(pricing('qwen2.5-0.5b-instruct')).toMatchObject({
        input_per_mtok: 0,
        output_per_mtok: 0,
      });
      expect(pricing('deepgram-nova-3')).toBeNull();
    },
  );

  it('one speech model and one transcription model, alone', async () => {
    for (const name of ['espeak-ng', 'pocketsphinx-en-us']) {
      for (const prefix of ['', '/v1']) {
        const response = await get(`${prefix}/models/${name}`);
        expect(response.statusCode).toBe(200);
        const entry = response.json<Entry>();
        expect(schemas.problems('Model', entry)).toEqual([]);
        expect(entry).toMatchObject({ name, max_tokens: 0, context_length: 0 });
      }
    }
  });

  it('takes whisper-1 and tts-1 for the offline defaults while OPENAI_API_KEY is unset', async () => {
    expect(process.env.OPENAI_API_KEY ?? '').toBe('');
    const spoken = await harness.app.inject({
      method: 'POST',
      url: '/v1/audio/speech',
      headers: { ...bearer(harness.adminKey), 'content-type': 'application/json' },
      payload: { model: 'tts-1', voice: 'alloy', input: 'one two three', response_format: 'wav' },
    });
    expect(spoken.statusCode, spoken.body.slice(0, 300)).toBe(200);
    expect(spoken.headers['content-type']).toContain('audio/wav');
    const form = new FormData();
    form.append('file', new Blob([readFileSync(numbersWav)]), 'numbers.wav');
    form.append('model', 'whisper-1');
    const upload = new Request('http://localhost/', { method: 'POST', body: form });
    const heard = await harness.app.inject({
      method: 'POST',
      url: '/v1/audio/transcriptions',
      headers: {
        ...bearer(harness.adminKey),
        'content-type': upload.headers.get('content-type') ?? '',
      },
      payload: Buffer.from(await upload.arrayBuffer()),
    });
    expect(heard.statusCode, heard.body.slice(0, 300)).toBe(200);
    expect(heard.json<{ text: string }>().text.length).toBeGreaterThan(0);
  });
});
