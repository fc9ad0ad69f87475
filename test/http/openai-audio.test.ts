// OpenAI's audio endpoints (/v1/audio/transcriptions, /v1/audio/speech) driven by the official
// `openai` client over real HTTP, on this machine's engines (eSpeak NG speaks, PocketSphinx
// listens): every transcription format held to OpenAI's schemas and to SRT and WebVTT, the speech
// bytes' formats (WAV header, MP3 frame sync, raw 24 kHz PCM) and what they say, OpenAI's model and
// voice names as aliases, speed, and the refusals: a malformed or non-multipart body, a file over
// the audio limit, a missing scope, a format nothing here encodes, a switched-off feature.
import type { AddressInfo } from 'node:net';
import OpenAI, { toFile, type APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { wavWith } from '../support/hostile-audio.js';
import { openAISchemas } from '../support/openai-schemas.js';
import {
  speechModelCatalog,
  startSpeechHarness,
  type SpeechHarness,
} from '../support/speech-harness.js';
import { bearer, createKey } from '../support/test-app.js';

const schemas = openAISchemas('responses-audio');
const maxAudioBytes = 2 * 1024 * 1024;
const numbers = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const spoken = numbers.join(' ');
/** The eSpeak NG voice PocketSphinx hears best. */
const klatt = 'en-us+klatt';

/** How many of the spoken numbers a transcription heard (recognisers make mistakes). */
function heard(text: string): number {
  const words = new Set(text.toLowerCase().split(/[^a-z]+/));
  return numbers.filter((word) => words.has(word)).length;
}

/** A WAV's header fields (16-bit PCM: the canonical 44-byte header the service writes). */
function wavHeader(bytes: Buffer) {
  return {
    riff: bytes.subarray(0, 4).toString('latin1'),
    wave: bytes.subarray(8, 12).toString('latin1'),
    channels: bytes.readUInt16LE(22),
    sampleRate: bytes.readUInt32LE(24),
    bitsPerSample: bytes.readUInt16LE(34),
    dataBytes: bytes.readUInt32LE(40),
  };
}

/** Raw 16-bit mono samples behind a canonical WAV header at `sampleRate`. */
function pcmAsWav(pcm: Buffer, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

/** Whether the bytes open with an MPEG audio frame (11 sync bits) or an ID3 tag. */
const isMp3 = (bytes: Buffer) =>
  bytes.subarray(0, 3).toString('latin1') === 'ID3' ||
  (bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0);

/** Runs `action` and returns the APIError it threw (failing when it did not throw one). */
async function refusal(action: () => Promise<unknown>): Promise<APIError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error;
    throw error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** The contract's error body, which is OpenAI's. */
function errorOf(error: APIError): { code: string; param: string | null; message: string } {
  expect(
    schemas.problems('ErrorResponse', error.error === undefined ? {} : { error: error.error }),
  ).toEqual([]);
  return error.error as { code: string; param: string | null; message: string };
}

const srtCue = /^(\d+)\n(\d\d:\d\d:\d\d,\d{3}) --> (\d\d:\d\d:\d\d,\d{3})\n(.+)$/;
const vttCue = /^(\d\d:\d\d:\d\d\.\d{3}) --> (\d\d:\d\d:\d\d\.\d{3})\n(.+)$/;
const seconds = (stamp: string) => {
  const [hours, minutes, rest] = stamp.split(':');
  return Number(hours) * 3600 + Number(minutes) * 60 + Number(rest!.replace(',', '.'));
};

describe.each(allDialects)(
  'OpenAI’s audio endpoints with the official client on $name',
  (dialect) => {
    let harness: SpeechHarness;
    let root: string;
    let client: OpenAI;
    let listenOnly: OpenAI;
    let speakOnly: OpenAI;
    let voiceKey: string;
    /** eSpeak NG saying the ten numbers, as WAV, from /v1/audio/speech itself (tts-1 stands for it). */
    let numbersWav: Buffer;

    beforeAll(async () => {
      harness = await startSpeechHarness({
        dialect,
        // An alias in the catalog, beside OpenAI's names (the defaults).
        speechModels: (speech) =>
          speechModelCatalog(speech).map((model) =>
            model.name === 'pocketsphinx-en-us' ? { ...model, aliases: ['house-stt'] } : model,
          ),
        overrides: { speech: { worker_threads: 1, max_audio_bytes: maxAudioBytes } },
      });
      await harness.app.listen({ port: 0, host: '127.0.0.1' });
      root = `http://127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
      const keyWith = async (scopes: string[]) =>
        (await createKey(harness.app, harness.adminKey, { scopes })).key;
      voiceKey = await keyWith(['voice:read', 'voice:write']);
      const clientOf = (apiKey: string) =>
        new OpenAI({ baseURL: `${root}/v1`, apiKey, maxRetries: 0 });
      client = clientOf(voiceKey);
      listenOnly = clientOf(await keyWith(['voice:read']));
      speakOnly = clientOf(await keyWith(['voice:write']));
      const response = await client.audio.speech.create({
        model: 'tts-1',
        voice: klatt,
        input: spoken,
        response_format: 'wav',
      });
      numbersWav = Buffer.from(await response.arrayBuffer());
    });
    afterAll(() => harness.close());

    const wavFile = () => toFile(numbersWav, 'numbers.wav', { type: 'audio/wav' });
    /** The first half second of it, where what is said does not matter: cheap to recognise. */
    const clipFile = () =>
      toFile(pcmAsWav(numbersWav.subarray(44, 44 + 24_000), 24_000), 'clip.wav', {
        type: 'audio/wav',
      });

    it('speaks WAV: a 16-bit mono header at 24 kHz, with audio/wav', async () => {
      const response = await client.audio.speech
        .create({ model: 'tts-1', voice: 'alloy', input: 'Hello there.', response_format: 'wav' })
        .asResponse();
      expect(response.headers.get('content-type')).toBe('audio/wav');
      expect(response.headers.get('x-ratelimit-limit-requests')).not.toBeNull();
      const bytes = Buffer.from(await response.arrayBuffer());
      const header = wavHeader(bytes);
      expect(header).toMatchObject({
        riff: 'RIFF',
        wave: 'WAVE',
        channels: 1,
        sampleRate: 24_000,
        bitsPerSample: 16,
      });
      expect(header.dataBytes).toBe(bytes.length - 44);
      expect(header.dataBytes / 2 / 24_000).toBeGreaterThan(0.4);
    });

    it('hears back what it said: whisper-1 is the default recogniser, json as OpenAI’s schema', async () => {
      const transcription = await client.audio.transcriptions.create({
        file: await wavFile(),
        model: 'whisper-1',
      });
      expect(schemas.problems('CreateTranscriptionResponseJson', transcription)).toEqual([]);
      expect(heard(transcription.text)).toBeGreaterThanOrEqual(5);
      expect(transcription.usage).toMatchObject({ type: 'duration' });
    });

    // What the engines say and how it is written: the formats, MP3 and PCM, speed, a catalog alias.
    // The database plays no part in these (it holds the keys and the usage ledger, which the tests
    // above and below exercise on every dialect), so they run on the first dialect's app only:
    // each one is several recognitions and syntheses, the bulk of this file's CPU time.
    describe.runIf(dialect.name === allDialects[0]!.name)(
      'what the engines say, in every format',
      () => {
        it('answers text, srt and vtt as text, with the spoken words in cues that follow each other', async () => {
          const text = await client.audio.transcriptions.create({
            file: await wavFile(),
            model: 'gpt-4o-mini-transcribe',
            response_format: 'text',
          });
          expect(typeof text).toBe('string');
          expect(heard(text)).toBeGreaterThanOrEqual(5);

          const srt = await client.audio.transcriptions.create({
            file: await wavFile(),
            model: 'whisper-1',
            response_format: 'srt',
          });
          const srtCues = srt.trim().split(/\n\n+/);
          expect(srtCues.length).toBeGreaterThanOrEqual(1);
          let previousEnd = 0;
          srtCues.forEach((cue, index) => {
            const match = srtCue.exec(cue);
            expect(match, cue).not.toBeNull();
            expect(Number(match![1])).toBe(index + 1);
            const [start, end] = [seconds(match![2]!), seconds(match![3]!)];
            expect(start).toBeGreaterThanOrEqual(previousEnd);
            expect(end).toBeGreaterThan(start);
            previousEnd = end;
          });
          expect(
            heard(srtCues.map((cue) => srtCue.exec(cue)![4]).join(' ')),
          ).toBeGreaterThanOrEqual(5);

          const vttResponse = await client.audio.transcriptions
            .create({ file: await wavFile(), model: 'whisper-1', response_format: 'vtt' })
            .asResponse();
          expect(vttResponse.headers.get('content-type')).toMatch(/^text\/vtt/);
          const vtt = await vttResponse.text();
          const [signature, ...vttCues] = vtt.trim().split(/\n\n+/);
          expect(signature).toBe('WEBVTT');
          expect(vttCues).toHaveLength(srtCues.length);
          for (const cue of vttCues) expect(vttCue.test(cue), cue).toBe(true);
        });

        it('answers verbose_json with the engine’s segments and word times, as OpenAI’s schema', async () => {
          const duration = wavHeader(numbersWav).dataBytes / 2 / 24_000;
          const verbose = await client.audio.transcriptions.create({
            file: await wavFile(),
            model: 'whisper-1',
            response_format: 'verbose_json',
            timestamp_granularities: ['word', 'segment'],
            language: 'en',
            temperature: 0.2,
          });
          expect(schemas.problems('CreateTranscriptionResponseVerboseJson', verbose)).toEqual([]);
          expect(verbose.language).toBe('english');
          expect(verbose.duration).toBeCloseTo(duration, 2);
          expect(heard(verbose.text)).toBeGreaterThanOrEqual(5);
          const segments = verbose.segments!;
          expect(segments.length).toBeGreaterThanOrEqual(1);
          expect(segments.map((segment) => segment.text).join(' ')).toBe(verbose.text);
          // Positions in the audio, in order: each segment starts where an earlier one ended or later.
          let previousEnd = 0;
          for (const segment of segments) {
            expect(segment.temperature).toBe(0.2);
            expect(segment.end).toBeGreaterThan(segment.start);
            expect(segment.start).toBeGreaterThanOrEqual(previousEnd);
            previousEnd = segment.end;
          }
          const words = verbose.words!;
          expect(words.map((word) => word.word).join(' ')).toBe(verbose.text);
          for (const [index, word] of words.entries()) {
            expect(word.end).toBeGreaterThan(word.start);
            if (index > 0) expect(word.start).toBeGreaterThanOrEqual(words[index - 1]!.end);
          }
          // Segments only, OpenAI's default granularity.
          const plain = await client.audio.transcriptions.create({
            file: await wavFile(),
            model: 'whisper-1',
            response_format: 'verbose_json',
          });
          expect(schemas.problems('CreateTranscriptionResponseVerboseJson', plain)).toEqual([]);
          expect(plain.segments?.length).toBe(segments.length);
          expect(plain.words).toBeUndefined();
        });

        it('speaks MP3 (the default) and raw 24 kHz PCM, which decode to the same speech', async () => {
          const mp3 = Buffer.from(
            await (
              await client.audio.speech.create({ model: 'tts-1-hd', voice: klatt, input: spoken })
            ).arrayBuffer(),
          );
          expect(isMp3(mp3)).toBe(true);
          const fromMp3 = await client.audio.transcriptions.create({
            file: await toFile(mp3, 'numbers.mp3', { type: 'audio/mpeg' }),
            model: 'whisper-1',
          });
          expect(heard(fromMp3.text)).toBeGreaterThanOrEqual(5);

          const response = await client.audio.speech
            .create({
              model: 'gpt-4o-mini-tts',
              voice: klatt,
              input: spoken,
              response_format: 'pcm',
            })
            .asResponse();
          expect(response.headers.get('content-type')).toBe('audio/pcm');
          const pcm = Buffer.from(await response.arrayBuffer());
          // No header: the samples alone, as long as the WAV's (both are 24 kHz, 16-bit, mono)…
          expect(pcm.subarray(0, 4).toString('latin1')).not.toBe('RIFF');
          expect(pcm.length % 2).toBe(0);
          expect(pcm.length / wavHeader(numbersWav).dataBytes).toBeCloseTo(1, 1);
          // …and read as 24 kHz they say the numbers.
          const fromPcm = await client.audio.transcriptions.create({
            file: await toFile(pcmAsWav(pcm, 24_000), 'numbers.wav'),
            model: 'whisper-1',
          });
          expect(heard(fromPcm.text)).toBeGreaterThanOrEqual(5);
        });

        it('maps speed onto eSpeak NG’s rate, and refuses a speed it cannot reach', async () => {
          const length = async (speed: number) =>
            (
              await (
                await client.audio.speech.create({
                  model: 'tts-1',
                  voice: 'alloy',
                  input: spoken,
                  response_format: 'pcm',
                  speed,
                })
              ).arrayBuffer()
            ).byteLength;
          const normal = wavHeader(numbersWav).dataBytes;
          expect(await length(2)).toBeLessThan(normal * 0.7);
          expect(await length(0.5)).toBeGreaterThan(normal * 1.4);
          const tooFast = errorOf(
            await refusal(() =>
              client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hi', speed: 4 }),
            ),
          );
          expect(tooFast).toMatchObject({ code: 'invalid_parameter', param: 'speed' });
          expect(tooFast.message).toContain('0.46 to 2.57');
        });

        it('takes catalog names and aliases as they are: a catalog voice heard by an alias', async () => {
          // A catalog model by its name, with one of its own voices, and an alias of the catalog.
          const espeak = await client.audio.speech.create({
            model: 'espeak-ng',
            voice: { id: 'en-us+klatt' },
            input: spoken,
            response_format: 'wav',
            instructions: 'Speak calmly.',
          });
          const heardBack = await client.audio.transcriptions.create({
            file: await toFile(Buffer.from(await espeak.arrayBuffer()), 'klatt.wav'),
            model: 'house-stt',
            response_format: 'json',
          });
          expect(heard(heardBack.text)).toBeGreaterThanOrEqual(5);
        });
      },
    );

    it('refuses opus, aac and flac naming response_format and the formats it has', async () => {
      for (const format of ['opus', 'aac', 'flac'] as const) {
        const error = await refusal(() =>
          client.audio.speech.create({
            model: 'tts-1',
            voice: 'alloy',
            input: 'hi',
            response_format: format,
          }),
        );
        expect(error.status).toBe(400);
        const body = errorOf(error);
        expect(body).toMatchObject({ code: 'invalid_parameter', param: 'response_format' });
        expect(body.message).toContain('mp3, wav, pcm');
      }
    });

    it('takes a cloud model’s own voices, and refuses unknown models and voices', async () => {
      // The cloud model behind the fake has voices of its own: alloy is one, ballad is not.
      await client.audio.speech.create({ model: 'cloud-tts', voice: 'alloy', input: 'hi' });
      const lastSpeech = harness.speechUpstream.requests.at(-1)!;
      expect(lastSpeech.json).toMatchObject({ voice: 'alloy' });
      await client.audio.speech.create({
        model: 'cloud-tts',
        voice: 'ballad',
        input: 'hi',
        speed: 1.5,
      });
      expect(harness.speechUpstream.requests.at(-1)!.json).toMatchObject({
        voice: 'alloy',
        speed: 1.5,
      });

      const unknownModel = errorOf(
        await refusal(() =>
          client.audio.speech.create({ model: 'no-such-tts', voice: 'alloy', input: 'hi' }),
        ),
      );
      expect(unknownModel).toMatchObject({ code: 'unknown_model', param: 'model' });
      expect(unknownModel.message).toContain('no-such-tts');
      const unknownVoice = errorOf(
        await refusal(() =>
          client.audio.speech.create({
            model: 'tts-1',
            voice: 'darth',
            input: 'hi',
          }),
        ),
      );
      expect(unknownVoice).toMatchObject({ code: 'invalid_parameter', param: 'voice' });
      expect(unknownVoice.message).toContain('darth');
      const unknownRecogniser = errorOf(
        await refusal(async () =>
          client.audio.transcriptions.create({ file: await wavFile(), model: 'no-such-stt' }),
        ),
      );
      expect(unknownRecogniser).toMatchObject({ code: 'unknown_model', param: 'model' });
      // A speech model is no recogniser.
      const wrongKind = errorOf(
        await refusal(async () =>
          client.audio.transcriptions.create({ file: await wavFile(), model: 'espeak-ng' }),
        ),
      );
      expect(wrongKind).toMatchObject({ code: 'invalid_parameter', param: 'model' });
    });

    it('refuses what it cannot do as 400s naming the field, in OpenAI’s error body', async () => {
      const cases: [() => Promise<unknown>, string][] = [
        [
          async () =>
            client.audio.transcriptions.create({
              file: await wavFile(),
              model: 'whisper-1',
              response_format: 'diarized_json',
            }),
          'response_format',
        ],
        [
          async () =>
            client.audio.transcriptions.create({
              file: await wavFile(),
              model: 'whisper-1',
              timestamp_granularities: ['word'],
            }),
          'timestamp_granularities[]',
        ],
        [
          async () =>
            client.audio.transcriptions.create({
              file: await wavFile(),
              model: 'whisper-1',
              include: ['logprobs'],
            }),
          'include[]',
        ],
        [
          async () =>
            client.audio.transcriptions.create({
              file: await toFile(wavWith({ sampleRate: 0 }), 'hostile.wav'),
              model: 'whisper-1',
            }),
          'file',
        ],
        [
          async () =>
            client.audio.transcriptions.create({
              file: await toFile(Buffer.from('not audio at all'), 'notes.txt'),
              model: 'whisper-1',
            }),
          'file',
        ],
        [
          () =>
            client.audio.speech.create({
              model: 'tts-1',
              voice: 'alloy',
              input: 'x'.repeat(4097),
            }),
          'input',
        ],
      ];
      for (const [call, param] of cases) {
        const error = await refusal(call);
        expect(error.status, param).toBe(400);
        expect(errorOf(error).param).toBe(param);
      }
    });

    it('needs voice:read to transcribe and voice:write to speak (403 naming the scope)', async () => {
      const transcribing = await refusal(async () =>
        speakOnly.audio.transcriptions.create({ file: await wavFile(), model: 'whisper-1' }),
      );
      expect(transcribing.status).toBe(403);
      expect(errorOf(transcribing)).toMatchObject({ code: 'insufficient_permissions' });
      expect(transcribing.error).toMatchObject({ required_scope: 'voice:read' });
      const speaking = await refusal(() =>
        listenOnly.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hi' }),
      );
      expect(speaking.status).toBe(403);
      expect(speaking.error).toMatchObject({ required_scope: 'voice:write' });
      // Each key does what its scope allows.
      await listenOnly.audio.transcriptions.create({ file: await clipFile(), model: 'whisper-1' });
      await speakOnly.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hi' });
    });

    it('answers 413 to a file over the audio limit, and stays usable on the same client', async () => {
      const large = Buffer.concat([numbersWav, Buffer.alloc(maxAudioBytes)]);
      const error = await refusal(async () =>
        client.audio.transcriptions.create({
          file: await toFile(large, 'large.wav'),
          model: 'whisper-1',
        }),
      );
      expect(error.status).toBe(413);
      expect(errorOf(error)).toMatchObject({ code: 'payload_too_large', param: 'file' });
      expect(errorOf(error).message).toContain(String(maxAudioBytes));
      const after = await client.audio.transcriptions.create({
        file: await wavFile(),
        model: 'whisper-1',
      });
      expect(heard(after.text)).toBeGreaterThanOrEqual(5);
    });

    describe('bodies the client would never send', () => {
      const post = (headers: Record<string, string>, body: string | Buffer) =>
        fetch(`${root}/v1/audio/transcriptions`, {
          method: 'POST',
          headers: { ...bearer(voiceKey), ...headers },
          body,
        });
      const errorBody = async (response: Response) => {
        const body = (await response.json()) as { error: { code: string; param: string | null } };
        expect(schemas.problems('ErrorResponse', body)).toEqual([]);
        return body.error;
      };
      const part = (name: string, value: string, filename?: string) =>
        `--b\r\nContent-Disposition: form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}\r\n\r\n${value}\r\n`;

      it('refuses a malformed multipart body with 400', async () => {
        const truncated = await post(
          { 'content-type': 'multipart/form-data; boundary=b' },
          `${part('model', 'whisper-1')}--b\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF`,
        );
        expect(truncated.status).toBe(400);
        expect(await errorBody(truncated)).toMatchObject({ code: 'invalid_parameter' });
        const noBoundary = await post({ 'content-type': 'multipart/form-data' }, 'garbage');
        expect(noBoundary.status).toBe(400);
        expect(await errorBody(noBoundary)).toMatchObject({ code: 'invalid_parameter' });
      });

      it('refuses JSON with 415, and missing, repeated or unknown fields with 400 naming them', async () => {
        const json = await post({ 'content-type': 'application/json' }, '{"model":"whisper-1"}');
        expect(json.status).toBe(415);
        expect(await errorBody(json)).toMatchObject({ code: 'unsupported_media_type' });
        const multipart = { 'content-type': 'multipart/form-data; boundary=b' };
        const file = part('file', 'RIFF', 'a.wav');
        for (const [body, param] of [
          [`${part('model', 'whisper-1')}--b--\r\n`, 'file'],
          [`${file}--b--\r\n`, 'model'],
          [`${file}${part('model', 'whisper-1')}${part('model', 'whisper-1')}--b--\r\n`, 'model'],
          [`${file}${part('model', 'whisper-1')}${part('colour', 'blue')}--b--\r\n`, 'colour'],
          [
            `${file}${part('model', 'whisper-1')}${part('temperature', 'hot')}--b--\r\n`,
            'temperature',
          ],
          [`${part('voice', 'x', 'v.wav')}${part('model', 'whisper-1')}--b--\r\n`, 'voice'],
          [`${file}${part('model', 'whisper-1')}${part('file', 'x', 'b.wav')}--b--\r\n`, 'file'],
          [`${part('model', 'whisper-1')}${part('file', '', 'empty.wav')}--b--\r\n`, 'file'],
        ] as const) {
          const response = await post(multipart, body);
          expect(response.status, body).toBe(400);
          expect((await errorBody(response)).param, body).toBe(param);
        }
        const tooMany = await post(
          multipart,
          `${file}${Array.from({ length: 20 }, (_, index) => part(`f${index}`, 'x')).join('')}--b--\r\n`,
        );
        expect(tooMany.status).toBe(400);
        await errorBody(tooMany);
      });
    });

    it('documents both operations in OpenAPI: a multipart form in, binary audio out', async () => {
      const document = (await harness.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
        paths: Record<string, Record<string, Record<string, unknown>>>;
      }>();
      const transcriptions = document.paths['/v1/audio/transcriptions']!.post!;
      expect(transcriptions['x-required-scopes']).toEqual(['voice:read']);
      expect(transcriptions['x-feature']).toBe('voice_chat');
      expect(transcriptions).toMatchObject({
        requestBody: {
          content: {
            'multipart/form-data': {
              schema: {
                required: ['file', 'model'],
                properties: { file: { type: 'string', format: 'binary' } },
              },
            },
          },
        },
        responses: {
          200: { content: { 'application/json': {}, 'text/plain': {}, 'text/vtt': {} } },
        },
      });
      expect(transcriptions).not.toHaveProperty('x-multipart-body');
      const speech = document.paths['/v1/audio/speech']!.post!;
      expect(speech['x-required-scopes']).toEqual(['voice:write']);
      expect(speech).toMatchObject({
        requestBody: {
          content: { 'application/json': { schema: { required: ['model', 'input', 'voice'] } } },
        },
        responses: {
          200: {
            content: {
              'audio/mpeg': { schema: { type: 'string', format: 'binary' } },
              'audio/wav': {},
              'audio/pcm': {},
            },
          },
        },
      });
    });

    it('counts both routes in the HTTP metrics by their pattern', async () => {
      const metrics = await harness.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: bearer(harness.adminKey),
      });
      expect(metrics.body).toMatch(/route="\/v1\/audio\/transcriptions"[^\n]*status="200"/);
      expect(metrics.body).toMatch(/route="\/v1\/audio\/speech"[^\n]*status="400"/);
    });
  },
);

describe('OpenAI’s audio endpoints, configured otherwise', () => {
  const [dialect] = allDialects;

  it('answers 403 feature_disabled with voice_chat switched off', async () => {
    const harness = await startSpeechHarness({
      dialect: dialect!,
      overrides: { features: { voice_chat: false } },
    });
    try {
      for (const [url, payload] of [
        ['/v1/audio/speech', { model: 'tts-1', voice: 'alloy', input: 'hi' }],
        ['/v1/audio/transcriptions', {}],
      ] as const) {
        const response = await harness.app.inject({
          method: 'POST',
          url,
          headers: bearer(harness.adminKey),
          payload,
        });
        expect(response.statusCode, url).toBe(403);
        expect(response.json<{ error: { code: string } }>().error.code).toBe('feature_disabled');
      }
    } finally {
      await harness.close();
    }
  });

  it('takes OpenAI’s names as they are with speech.openai_aliases off', async () => {
    const harness = await startSpeechHarness({
      dialect: dialect!,
      overrides: { speech: { worker_threads: 1, openai_aliases: false } },
    });
    try {
      const speak = (body: Record<string, unknown>) =>
        harness.app.inject({
          method: 'POST',
          url: '/v1/audio/speech',
          headers: bearer(harness.adminKey),
          payload: { input: 'hi', ...body },
        });
      const model = await speak({ model: 'tts-1', voice: 'en-us' });
      expect(model.statusCode).toBe(400);
      expect(model.json()).toMatchObject({ error: { code: 'unknown_model', param: 'model' } });
      const voice = await speak({ model: 'espeak-ng', voice: 'alloy' });
      expect(voice.statusCode).toBe(400);
      expect(voice.json()).toMatchObject({ error: { param: 'voice' } });
      const named = await speak({ model: 'espeak-ng', voice: 'en-us', response_format: 'wav' });
      expect(named.statusCode).toBe(200);
      expect(named.rawPayload.subarray(0, 4).toString('latin1')).toBe('RIFF');
    } finally {
      await harness.close();
    }
  });
});
