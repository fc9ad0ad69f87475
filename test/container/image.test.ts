// The image as users build and run it (Dockerfile): built from a clean clone of HEAD with podman,
// run with host networking on a free port with a named volume for its data, configured by a file
// mounted into it. It answers health (and its own HEALTHCHECK passes), prints the first admin key to
// its log, chats with a fake OpenAI-compatible upstream on loopback, transcribes (PocketSphinx) and
// synthesises (eSpeak NG) with the built-in engines, keeps its data across a new container on the
// same volume, and stops on SIGTERM with exit status 0. The image's size, the time to health and the
// time to stop are printed and written to test-results/container-image.json (measured, not
// asserted). Skipped, saying why, where podman or its base image is missing.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildImage,
  containersMissing,
  findPodman,
  waitForHealth,
  type BuiltImage,
  type Podman,
} from '../support/containers.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { freePort, repositoryRoot } from '../support/process.js';

const found = await findPodman();
if ('reason' in found)
  containersMissing('The image test (test/container/image.test.ts) is', found.reason);
const podman: Podman | undefined = 'podman' in found ? found.podman : undefined;

const numbers = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const heard = (text: string) => {
  const words = new Set(text.toLowerCase().split(/\s+/));
  return numbers.filter((word) => words.has(word)).length;
};

describe.skipIf(podman === undefined)('the container image', () => {
  const run = randomBytes(4).toString('hex');
  const names = { volume: `platform-image-test-${run}`, container: `platform-image-test-${run}` };
  const directory = mkdtempSync(path.join(tmpdir(), 'platform-image-test-'));
  const measured: Record<string, unknown> = {};
  let image: BuiltImage;
  let upstream: FakeUpstream;
  let port: number;
  let base: string;
  let adminKey: string;
  let appKey: string;

  const p = () => podman!;
  const call = async (method: string, url: string, body?: unknown, key = adminKey) => {
    const response = await fetch(`${base}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  /** Starts a container on the volume; resolves once /v1/health answers, with the seconds taken. */
  async function startContainer(name: string): Promise<number> {
    const started = performance.now();
    await p().ok([
      'run',
      '--detach',
      '--name',
      name,
      '--network=host',
      '--env',
      `PORT=${port}`,
      '--env',
      'HOST=127.0.0.1',
      '--env',
      'PLATFORM_CONFIG=/config/platform.json',
      '--env',
      'IMAGE_TEST_UPSTREAM_KEY=sk-image-test-upstream',
      '--env',
      'MODEL_AUTO_PULL=false',
      '--volume',
      `${names.volume}:/app/data`,
      '--volume',
      `${path.join(directory, 'config')}:/config:ro`,
      image.tag,
    ]);
    return waitForHealth(`${base}/v1/health`, started);
  }

  /** Sends SIGTERM (podman stop) and resolves with the exit status and the seconds it took. */
  async function stopContainer(name: string): Promise<{ exitCode: number; seconds: number }> {
    const started = performance.now();
    await p().ok(['stop', '--time', '60', name], { timeoutMs: 90_000 });
    const seconds = (performance.now() - started) / 1000;
    const state = await p().ok(['inspect', '--format', '{{.State.ExitCode}}', name]);
    return { exitCode: Number(state.trim()), seconds };
  }

  beforeAll(async () => {
    image = await buildImage(p());
    measured.image = {
      source: image.source,
      size_mb: Math.round(image.sizeBytes / 1e6),
      build_seconds: Math.round(image.buildSeconds),
    };
    process.stdout.write(
      `\n[containers] image ${image.tag} from ${image.source}: ${(image.sizeBytes / 1e6).toFixed(0)} MB, built in ${image.buildSeconds.toFixed(0)} s\n`,
    );
    upstream = await startFakeUpstream();
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // Readable by the image's `node` user (uid 1000).
    mkdirSync(path.join(directory, 'config'));
    chmodSync(directory, 0o755);
    writeFileSync(
      path.join(directory, 'config', 'platform.json'),
      JSON.stringify({
        models: [
          {
            name: 'upstream-chat',
            provider: 'openai-compatible',
            model: 'gpt-4o-mini',
            base_url: upstream.baseUrl,
            api_key_env: 'IMAGE_TEST_UPSTREAM_KEY',
          },
        ],
      }),
      { mode: 0o644 },
    );
    await p().ok(['volume', 'create', names.volume]);
  }, 45 * 60_000);

  afterAll(async () => {
    if (podman !== undefined) {
      for (const name of [names.container, `${names.container}-2`]) {
        await p().run(['rm', '--force', '--time', '0', name]);
      }
      await p().run(['volume', 'rm', '--force', names.volume]);
    }
    await upstream?.close();
    rmSync(directory, { recursive: true, force: true });
    const results = path.join(repositoryRoot, 'test-results');
    mkdirSync(results, { recursive: true });
    writeFileSync(
      path.join(results, 'container-image.json'),
      `${JSON.stringify(measured, null, 2)}\n`,
    );
    process.stdout.write(`[containers] measured: ${JSON.stringify(measured)}\n`);
  });

  it('starts, answers health, passes its HEALTHCHECK and prints the first admin key', async () => {
    measured.first_start_to_health_seconds = await startContainer(names.container);
    const health = await p().run(['healthcheck', 'run', names.container]);
    expect(health.code, health.stderr).toBe(0);
    const log = await p().ok(['logs', names.container]);
    const key = /This key is shown ONCE[^\n]*\n\s*\n\s+(sk-[A-Za-z0-9]+)\n/.exec(log)?.[1];
    expect(key, log).toBeDefined();
    adminKey = key!;
    expect((await call('GET', '/v1/features')).status).toBe(200);
  });

  it('runs as the node user, not root', async () => {
    const user = await p().ok(['exec', names.container, 'id', '-un']);
    expect(user.trim()).toBe('node');
  });

  it('chats with an OpenAI-compatible upstream on loopback', async () => {
    const chat = await call('POST', '/v1/chat/completions', {
      model: 'upstream-chat',
      messages: [{ role: 'user', content: 'Hello from the image' }],
    });
    expect(chat.status, JSON.stringify(chat.json)).toBe(200);
    const choices = chat.json.choices as Array<{ message: { content: string } }>;
    expect(choices[0]!.message.content).toBe('Echo: Hello from the image');
    expect(upstream.requests.at(-1)?.headers.authorization).toBe('Bearer sk-image-test-upstream');
  });

  it('synthesises with eSpeak NG and transcribes with PocketSphinx, inside the image', async () => {
    const spoken = await call('POST', '/v1/speech/synthesize', {
      text: numbers.join(' '),
      voice_id: 'en-us+klatt',
      format: 'wav',
      sample_rate: 16000,
    });
    expect(spoken.status, JSON.stringify(spoken.json)).toBe(200);
    expect(spoken.json.duration_seconds as number).toBeGreaterThan(2);
    const fixture = readFileSync(path.join(repositoryRoot, 'test/fixtures/audio/numbers.wav'));
    for (const audio of [spoken.json.audio as string, fixture.toString('base64')]) {
      const heardBack = await call('POST', '/v1/speech/transcribe', {
        audio,
        config: { language_code: 'en-US' },
      });
      expect(heardBack.status, JSON.stringify(heardBack.json)).toBe(200);
      expect(heardBack.json.model).toBe('pocketsphinx-en-us');
      expect(heard(heardBack.json.text as string)).toBeGreaterThanOrEqual(5);
    }
  });

  it('stops on SIGTERM with exit status 0', async () => {
    const created = await call('POST', '/v1/api-keys', {
      name: 'kept on the volume',
      scopes: ['models:read'],
    });
    expect(created.status).toBe(201);
    appKey = created.json.key as string;
    const stopped = await stopContainer(names.container);
    measured.sigterm_to_exit_seconds = Number(stopped.seconds.toFixed(2));
    expect(stopped.exitCode).toBe(0);
    const log = await p().ok(['logs', names.container]);
    expect(log).toContain('"msg":"stopped"');
  });

  it('keeps its data in the volume: a new container has the keys and prints no new admin key', async () => {
    const second = `${names.container}-2`;
    measured.restart_to_health_seconds = await startContainer(second);
    expect((await call('GET', '/v1/models', undefined, appKey)).status).toBe(200);
    const keys = await call('GET', '/v1/api-keys');
    expect(JSON.stringify(keys.json)).toContain('kept on the volume');
    expect(await p().ok(['logs', second])).not.toContain('shown ONCE');
    const stopped = await stopContainer(second);
    expect(stopped.exitCode).toBe(0);
  });
});
