// The service as `npm start` runs it: the esbuild bundle (scripts/build-server.mjs), not the
// TypeScript sources every other test runs. Built into a scratch folder inside the repository
// (packages resolve from node_modules as they do for dist/), then started and used over HTTP for
// what depends on the bundle's layout: the package's own files (version, web app), data copied
// beside the bundle (the intent model), the audio and text worker threads' entries, chunks loaded lazily
// (the OpenAI-compatible path), and the command-line tools.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.js';
import { repositoryRoot, runCli, startService, type RunningService } from './support/process.js';

// The run's build (test/support/global-setup.ts), else one of this file's own.
const ownBuild = process.env.TEST_BUILT_SERVICE_DIR === undefined;
const buildDirectory =
  process.env.TEST_BUILT_SERVICE_DIR ??
  path.join(repositoryRoot, 'node_modules', '.cache', `built-service-test-${process.pid}`);
const dataDirectory = mkdtempSync(path.join(tmpdir(), 'platform-built-'));
const adminKey = generateApiKey();
const packageVersion = (
  JSON.parse(readFileSync(path.join(repositoryRoot, 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

let upstream: FakeUpstream;
let service: RunningService;
let env: Record<string, string>;

async function call(method: string, url: string, body?: unknown) {
  const response = await fetch(`http://127.0.0.1:${service.port}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${adminKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

beforeAll(async () => {
  if (ownBuild) {
    execFileSync(process.execPath, ['scripts/build-server.mjs', '--outdir', buildDirectory], {
      cwd: repositoryRoot,
      stdio: 'pipe',
    });
  }
  upstream = await startFakeUpstream();
  const configFile = path.join(dataDirectory, 'platform.config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      default_model: 'built-upstream',
      models: [
        {
          name: 'built-upstream',
          provider: 'openai-compatible',
          model: 'gpt-4o-mini',
          base_url: upstream.baseUrl,
          max_tokens: 256,
          context_length: 4096,
        },
        { name: 'espeak-ng', provider: 'espeak-ng', type: 'speech', default_voice: 'en-us' },
      ],
    }),
  );
  env = {
    DATABASE_URL: `sqlite:${path.join(dataDirectory, 'platform.db')}`,
    PLATFORM_ADMIN_KEY: adminKey,
    PLATFORM_CONFIG: configFile,
    MODELS_DIR: path.join(dataDirectory, 'models'),
    MODEL_AUTO_PULL: 'false',
  };
  service = await startService(env, path.join(buildDirectory, 'main.js'));
}, 180_000);

afterAll(async () => {
  await service?.stop();
  await upstream?.close();
  if (ownBuild) rmSync(buildDirectory, { recursive: true, force: true });
  rmSync(dataDirectory, { recursive: true, force: true });
});

describe('the built service (scripts/build-server.mjs)', () => {
  it("reports the package's version and answers health checks", async () => {
    const health = await call('GET', '/v1/health');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.text)).toMatchObject({ status: 'ok', version: packageVersion });
  });

  it('answers chat completions through the OpenAI-compatible upstream, plain and streamed', async () => {
    const plain = await call('POST', '/chat/completions', {
      messages: [{ role: 'user', content: 'Hello from the bundle.' }],
    });
    expect(plain.status).toBe(200);
    const completion = JSON.parse(plain.text) as {
      model: string;
      choices: { message: { content: string } }[];
    };
    expect(completion.model).toBe('built-upstream');
    expect(completion.choices[0]!.message.content.length).toBeGreaterThan(0);

    const streamed = await call('POST', '/v1/chat/completions', {
      stream: true,
      messages: [{ role: 'user', content: 'Stream from the bundle.' }],
    });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toContain('text/event-stream');
    expect(streamed.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('validates request bodies (validators are compiled on first use) with the contract’s errors', async () => {
    const refused = await call('POST', '/chat/completions', { messages: 'not a list' });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text)).toMatchObject({
      error: { code: 'invalid_parameter', param: 'messages' },
    });
  });

  it('classifies intents with the shipped model copied beside the bundle', async () => {
    const routed = await call('POST', '/v1/routing/intent', {
      message: 'Write a Python function that reverses a linked list.',
    });
    expect(routed.status).toBe(200);
    expect(JSON.parse(routed.text)).toMatchObject({
      intent: { category: 'CODE', metadata: { method: 'classifier' } },
    });
  });

  it('synthesizes speech in the audio worker threads (their own entry in the bundle)', async () => {
    const spoken = await call('POST', '/v1/speech/synthesize', {
      text: 'Built and running.',
      format: 'wav',
    });
    expect(spoken.status, spoken.text).toBe(200);
    const body = JSON.parse(spoken.text) as { audio: string; format: string };
    expect(body.format).toBe('wav');
    expect(Buffer.from(body.audio, 'base64').subarray(0, 4).toString('latin1')).toBe('RIFF');
  });

  it('builds layouts and reads knowledge documents in the text worker threads (their own entry)', async () => {
    const layout = await call('POST', '/v1/layout', {
      message: '## Steps\n\n1. Open the app.\n2. Sign in.',
    });
    expect(layout.status, layout.text).toBe(200);
    expect(JSON.parse(layout.text)).toMatchObject({
      layout: { components: [{ type: 'heading' }, { type: 'steps' }] },
    });
    const kb = await call('POST', '/v1/knowledge-bases', { name: 'Built', embedding_model: null });
    expect(kb.status, kb.text).toBe(201);
    const kbId = (JSON.parse(kb.text) as { id: string }).id;
    const document = await call('POST', `/v1/knowledge-bases/${kbId}/documents`, {
      content:
        '<html><head><title>Tides</title></head><body><p>The sea rises twice a day.</p></body></html>',
      content_type: 'text/html',
    });
    expect(document.status, document.text).toBe(201);
    expect(JSON.parse(document.text)).toMatchObject({ title: 'Tides', chunk_count: 1 });
  });

  it("names every error class as its source does (the bundle keeps no names: pino's `type`)", () => {
    // Without esbuild's keepNames, a class renamed for a clash (`FooError2`) or one that refers
    // to itself (`class _FooError`) would be logged under that name.
    const renamed: string[] = [];
    const scripts = readdirSync(buildDirectory, { recursive: true, encoding: 'utf8' }).filter(
      (file) => file.endsWith('.js'),
    );
    expect(scripts.length).toBeGreaterThan(1);
    for (const file of scripts) {
      const text = readFileSync(path.join(buildDirectory, file), 'utf8');
      for (const match of text.matchAll(/\bclass (\w*Error\w*)\b/g)) {
        const name = match[1]!;
        if (name.startsWith('_') || /\d$/.test(name)) renamed.push(`${file}: ${name}`);
      }
    }
    expect(renamed).toEqual([]);
  });

  it('runs the built keys tool against the same database', async () => {
    const created = await runCli(
      ['create', '--name', 'from-built-cli'],
      env,
      'keys',
      buildDirectory,
    );
    expect(created.code, created.stderr).toBe(0);
    const listed = await runCli(['list'], env, 'keys', buildDirectory);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('from-built-cli');
    const keyId = /^(key_\w+)\s.*from-built-cli/m.exec(listed.stdout)?.[1];
    const revoked = await runCli(['revoke', keyId!], env, 'keys', buildDirectory);
    expect(revoked.code, revoked.stderr).toBe(0);

    // The command line's changes, and the owner account and key of the first start, are audited
    // as the system's; the built audit tool finds the chain intact.
    interface Listed {
      records: Array<{ action: string; actor: { kind: string }; target: { id: string } }>;
    }
    const log = JSON.parse((await call('GET', '/v1/audit-log?limit=100')).text) as Listed;
    const bySystem = log.records
      .filter((record) => record.actor.kind === 'system')
      .map((record) => record.action);
    expect(bySystem).toEqual([
      'api_key.revoke',
      'api_key.create',
      'api_key.create',
      'account.create',
    ]);
    expect(log.records.filter((record) => record.target.id === keyId)).toHaveLength(2);
    const verified = await runCli(['verify'], env, 'audit', buildDirectory);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^OK: /);
  });
});
