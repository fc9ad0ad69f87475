// compose.yaml's two platform instances, brought up with podman-compose from the image the image
// test builds, on this machine's PostgreSQL (a fresh database) and Redis (a key prefix of their
// own) instead of the file's own postgres and redis services, whose images no registry here
// serves: the file is read, those two services and the instances' `depends_on`/`build` are left
// out, DATABASE_URL and REDIS_URL point at them, and everything else (the config-file mount, the
// ports, the .env variables from .env.example) is the file's own. A key minted on one instance
// works on the other, and one rate limit is counted across both. Skipped, saying why, where podman,
// podman-compose, PostgreSQL or Redis is missing.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { generateApiKey } from '../../src/modules/accounts/api-key-format.js';
import {
  buildImage,
  containersMissing,
  findPodman,
  waitForHealth,
  type Podman,
} from '../support/containers.js';
import { postgresAdminUrl, redisTestUrl } from '../support/dialects.js';
import { freePort, repositoryRoot, runCommand } from '../support/process.js';

const suite = 'The compose test (test/container/compose.test.ts) is';

/** Podman and podman-compose, with PostgreSQL and Redis answering; else why not (printed). */
async function prerequisites(): Promise<Podman | undefined> {
  const found = await findPodman();
  if ('reason' in found) {
    containersMissing(suite, found.reason);
    return undefined;
  }
  const compose = await runCommand('podman-compose', ['version']);
  const database = new pg.Client({
    connectionString: postgresAdminUrl,
    connectionTimeoutMillis: 2000,
  });
  const postgres = await database.connect().then(
    () => true,
    () => false,
  );
  await database.end().catch(() => undefined);
  const redis = await reachable(new URL(redisTestUrl));
  const missing = [
    compose.code === 0 ? null : 'podman-compose (apt-get install podman-compose)',
    postgres ? null : `PostgreSQL at ${postgresAdminUrl}`,
    redis ? null : `Redis at ${redisTestUrl}`,
  ].filter((item) => item !== null);
  if (missing.length > 0) {
    containersMissing(suite, `Missing: ${missing.join(', ')}.`);
    return undefined;
  }
  return found.podman;
}

function reachable(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port || 6379), url.hostname);
    socket.setTimeout(2000, () => socket.destroy());
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}

/** A TCP forwarder on every address to `target`, answering only the compose network's subnet. */
function forwarder(target: URL, subnet: string): Promise<net.Server> {
  const range = ipaddr.parseCIDR(subnet);
  const server = net.createServer((client) => {
    const from = ipaddr.process(client.remoteAddress ?? '::');
    if (from.kind() !== range[0].kind() || !from.match(range)) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port), target.hostname);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  return new Promise((resolve) => server.listen(0, '0.0.0.0', () => resolve(server)));
}

const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port;

const podman = await prerequisites();

describe.skipIf(podman === undefined)('compose.yaml: two instances', () => {
  const project = `platform-compose-test-${randomBytes(4).toString('hex')}`;
  const directory = mkdtempSync(path.join(tmpdir(), 'platform-compose-test-'));
  const database = `platform_compose_${randomBytes(4).toString('hex')}`;
  const adminKey = generateApiKey();
  const forwarders: net.Server[] = [];
  const ports: number[] = [];
  let composeArgs: string[];

  const call = async (
    instance: number,
    method: string,
    url: string,
    body?: unknown,
    key = adminKey,
  ) => {
    const response = await fetch(`http://127.0.0.1:${ports[instance]}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  async function admin(statement: string): Promise<void> {
    const client = new pg.Client({ connectionString: postgresAdminUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  }

  /** compose.yaml as the test runs it, checked on the way (see the top of this file). */
  function derivedComposeFile(databaseUrl: string, redisUrl: string): string {
    const original = parse(readFileSync(path.join(repositoryRoot, 'compose.yaml'), 'utf8'), {
      merge: true,
    }) as { services: Record<string, Record<string, unknown>>; volumes: Record<string, unknown> };
    expect(Object.keys(original.services).sort()).toEqual([
      'platform-1',
      'platform-2',
      'postgres',
      'redis',
    ]);
    expect(Object.keys(original.volumes).sort()).toEqual(['models', 'postgres', 'redis']);
    const services: Record<string, Record<string, unknown>> = {};
    for (const name of ['platform-1', 'platform-2']) {
      const { build: _build, depends_on: dependsOn, ...service } = original.services[name]!;
      expect(dependsOn).toEqual(['postgres', 'redis']);
      const environment = service.environment as Record<string, string>;
      expect(environment.DATABASE_URL).toContain('@postgres:5432/');
      expect(environment.REDIS_URL).toBe('redis://redis:6379');
      services[name] = {
        ...service,
        environment: { ...environment, DATABASE_URL: databaseUrl, REDIS_URL: redisUrl },
      };
    }
    const file = path.join(directory, 'compose.yaml');
    writeFileSync(file, stringify({ services, volumes: { models: original.volumes.models } }));
    return file;
  }

  /** .env.example with this run's values, beside the derived file (where compose reads .env). */
  function writeEnv(values: Record<string, string>): void {
    let text = readFileSync(path.join(repositoryRoot, '.env.example'), 'utf8');
    for (const [name, value] of Object.entries(values)) {
      expect(text, `.env.example sets ${name}`).toMatch(new RegExp(`^${name}=`, 'm'));
      text = text.replace(new RegExp(`^${name}=.*$`, 'm'), `${name}=${value}`);
    }
    writeFileSync(path.join(directory, '.env'), text);
  }

  /** podman-compose calls plain `podman`; this one carries the machine's storage options. */
  function podmanWrapper(): string {
    const wrapper = path.join(directory, 'podman');
    const conf = podman!.env.CONTAINERS_CONF;
    writeFileSync(
      wrapper,
      `#!/bin/sh\n${conf === undefined ? '' : `export CONTAINERS_CONF='${conf}'\n`}` +
        `exec podman ${podman!.prefix.join(' ')} "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    return wrapper;
  }

  beforeAll(async () => {
    const image = await buildImage(podman!);
    const network = `${project}_default`;
    await podman!.ok(['network', 'create', network]);
    const [subnet, gateway] = (
      await podman!.ok([
        'network',
        'inspect',
        network,
        '--format',
        '{{range .Subnets}}{{.Subnet}} {{.Gateway}}{{end}}',
      ])
    )
      .trim()
      .split(' ') as [string, string];
    await admin(`create database ${database}`);
    const postgresUrl = new URL(postgresAdminUrl);
    forwarders.push(
      await forwarder(postgresUrl, subnet),
      await forwarder(new URL(redisTestUrl), subnet),
    );
    const databaseUrl = new URL(postgresAdminUrl);
    databaseUrl.host = `${gateway}:${portOf(forwarders[0]!)}`;
    databaseUrl.pathname = `/${database}`;
    ports.push(await freePort(), await freePort());
    writeFileSync(
      path.join(directory, 'platform.yaml'),
      stringify({ rate_limits: { tiers: { compose6: { per_minute: 6, per_day: 1000 } } } }),
      { mode: 0o644 },
    );
    chmodSync(directory, 0o755);
    writeEnv({
      POSTGRES_PASSWORD: 'unused-here',
      PLATFORM_1_PORT: String(ports[0]),
      PLATFORM_2_PORT: String(ports[1]),
      PLATFORM_IMAGE: image.tag,
      PLATFORM_CONFIG_FILE: path.join(directory, 'platform.yaml'),
      PLATFORM_ADMIN_KEY: adminKey,
      REDIS_KEY_PREFIX: project,
      MODEL_AUTO_PULL: 'false',
    });
    const file = derivedComposeFile(
      databaseUrl.toString(),
      `redis://${gateway}:${portOf(forwarders[1]!)}`,
    );
    composeArgs = ['--podman-path', podmanWrapper(), '-p', project, '-f', file];
    const started = performance.now();
    const up = await runCommand('podman-compose', [...composeArgs, 'up', '-d', '--no-build'], {
      cwd: directory,
      timeoutMs: 300_000,
    });
    expect(up.code, `${up.stdout}\n${up.stderr}`).toBe(0);
    const seconds = await Promise.all(
      ports.map((port) => waitForHealth(`http://127.0.0.1:${port}/v1/health`, started)),
    );
    process.stdout.write(
      `\n[containers] compose: both instances healthy ${Math.max(...seconds).toFixed(1)} s after podman-compose up\n`,
    );
  }, 60 * 60_000);

  afterAll(async () => {
    if (composeArgs !== undefined) {
      const logs = await runCommand('podman-compose', [...composeArgs, 'logs'], { cwd: directory });
      writeFileSync(path.join(tmpdir(), `${project}.log`), `${logs.stdout}\n${logs.stderr}`);
      // Removed with their anonymous volumes (the image's /app/data), which `down -v` leaves.
      const ids = await podman!.run([
        'ps',
        '-aq',
        '--filter',
        `label=io.podman.compose.project=${project}`,
      ]);
      const containers = ids.stdout.split('\n').filter((id) => id !== '');
      if (containers.length > 0) await podman!.run(['rm', '--force', '--volumes', ...containers]);
      await runCommand('podman-compose', [...composeArgs, 'down', '-v'], {
        cwd: directory,
        timeoutMs: 300_000,
      });
    }
    await podman?.run(['network', 'rm', '--force', `${project}_default`]);
    for (const server of forwarders) server.close();
    await admin(`drop database if exists ${database} with (force)`).catch(() => undefined);
    rmSync(directory, { recursive: true, force: true });
  });

  it('serves one database: a key minted on one instance works on the other', async () => {
    const health = await call(1, 'GET', '/v1/health');
    expect(health.json.checks).toEqual({ database: 'ok', redis: 'ok' });
    const created = await call(0, 'POST', '/v1/api-keys', {
      name: 'minted on instance 1',
      scopes: ['models:read'],
    });
    expect(created.status).toBe(201);
    const key = created.json.key as string;
    expect((await call(1, 'GET', '/v1/models', undefined, key)).status).toBe(200);
    expect((await call(1, 'GET', '/v1/api-keys')).json.api_keys).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'minted on instance 1' })]),
    );
  });

  it('counts one rate limit across both instances (Redis)', async () => {
    const created = await call(0, 'POST', '/v1/api-keys', {
      name: 'limited',
      scopes: ['models:read'],
      tier: 'compose6',
    });
    expect(created.status).toBe(201);
    const key = created.json.key as string;
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        call(index % 2, 'GET', '/v1/features', undefined, key),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(6);
    expect(statuses.filter((status) => status === 429)).toHaveLength(14);
    const refusedBy = new Set(
      responses.flatMap((response, index) => (response.status === 429 ? [index % 2] : [])),
    );
    expect(refusedBy.size).toBe(2);
  });
});
