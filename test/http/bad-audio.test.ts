// Hostile audio on every path that decodes it, on both dialects: headers with out-of-range fields,
// garbage behind a valid signature, and small files that expand to hours of audio. Each answers
// the contract's 400 `invalid_parameter` naming `audio` (over HTTP, and as an `error` message on
// /v1/ws with the socket left open); the voice stream, which takes raw PCM, stays usable; a fuzz
// over WAV header fields never sees a 5xx; and a 3 MB hostile MP3 holds the event loop no longer
// than a request of the same size that decodes cleanly.
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalog, type ErrorCode } from '../../src/errors/catalog.js';
import { allDialects } from '../support/dialects.js';
import { flacBomb, oggOpusBomb, wavWith } from '../support/hostile-audio.js';
import { allowedBlockMs, measureLoopBlock, remeasured } from '../support/loop-block.js';
import { startSpeechHarness, type SpeechHarness } from '../support/speech-harness.js';
import { bearer } from '../support/test-app.js';
import { connect } from '../support/ws-client.js';

interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

const threeMegabytes = 3 * 1024 * 1024;

/** Each hostile file, and the `config.encoding` it is sent with (none: recognised from bytes). */
const hostile: [name: string, bytes: Buffer, encoding?: string][] = [
  ['a WAV whose header claims 0xFFFFFFFF Hz', wavWith({ sampleRate: 0xffffffff })],
  ['a WAV at 0 Hz', wavWith({ sampleRate: 0 })],
  ['a WAV at 999 Hz', wavWith({ sampleRate: 999 })],
  ['a WAV with 0 channels', wavWith({ channels: 0, blockAlign: 2 })],
  ['a WAV with 65,535 channels', wavWith({ channels: 0xffff, blockAlign: 2 })],
  ['a WAV of 12-bit samples', wavWith({ bitsPerSample: 12, blockAlign: 2 })],
  ['a WAV whose block align is 0', wavWith({ blockAlign: 0 })],
  ['a WAV whose block align is not channels × bytes', wavWith({ blockAlign: 7 })],
  ['a WAV whose format chunk is 8 bytes', wavWith({ fmtSize: 8 })],
  ['a WAVE_FORMAT_EXTENSIBLE header cut short', wavWith({ formatCode: 0xfffe, fmtSize: 18 })],
  [
    'a WAV lasting longer than allowed by its header',
    wavWith({ sampleRate: 1000, blockAlign: 2, dataBytes: 1_400_000 }),
  ],
  [
    'a WAV whose chunk sizes point past the end',
    wavWith({ extraChunks: [['LIST', 0xffffffff, 4]] }),
  ],
  [
    'ID3v2.4 followed by 3 MB of 0xFF, sent as MP3',
    Buffer.concat([Buffer.from('ID3\x04', 'latin1'), Buffer.alloc(threeMegabytes, 0xff)]),
    'MP3',
  ],
  [
    'ID3v2.4 followed by 3 MB of 0xFF, recognised from its bytes',
    Buffer.concat([Buffer.from('ID3\x04', 'latin1'), Buffer.alloc(threeMegabytes, 0xff)]),
  ],
  ['3 MB of 0xFF (MPEG frame syncs with no valid header)', Buffer.alloc(threeMegabytes, 0xff)],
  ['fLaC followed by garbage', Buffer.from('fLaCgarbage garbage garbage garbage', 'latin1')],
  [
    'fLaC followed by 1 MB of 0xFF',
    Buffer.concat([Buffer.from('fLaC'), Buffer.alloc(1 << 20, 0xff)]),
  ],
  ['OggS followed by garbage', Buffer.from('OggS\x00\x02garbage garbage garbage', 'latin1')],
  [
    'an EBML (WebM) signature followed by garbage',
    Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), Buffer.alloc(2048, 0x42)]),
  ],
  ['a 28 KB FLAC that decodes to 2 h 16 min', flacBomb(2000)],
  ['a 43 KB Ogg/Opus that decodes to 20 min', oggOpusBomb(80)],
];

function expectAudioError(status: number, body: ErrorBody | undefined, what: string): void {
  expect(status, what).toBe(400);
  expect(body?.error, what).toMatchObject({
    type: 'invalid_request_error',
    code: 'invalid_parameter',
    param: 'audio',
  });
  // No internal wording leaks: no NaN, no library's or decoder's own message.
  expect(body?.error.message, what).not.toMatch(/NaN|inputSampleRate|MPG123|FLAC__|wasm/i);
}

describe.each(allDialects)('hostile audio ($name)', remeasured, (dialect) => {
  let harness: SpeechHarness;
  let port: number;
  const transcribe = (audio: Buffer, extra: Record<string, unknown> = {}) =>
    harness.app.inject({
      method: 'POST',
      url: '/v1/speech/transcribe',
      headers: bearer(harness.adminKey),
      payload: { audio: audio.toString('base64'), ...extra },
    });

  beforeAll(async () => {
    harness = await startSpeechHarness({ dialect });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    port = (harness.app.server.address() as AddressInfo).port;
  });
  afterAll(() => harness.close());

  it.each(hostile)(
    'POST /v1/speech/transcribe refuses %s with a 400 naming audio',
    async (name, bytes, encoding) => {
      const response = await transcribe(
        bytes,
        encoding === undefined ? {} : { config: { encoding } },
      );
      expectAudioError(response.statusCode, response.json<ErrorBody>(), name);
    },
  );

  it('still transcribes a clean file after the hostile ones (the workers are fine)', async () => {
    const response = await transcribe(wavWith({ noiseSeed: 7 }), { model: 'cloud-whisper' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ text: 'hello from the fake', duration_seconds: 0.1 });
  });

  it('answers each hostile file on /v1/ws with an error message naming audio, and stays open', async () => {
    const socket = await connect(`ws://127.0.0.1:${port}/v1/ws`, bearer(harness.adminKey));
    socket.sendJson({ type: 'init' });
    await socket.next('ready');
    for (const [name, bytes] of hostile) {
      // Messages are at most 1 MiB: larger files go in chunks, the last one final.
      const base64 = bytes.toString('base64');
      const chunk = 600_000;
      for (let offset = 0; offset < base64.length; offset += chunk) {
        socket.sendJson({
          type: 'audio',
          audio: base64.slice(offset, offset + chunk),
          final: offset + chunk >= base64.length,
        });
      }
      const error = await socket.next('error');
      expectAudioError(400, error as unknown as ErrorBody, name);
    }
    socket.sendJson({ type: 'text', text: 'Still here?' });
    expect(await socket.next('turn_end')).toMatchObject({ interrupted: false });
    socket.close();
  }, 120_000);

  it('keeps the voice stream (raw PCM) usable whatever bytes arrive', async () => {
    const created = await harness.app.inject({
      method: 'POST',
      url: '/v1/voice/sessions',
      headers: bearer(harness.adminKey),
      payload: { user_id: 'alice' },
    });
    const session = created.json<{ session_id: string; token: string }>();
    const socket = await connect(
      `ws://127.0.0.1:${port}/v1/voice/stream/${session.session_id}?token=${session.token}`,
    );
    await socket.next('ready');
    for (const [, bytes] of hostile.filter(([, bytes]) => bytes.length < 1_000_000)) {
      socket.socket.send(bytes.subarray(0, 64 * 1024));
      socket.sendJson({ type: 'audio', audio: bytes.subarray(0, 64 * 1024).toString('base64') });
    }
    // An odd number of bytes is not a whole sample: the last byte is dropped, not a failure.
    socket.socket.send(Buffer.from([1, 2, 3]));
    socket.sendJson({ type: 'text', text: 'Still here?' });
    await socket.next('turn_end');
    expect(
      socket.messages.filter(
        (message) =>
          message.type === 'error' &&
          errorCatalog[(message.error as ErrorBody['error']).code as ErrorCode].status >= 500,
      ),
    ).toEqual([]);
    socket.close();
  });

  it('answers 200 or a contract 4xx, never a 5xx, whatever a WAV header claims (fuzz)', async () => {
    const u16 = fc.oneof(
      fc.constantFrom(0, 1, 2, 3, 8, 16, 24, 32, 0xfffe, 0xffff),
      fc.nat(0xffff),
    );
    const u32 = fc.oneof(
      fc.constantFrom(
        0,
        1,
        999,
        1000,
        8000,
        16000,
        44100,
        192_000,
        192_001,
        0x7fffffff,
        0xffffffff,
      ),
      fc.nat(0xffffffff),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            formatCode: fc.constantFrom(0, 1, 2, 3, 0xfffe, 0xffff),
            channels: u16,
            sampleRate: u32,
            byteRate: u32,
            blockAlign: u16,
            bitsPerSample: u16,
            fmtSize: fc.constantFrom(0, 8, 15, 16, 18, 40, 0xffffffff),
            riffSize: u32,
            dataSize: u32,
            dataBytes: fc.nat(4096),
            extraChunks: fc.array(
              fc.tuple(fc.constantFrom('LIST', 'fact', 'data', 'fmt '), u32, fc.nat(32)),
              { maxLength: 2 },
            ),
            noiseSeed: fc.nat(),
          },
          { requiredKeys: [] },
        ),
        async (fields) => {
          const response = await transcribe(wavWith(fields), { model: 'cloud-whisper' });
          if (response.statusCode === 200) {
            const body = response.json<{ duration_seconds: number }>();
            expect(Number.isFinite(body.duration_seconds)).toBe(true);
            return;
          }
          const body = response.json<ErrorBody>();
          expect(response.statusCode, response.body).toBeLessThan(500);
          expect(errorCatalog[body.error.code as ErrorCode]?.status).toBe(response.statusCode);
          expect(body.error.param).toBe('audio');
        },
      ),
      { numRuns: 150, seed: 17 },
    );
  });

  it('holds the event loop no longer for 3 MB of hostile MP3 than for 3 MB that decodes', async () => {
    const control = await measureLoopBlock(() =>
      transcribe(Buffer.alloc(threeMegabytes + 4), {
        config: { encoding: 'LINEAR16', sample_rate: 48_000, channels: 2 },
      }),
    );
    expect(control.result.statusCode, control.result.body).toBe(200);
    const attack = await measureLoopBlock(() =>
      transcribe(
        Buffer.concat([Buffer.from('ID3\x04', 'latin1'), Buffer.alloc(threeMegabytes, 0xff)]),
      ),
    );
    expect(attack.result.statusCode).toBe(400);
    expect(attack.maxBlockMs).toBeLessThanOrEqual(allowedBlockMs(control.maxBlockMs));
  });
});
