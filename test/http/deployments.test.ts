// A model served by several deployments (issue 32): each deployment a fake OpenAI server of its own
// over real HTTP, failing on command (500, 429 with Retry-After, a refused connection, a stream cut
// before or after its first token). Every request still answers while one deployment is down; the
// failing one cools down and is probed again by one request; `max_attempts` caps the upstream calls
// of one request; the ledger names the deployment that answered. On both databases; the shared
// cooldown across two instances on Redis at the end.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { allDialects, redisTestUrl, type DialectUnderTest } from '../support/dialects.js';
import { freePort } from '../support/process.js';
import { redisReachable } from '../support/redis.js';
import { bearer, startTestApp, type TestApp } from '../support/test-app.js';

const upstreamKey = 'sk-deployments-upstream';

function catalog(a: FakeUpstream, b: FakeUpstream, refusedUrl: string) {
  const common = {
    provider: 'openai-compatible' as const,
    api_key_env: 'FAKE_UPSTREAM_KEY',
    max_tokens: 256,
    context_length: 4096,
    timeout_ms: 10_000,
  };
  return {
    default_model: 'pool',
    // Long cooldowns: a deployment that failed stays out for the whole test, however slow the
    // machine (one test shortens them to see the probe).
    deployment_cooldown_ms: 600_000,
    models: [
      {
        ...common,
        name: 'pool',
        model: 'gpt-4o-mini',
        base_url: a.baseUrl,
        max_attempts: 3,
        deployments: [
          { name: 'a', base_url: a.baseUrl, pricing: { input_per_mtok: 1, output_per_mtok: 2 } },
          { name: 'b', base_url: b.baseUrl, pricing: { input_per_mtok: 3, output_per_mtok: 4 } },
        ],
      },
      {
        ...common,
        name: 'with-dead',
        model: 'gpt-4o-mini',
        base_url: a.baseUrl,
        deployments: [
          { name: 'dead', base_url: refusedUrl },
          { name: 'b', base_url: b.baseUrl },
        ],
      },
      {
        ...common,
        name: 'capped',
        model: 'gpt-4o-mini',
        base_url: a.baseUrl,
        max_attempts: 2,
        max_retries: 2,
        fallbacks: ['backup'],
        deployments: [
          { name: 'a', base_url: a.baseUrl },
          { name: 'b', base_url: b.baseUrl },
        ],
      },
      {
        ...common,
        name: 'streamy',
        model: 'gpt-4o-mini',
        base_url: a.baseUrl,
        deployments: [
          { name: 'a', base_url: a.baseUrl },
          { name: 'b', base_url: b.baseUrl },
        ],
      },
      {
        ...common,
        name: 'hasty',
        model: 'gpt-4o-mini',
        base_url: a.baseUrl,
        // Long enough for b to answer on a loaded machine; a's hang is cut by it.
        timeout_ms: 3000,
        deployments: [
          { name: 'a', base_url: a.baseUrl },
          { name: 'b', base_url: b.baseUrl },
        ],
      },
      { ...common, name: 'backup', model: 'gpt-4o', base_url: b.baseUrl, max_retries: 2 },
    ],
  };
}

interface Opened {
  a: FakeUpstream;
  b: FakeUpstream;
  app: TestApp;
}

async function open(dialect: DialectUnderTest, extra: Record<string, unknown> = {}) {
  const a = await startFakeUpstream({ requireApiKey: upstreamKey });
  const b = await startFakeUpstream({ requireApiKey: upstreamKey });
  const refusedUrl = `http://127.0.0.1:${await freePort()}/v1`;
  const app = await startTestApp({
    dialect,
    env: { FAKE_UPSTREAM_KEY: upstreamKey },
    overrides: { ...catalog(a, b, refusedUrl), ...extra },
    // Deployments are tried in the order listed: the test knows which one is called first.
    services: { deploymentRandom: () => 0 },
  });
  return { a, b, app };
}

async function chat(app: TestApp, model: string, stream = false) {
  return app.app.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: bearer(app.adminKey),
    payload: { model, stream, messages: [{ role: 'user', content: 'hello there' }] },
  });
}

/** The `data:` events of an SSE body, parsed, `[DONE]` as the string. */
function events(body: string): unknown[] {
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice(6))
    .map((data) => (data === '[DONE]' ? data : (JSON.parse(data) as unknown)));
}

const chatCalls = (fake: FakeUpstream) =>
  fake.requests.filter((request) => request.endpoint === 'chat');

describe.each(allDialects)('a model of several deployments ($name)', (dialect) => {
  let opened: Opened;
  beforeAll(async () => {
    opened = await open(dialect);
  });
  afterAll(async () => {
    await opened.app.close();
    await opened.a.close();
    await opened.b.close();
  });
  beforeEach(() => {
    opened.a.reset();
    opened.b.reset();
  });

  const ledger = async () => {
    await opened.app.services.usageLedger.ledger.flush();
    return opened.app.services.storage.db
      .selectFrom('usage_records')
      .select(['model', 'deployment', 'status', 'cost_micros'])
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  };

  it('answers every request while one deployment fails, which is called once and cools down', async () => {
    const { a, b, app } = opened;
    const before = (await ledger()).length;
    a.setDefaultBehaviour({ kind: 'error', status: 500 });
    for (let index = 0; index < 8; index += 1) {
      const response = await chat(app, 'pool');
      expect(response.statusCode, response.body).toBe(200);
    }
    expect(chatCalls(a)).toHaveLength(1);
    expect(chatCalls(b)).toHaveLength(8);
    const health = await app.services.models.deploymentHealth('pool');
    expect(health.map(({ name, state }) => [name, state.failures])).toEqual([
      ['a', 1],
      ['b', 0],
    ]);
    // The catalog shows it too.
    const listed = await app.app.inject({
      method: 'GET',
      url: '/v1/models/pool',
      headers: bearer(app.adminKey),
    });
    expect(listed.json<{ deployments: unknown[] }>().deployments).toMatchObject([
      { name: 'a', connection: 'openai-compatible', health: 'cooling', failures: 1 },
      { name: 'b', health: 'healthy', failures: 0, cooling_until: null },
    ]);
    const added = (await ledger()).slice(before);
    expect(added[0]).toMatchObject({ model: 'pool', deployment: 'a', status: 'error' });
    expect(added.slice(1).map((row) => [row.deployment, row.status])).toEqual(
      Array.from({ length: 8 }, () => ['b', 'ok']),
    );
    // Each priced at its own deployment's rates: b's (3 and 4 USD per million) here.
    expect(added.slice(1).every((row) => Number(row.cost_micros) > 0)).toBe(true);
  });

  it('moves past a refused connection, and the dead deployment cools down', async () => {
    const { b, app } = opened;
    const plain = await chat(app, 'with-dead');
    expect(plain.statusCode, plain.body).toBe(200);
    expect(
      plain.json<{ choices: { message: { content: string } }[] }>().choices[0]!.message.content,
    ).toBe('Echo: hello there');
    const dead = await app.services.models.deploymentHealth('with-dead');
    expect(dead.find((entry) => entry.name === 'dead')!.state.failures).toBe(1);
    expect(chatCalls(b)).toHaveLength(1);
  });

  it('caps the upstream calls of one request at max_attempts, across deployments, retries and fallbacks', async () => {
    const { a, b, app } = opened;
    a.setDefaultBehaviour({ kind: 'error', status: 503 });
    b.setDefaultBehaviour({ kind: 'error', status: 503 });
    // `capped`: two deployments, a fallback with two retries of its own (five calls without a
    // cap); max_attempts 2: a, then b, then no more.
    const response = await chat(app, 'capped');
    expect(response.statusCode).toBe(502);
    expect(chatCalls(a)).toHaveLength(1);
    expect(chatCalls(b)).toHaveLength(1);
    expect(chatCalls(b)[0]!.body).toMatchObject({ model: 'gpt-4o-mini' });
    // Both failures were recorded: each deployment cools down, the second as well as the first.
    const cooled = await app.services.models.deploymentHealth('capped');
    expect(cooled.map((entry) => entry.state.failures)).toEqual([1, 1]);
    expect(response.json<{ error: { message: string } }>().error.message).not.toContain(
      upstreamKey,
    );
  });
  it('moves past a deployment that hangs once its time limit cuts the call', async () => {
    const { a, b, app } = opened;
    a.enqueueFor('chat', { kind: 'hang' });
    const response = await chat(app, 'hasty');
    expect(response.statusCode, response.body).toBe(200);
    await a.settled();
    expect(chatCalls(a).map((request) => request.outcome)).toEqual(['aborted']);
    expect(chatCalls(b)).toHaveLength(1);
    const [hung] = await app.services.models.deploymentHealth('hasty');
    expect(hung!.state.failures).toBe(1);
  });

  it('sends a stream cut before its first token on to the next deployment: one clean stream', async () => {
    const { a, b, app } = opened;
    // `streamy` has not failed yet: its deployment a is tried first, and cuts after the role chunk.
    a.enqueueFor('chat', { kind: 'cut', afterChunks: 1 });
    const response = await chat(app, 'streamy', true);
    expect(response.statusCode, response.body).toBe(200);
    const parsed = events(response.body);
    expect(parsed.at(-1)).toBe('[DONE]');
    const chunks = parsed.slice(0, -1) as {
      choices: { delta: { role?: string; content?: string }; finish_reason: string | null }[];
    }[];
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.role === 'assistant')).toHaveLength(1);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(
      'Echo: hello there',
    );
    expect(chunks.filter((chunk) => chunk.choices[0]?.finish_reason === 'stop')).toHaveLength(1);
    expect(response.body).not.toContain('"error"');
    expect(chatCalls(a).map((request) => request.outcome)).toEqual(['cut']);
    expect(chatCalls(b)).toHaveLength(1);
  });

  it('ends a stream cut after its first token with the error event, as before', async () => {
    const { b, app } = opened;
    // a cooled down in the test before: b answers, and cuts mid-answer.
    b.enqueueFor('chat', { kind: 'cut', afterChunks: 3 });
    const response = await chat(app, 'streamy', true);
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('"error"');
    expect(chatCalls(b)).toHaveLength(1);
  });
});

describe.each(allDialects)('cooldowns and probes ($name)', (dialect) => {
  it('probes a deployment again once its cooldown is over, with one request, and honours Retry-After', async () => {
    const opened = await open(dialect, { deployment_cooldown_ms: 200 });
    const { a, b, app } = opened;
    try {
      // Retry-After of 2 minutes: longer than the cooldown (200 ms), so it is what counts.
      a.enqueueFor('chat', { kind: 'error', status: 429, headers: { 'retry-after': '120' } });
      expect((await chat(app, 'pool')).statusCode).toBe(200);
      const [cooling] = await app.services.models.deploymentHealth('pool');
      expect(cooling!.state.until - Date.now()).toBeGreaterThan(60_000);
      // A plain 500 (no Retry-After) on the second model: cooldown 200 ms, then one probe.
      a.setDefaultBehaviour({ kind: 'error', status: 500 });
      expect((await chat(app, 'capped')).statusCode).toBe(200);
      const callsToA = () => chatCalls(a).length;
      expect(callsToA()).toBe(2);
      const cooled = (await app.services.models.deploymentHealth('capped'))[0]!.state;
      // Wait for the cooldown to end (its own end, read off the state: no time is assumed).
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, cooled.until - Date.now()) + 20),
      );
      a.setDefaultBehaviour({ kind: 'reply' });
      a.enqueueFor('chat', { kind: 'delay', ms: 300 });
      // Three requests at once: one probes a (and waits on its delay), two go to b.
      const answers = await Promise.all([
        chat(app, 'capped'),
        chat(app, 'capped'),
        chat(app, 'capped'),
      ]);
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200]);
      expect(callsToA()).toBe(3);
      // The probe succeeded: a is healthy again.
      const after = (await app.services.models.deploymentHealth('capped'))[0]!.state;
      expect(after.failures).toBe(0);
      expect(b.requests.length).toBeGreaterThanOrEqual(3);
    } finally {
      await app.close();
      await a.close();
      await b.close();
    }
  });
});

describe('cooldowns shared by two instances through Redis', async () => {
  const reachable = await redisReachable('deployments.test.ts');
  const dialect = allDialects[0]!;
  it.runIf(reachable)(
    'a deployment that failed on one instance is not called by the other',
    async () => {
      const a = await startFakeUpstream({ requireApiKey: upstreamKey });
      const b = await startFakeUpstream({ requireApiKey: upstreamKey });
      const refusedUrl = `http://127.0.0.1:${await freePort()}/v1`;
      const env = {
        FAKE_UPSTREAM_KEY: upstreamKey,
        REDIS_URL: redisTestUrl,
        REDIS_KEY_PREFIX: `test-deployments-${randomBytes(6).toString('hex')}`,
      };
      const database = await dialect.create({ migrated: true });
      const start = (adminKey?: string) =>
        startTestApp({
          dialect,
          database,
          ...(adminKey === undefined ? {} : { adminKey }),
          env,
          overrides: catalog(a, b, refusedUrl),
          services: { deploymentRandom: () => 0 },
        });
      const first = await start();
      const second = await start(first.adminKey);
      try {
        // The second instance has read the (healthy) states: it keeps its copy up to date.
        const known = await second.services.models.deploymentHealth('pool');
        expect(known.map((entry) => entry.state.failures)).toEqual([0, 0]);
        a.setDefaultBehaviour({ kind: 'error', status: 500 });
        expect((await chat(first, 'pool')).statusCode).toBe(200);
        expect(chatCalls(a)).toHaveLength(1);
        // The second instance hears of it (a message, not a timer): wait until it has.
        for (;;) {
          const [state] = await second.services.models.deploymentHealth('pool');
          if (state!.state.failures === 1) break;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        for (let index = 0; index < 6; index += 1) {
          expect((await chat(index % 2 === 0 ? second : first, 'pool')).statusCode).toBe(200);
        }
        expect(chatCalls(a)).toHaveLength(1);
        expect(chatCalls(b)).toHaveLength(7);
        expect(chatCalls(a)[0]!.status).toBe(500);
      } finally {
        await first.close();
        await second.close();
        await database.drop();
        await a.close();
        await b.close();
      }
    },
  );

  it.runIf(reachable)(
    'lets one request of the two instances probe a deployment once its cooldown is over',
    async () => {
      const a = await startFakeUpstream({ requireApiKey: upstreamKey });
      const b = await startFakeUpstream({ requireApiKey: upstreamKey });
      const refusedUrl = `http://127.0.0.1:${await freePort()}/v1`;
      const env = {
        FAKE_UPSTREAM_KEY: upstreamKey,
        REDIS_URL: redisTestUrl,
        REDIS_KEY_PREFIX: `test-deployments-${randomBytes(6).toString('hex')}`,
      };
      const database = await dialect.create({ migrated: true });
      const overrides = { ...catalog(a, b, refusedUrl), deployment_cooldown_ms: 200 };
      const first = await startTestApp({ dialect, database, env, overrides });
      const second = await startTestApp({
        dialect,
        database,
        env,
        overrides,
        adminKey: first.adminKey,
        services: { deploymentRandom: () => 0 },
      });
      try {
        a.enqueueFor('chat', { kind: 'error', status: 500 });
        expect((await chat(second, 'pool')).statusCode).toBe(200);
        // Both instances know of the cooldown, and it is over (read off the states, not timed).
        for (;;) {
          const states = await Promise.all(
            [first, second].map(
              async (app) => (await app.services.models.deploymentHealth('pool'))[0]!.state,
            ),
          );
          if (states.every((state) => state.failures === 1 && state.until < Date.now())) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        // The probe takes a while to answer: meanwhile every other request goes to b.
        a.enqueueFor('chat', { kind: 'delay', ms: 500 });
        const answers = await Promise.all(
          [first, second, first, second, first, second].map((app) => chat(app, 'pool')),
        );
        expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
        expect(chatCalls(a)).toHaveLength(2);
      } finally {
        await first.close();
        await second.close();
        await database.drop();
        await a.close();
        await b.close();
      }
    },
  );
});
