// The sherpa-onnx recogniser for real, with a model the test writes (an ONNX CTC graph that hears
// bursts of sound as `Y`): transcription through the HTTP operation on both dialects, and its files
// fetched by `npm run models -- pull` with the chat models' downloader (progress, sha256, resume).
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { loudnessCtcModel } from '../support/onnx/onnx-writer.js';
import { runCli } from '../support/process.js';
import { startSpeechHarness, type SpeechHarness } from '../support/speech-harness.js';
import { bearer } from '../support/test-app.js';

const directory = mkdtempSync(path.join(tmpdir(), 'sherpa-test-'));
const { model, tokens } = loudnessCtcModel();
writeFileSync(path.join(directory, 'model.onnx'), model);
writeFileSync(path.join(directory, 'tokens.txt'), tokens);

/** A 16 kHz WAV with a burst of noise in each [start, end) second range, silence elsewhere. */
function bursts(seconds: number, ranges: [number, number][]): string {
  const rate = 16000;
  const samples = Buffer.alloc(seconds * rate * 2);
  let seed = 7;
  for (let index = 0; index < seconds * rate; index += 1) {
    const time = index / rate;
    if (!ranges.some(([start, end]) => time >= start && time < end)) continue;
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    samples.writeInt16LE(Math.round(((seed / 2 ** 31) * 2 - 1) * 10000), index * 2);
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples.length, 40);
  return Buffer.concat([header, samples]).toString('base64');
}

const sherpaModel = (files: Record<string, unknown>) => ({
  name: 'burst-counter',
  provider: 'sherpa-onnx',
  type: 'transcription',
  architecture: 'tdnn',
  files,
});

afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe.each(allDialects)('sherpa-onnx transcription ($name)', (dialect) => {
  let harness: SpeechHarness;

  beforeAll(async () => {
    harness = await startSpeechHarness({
      dialect,
      speechModels: () => [
        sherpaModel({
          model: { file: path.join(directory, 'model.onnx') },
          tokens: { file: path.join(directory, 'tokens.txt') },
        }),
        { name: 'espeak-ng', provider: 'espeak-ng', type: 'speech' },
      ],
    });
  });
  afterAll(() => harness.close());

  const transcribe = (audio: string) =>
    harness.app.inject({
      method: 'POST',
      url: '/v1/speech/transcribe',
      headers: bearer(harness.adminKey),
      payload: { audio, provider: 'sherpa-onnx' },
    });

  it('runs the model on the decoded, resampled audio: one token per burst of sound', async () => {
    const models = await harness.app.inject({
      method: 'GET',
      url: '/v1/models/burst-counter',
      headers: bearer(harness.adminKey),
    });
    expect(models.json()).toMatchObject({
      available: true,
      type: 'transcription',
      connection: 'sherpa-onnx',
    });
    const two = await transcribe(
      bursts(2, [
        [0.2, 0.6],
        [1.0, 1.4],
      ]),
    );
    expect(two.statusCode, two.body).toBe(200);
    expect(two.json()).toMatchObject({
      text: 'YY',
      model: 'burst-counter',
      provider: 'sherpa-onnx',
    });
    const three = await transcribe(
      bursts(3, [
        [0.2, 0.5],
        [1.0, 1.3],
        [2.0, 2.4],
      ]),
    );
    expect(three.json<{ text: string }>().text).toBe('YYY');
    const quiet = await transcribe(bursts(1, []));
    expect(quiet.json<{ text: string }>().text).toBe('');
  });
});

describe('npm run models -- pull (sherpa-onnx files)', () => {
  it('downloads every file of a sherpa-onnx model, verified by sha256, then lists it as available', async () => {
    const served: Record<string, Buffer> = {
      '/model.onnx': model,
      '/tokens.txt': Buffer.from(tokens),
    };
    const server = createServer((incoming, outgoing) => {
      const body = served[incoming.url ?? ''];
      outgoing.writeHead(body === undefined ? 404 : 200, { 'content-length': body?.length ?? 0 });
      outgoing.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const digest = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
    const modelsDirectory = path.join(directory, 'pulled');
    const configPath = path.join(directory, 'pull.config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        models: [
          sherpaModel({
            model: { source: `http://127.0.0.1:${port}/model.onnx`, sha256: digest(model) },
            tokens: { source: `http://127.0.0.1:${port}/tokens.txt`, sha256: digest(tokens) },
          }),
        ],
      }),
    );
    const env = {
      PLATFORM_CONFIG: configPath,
      MODELS_DIR: modelsDirectory,
      DATABASE_URL: `sqlite:${path.join(directory, 'cli.db')}`,
    };
    try {
      const before = await runCli(['list', '--json'], env, 'models');
      expect(before.code, before.stderr).toBe(0);
      const listed = JSON.parse(before.stdout) as {
        name: string;
        available: boolean;
        reason: string;
      }[];
      expect(listed[0]).toMatchObject({ name: 'burst-counter', available: false });
      expect(listed[0]!.reason).toContain('npm run models -- pull burst-counter');
      const pulled = await runCli(['pull', 'burst-counter'], env, 'models');
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(pulled.stdout).toContain(digest(model));
      expect(
        readFileSync(path.join(modelsDirectory, 'burst-counter', 'model.onnx')).equals(model),
      ).toBe(true);
      expect(existsSync(path.join(modelsDirectory, 'burst-counter', 'tokens.txt'))).toBe(true);
      const after = await runCli(['list', '--json'], env, 'models');
      // The file lists no speech model: the built-in eSpeak NG stays (speech.builtin_engines).
      expect(JSON.parse(after.stdout)).toEqual([
        expect.objectContaining({ name: 'burst-counter', available: true }),
        expect.objectContaining({ name: 'espeak-ng' }),
      ]);
    } finally {
      server.close();
    }
  });
});
