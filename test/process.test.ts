// The service as users start it: first start, restart, graceful shutdown, and the keys CLI.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { isWellFormedApiKey } from '../src/modules/accounts/api-key-format.js';
import { writeTinyLlamaGguf } from './support/gguf/tiny-llama.js';
import { freePort, runCli, startService } from './support/process.js';

const directory = mkdtempSync(path.join(tmpdir(), 'platform-process-'));
const env = {
  DATABASE_URL: `sqlite:${path.join(directory, 'platform.db')}`,
  MODELS_DIR: path.join(directory, 'models'),
  MODEL_AUTO_PULL: 'false',
};
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const keyPattern = /sk-[A-Za-z0-9]{46,}/;

async function get(port: number, url: string, key?: string) {
  const response = await fetch(`http://127.0.0.1:${port}${url}`, {
    headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
  });
  return {
    status: response.status,
    body: (await response.json()) as { error: { code: string }; features: unknown[] },
  };
}

describe('the service process', () => {
  let adminKey = '';

  it('refuses CLI key creation before the owner account exists, saying how to create it', async () => {
    const result = await runCli(['create', '--name', 'early'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('npm start');
  });

  it('prints the admin key once on first start, and it works', async () => {
    const service = await startService(env);
    try {
      const printed = service.stdout().match(new RegExp(keyPattern, 'g')) ?? [];
      expect(new Set(printed).size).toBe(1);
      adminKey = printed[0]!;
      expect(isWellFormedApiKey(adminKey)).toBe(true);
      const features = await get(service.port, '/v1/features', adminKey);
      expect(features.status).toBe(200);
      expect(features.body.features).toHaveLength(7);
      const anonymous = await get(service.port, '/v1/features');
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error.code).toBe('missing_api_key');
    } finally {
      expect(await service.stop()).toBe(0);
    }
    // No key in any log line: the banner is the only place it appeared.
    expect(
      service
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{') && keyPattern.test(line)),
    ).toEqual([]);
  });

  it('prints no key on a later start', async () => {
    const service = await startService(env);
    try {
      expect(service.stdout()).not.toMatch(keyPattern);
      expect((await get(service.port, '/v1/features', adminKey)).status).toBe(200);
    } finally {
      await service.stop();
    }
  });

  it('serves /metrics on METRICS_PORT without a key, not on the API port, and stops cleanly', async () => {
    const metricsPort = await freePort();
    const service = await startService({ ...env, METRICS_PORT: String(metricsPort) });
    try {
      expect((await get(service.port, '/v1/features', adminKey)).status).toBe(200);
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toMatch(
        /^platform_http_requests_total\{method="GET",route="\/v1\/features",status="200"\} 1$/m,
      );
      expect((await get(service.port, '/metrics', adminKey)).status).toBe(404);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });

  it('manages keys from the command line, and a CLI revocation reaches the running service', async () => {
    const service = await startService(env);
    try {
      const created = await runCli(
        ['create', '--name', 'cli key', '--scopes', 'models:read', '--tier', 'pro', '--json'],
        env,
      );
      expect(created.code, created.stderr).toBe(0);
      const record = JSON.parse(created.stdout) as {
        id: string;
        key: string;
        tier: string;
        keyHash?: string;
      };
      expect(record.tier).toBe('pro');
      expect(record).not.toHaveProperty('keyHash');
      expect((await get(service.port, '/v1/features', record.key)).status).toBe(200);

      const expiring = await runCli(
        ['create', '--name', 'expiring', '--expires-at', '2030-01-01T00:00:00Z', '--json'],
        env,
      );
      expect(expiring.code, expiring.stderr).toBe(0);
      const expiringId = (JSON.parse(expiring.stdout) as { id: string }).id;
      // Time passes: the key's expiry is moved into the past in the database itself.
      const past = '2020-01-01T00:00:00.000Z';
      const database = new Database(path.join(directory, 'platform.db'));
      database.prepare('update api_keys set expires_at = ? where id = ?').run(past, expiringId);
      database.close();

      const listed = await runCli(['list'], env);
      expect(listed.stdout).toContain(record.id);
      expect(listed.stdout).not.toContain(record.key);
      const lines = listed.stdout.split('\n');
      expect(lines.find((line) => line.startsWith(record.id))).toMatch(/ active$/);
      expect(lines.find((line) => line.startsWith(expiringId))).toContain(`expired ${past}`);

      const revoked = await runCli(['revoke', record.id], env);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect(revoked.stdout).toContain('revoked');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const refused = await get(service.port, '/v1/features', record.key);
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('revoked_api_key');

      const bad = await runCli(['create', '--name', 'x', '--scopes', 'root'], env);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('root');
    } finally {
      await service.stop();
    }
  }, 180_000);

  it('generates a well-formed key without touching the database', async () => {
    const result = await runCli(['generate'], { DATABASE_URL: 'sqlite:/nonexistent/dir/x.db' });
    expect(result.code).toBe(0);
    expect(isWellFormedApiKey(result.stdout.trim())).toBe(true);
  });

  it('finishes an in-flight request on SIGTERM, then exits cleanly', async () => {
    const service = await startService(env);
    const body = JSON.stringify({ name: 'created during shutdown' });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const outgoing = request(
        {
          host: '127.0.0.1',
          port: service.port,
          method: 'POST',
          path: '/v1/api-keys',
          headers: {
            authorization: `Bearer ${adminKey}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (incoming) => {
          let text = '';
          incoming.on('data', (chunk: Buffer) => (text += chunk.toString()));
          incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, body: text }));
        },
      );
      outgoing.on('error', reject);
      // Half the body now; the rest after the signal.
      outgoing.write(body.slice(0, 10));
      setTimeout(() => {
        service.child.kill('SIGTERM');
        setTimeout(() => outgoing.end(body.slice(10)), 300);
      }, 200);
    });
    const finished = await response;
    expect(finished.status).toBe(201);
    expect(JSON.parse(finished.body)).toMatchObject({ name: 'created during shutdown' });
    expect(await service.exited).toBe(0);
    expect(service.stdout()).toContain('"msg":"stopped"');
    // New connections are refused once it has stopped.
    await expect(fetch(`http://127.0.0.1:${service.port}/v1/health`)).rejects.toThrow();
  });

  it('refuses to start on bad configuration, naming every problem', async () => {
    await expect(startService({ ...env, PORT: 'x', LOG_LEVEL: 'loud' })).rejects.toThrow(
      /PORT: .*\n.*LOG_LEVEL/s,
    );
  });

  it('starts without network or model, lists the default model as unavailable and answers chat 503 with the fix', async () => {
    const modelsDirectory = path.join(directory, 'models');
    const service = await startService({
      ...env,
      MODELS_DIR: modelsDirectory,
      MODEL_AUTO_PULL: 'true',
      // Nothing listens on port 9: the background download fails at once, as it does offline.
      HF_ENDPOINT: 'http://127.0.0.1:9',
    });
    try {
      const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
      const reason = async () => {
        const response = await fetch(`http://127.0.0.1:${service.port}/models`, { headers });
        const body = (await response.json()) as {
          data: Array<{
            id: string;
            default: boolean;
            available: boolean;
            unavailable_reason: string;
          }>;
        };
        return body.data.find((model) => model.default);
      };
      await expect
        .poll(async () => (await reason())?.unavailable_reason, { timeout: 10_000 })
        .toMatch(/automatic download failed/);
      const model = await reason();
      expect(model).toMatchObject({ id: 'qwen2.5-0.5b-instruct', available: false });
      expect(model!.unavailable_reason).toContain('npm run models -- pull qwen2.5-0.5b-instruct');
      // The server's own file layout stays in its log; clients see where, relative to the models directory.
      expect(model!.unavailable_reason).toContain(
        'place the file at <models directory>/qwen2.5-0.5b-instruct-q4_k_m.gguf',
      );
      expect(model!.unavailable_reason).not.toContain(directory);

      const chat = await fetch(`http://127.0.0.1:${service.port}/v1/chat`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ user_id: 'u', messages: [{ role: 'user', content: 'hello' }] }),
      });
      expect(chat.status).toBe(503);
      const error = ((await chat.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('model_unavailable');
      expect(error.message).toContain('npm run models -- pull');
      expect(error.message).not.toContain(directory);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });

  it('pulls a local model with the models command, verifying its checksum, then lists it as available', async () => {
    const modelFile = path.join(directory, 'served.gguf');
    await writeTinyLlamaGguf(modelFile);
    const bytes = readFileSync(modelFile);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const server = createServer((incoming, outgoing) => {
      outgoing.writeHead(incoming.url === '/tiny.gguf' ? 200 : 404, {
        'content-length': incoming.url === '/tiny.gguf' ? bytes.length : 0,
      });
      outgoing.end(incoming.url === '/tiny.gguf' ? bytes : undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const configPath = path.join(directory, 'models.config.json');
    const model = (name: string, digest: string) => ({
      name,
      provider: 'local',
      source: `http://127.0.0.1:${port}/tiny.gguf`,
      file: path.join(directory, 'pulled', `${name}.gguf`),
      sha256: digest,
      max_tokens: 16,
      context_length: 512,
    });
    writeFileSync(
      configPath,
      JSON.stringify({
        default_model: 'tiny',
        models: [model('tiny', sha256), model('tampered', 'f'.repeat(64))],
        // Exactly these two: not the built-in speech engines a file keeps otherwise.
        speech: { builtin_engines: false },
      }),
    );
    const cliEnv = { ...env, PLATFORM_CONFIG: configPath };
    try {
      const before = await runCli(['list', '--json'], cliEnv, 'models');
      expect(before.code, before.stderr).toBe(0);
      expect(JSON.parse(before.stdout)).toEqual([
        expect.objectContaining({ name: 'tiny', available: false, default: true }),
        expect.objectContaining({ name: 'tampered', available: false }),
      ]);

      const pulled = await runCli(['pull'], cliEnv, 'models');
      expect(pulled.code, pulled.stderr).toBe(0);
      expect(pulled.stdout).toContain(sha256);
      expect(pulled.stdout).toContain('verified against the configured sha256');
      expect(readFileSync(path.join(directory, 'pulled', 'tiny.gguf')).equals(bytes)).toBe(true);

      const tampered = await runCli(['pull', 'tampered'], cliEnv, 'models');
      expect(tampered.code).toBe(1);
      expect(tampered.stderr).toContain('checksum_mismatch');
      expect(existsSync(path.join(directory, 'pulled', 'tampered.gguf'))).toBe(false);

      const after = await runCli(['list', '--json'], cliEnv, 'models');
      expect(JSON.parse(after.stdout)).toEqual([
        expect.objectContaining({ name: 'tiny', available: true }),
        expect.objectContaining({ name: 'tampered', available: false }),
      ]);
    } finally {
      server.close();
    }
  });
});
