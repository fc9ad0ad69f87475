// Two instances of the service, as users run them (child processes started the way `npm start`
// starts one), on one PostgreSQL database and one Redis: limits counted exactly across both, a
// revocation on one refused on the other within a second, an execution followed from the other
// instance, and an asynchronous run whose instance is killed (SIGKILL) finished by the other
// without its completed first stage running again.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { allDialects, redisTestUrl, type TestDatabase } from './support/dialects.js';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.js';
import { startService, type RunningService } from './support/process.js';
import { redisReachable } from './support/redis.js';

const withRedis = await redisReachable('multi-instance');
const postgres = allDialects.find((dialect) => dialect.name === 'postgres');
const upstreamKey = 'sk-multi-instance-upstream';

/** The catalog of one instance: one chat model on that instance's own fake upstream. */
function configFile(directory: string, name: string, upstream: FakeUpstream): string {
  const file = path.join(directory, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      rate_limits: {
        tiers: {
          minute10: { per_minute: 10, per_day: 1000 },
          // Room for polling a key until it is refused.
          roomy: { per_minute: 100_000, per_day: 1_000_000 },
        },
      },
      default_model: 'shared-chat',
      models: [
        {
          name: 'shared-chat',
          provider: 'openai-compatible',
          base_url: upstream.baseUrl,
          api_key_env: 'MULTI_UPSTREAM_KEY',
          model: 'gpt-4o-mini',
          max_tokens: 64,
          max_retries: 0,
          timeout_ms: 60_000,
        },
      ],
    }),
  );
  return file;
}

function parseEvents(body: string): Array<Record<string, unknown>> {
  return body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => JSON.parse(frame.slice('data: '.length)) as Record<string, unknown>);
}

/** `promise`, or a failure naming `what` after `ms`. */
async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(postgres === undefined || !withRedis)(
  'two instances on one PostgreSQL and one Redis',
  { timeout: 60_000 },
  () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'platform-multi-'));
    const adminKey = generateApiKey();
    let database: TestDatabase;
    const upstreams: FakeUpstream[] = [];
    const instances: RunningService[] = [];

    async function call(
      instance: RunningService,
      method: string,
      url: string,
      body?: unknown,
      key = adminKey,
    ): Promise<{ status: number; json: Record<string, unknown> }> {
      const response = await fetch(`http://127.0.0.1:${instance.port}${url}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    }

    /** The event stream of an execution as one instance sends it, read to its end. */
    async function follow(instance: RunningService, executionId: string): Promise<string> {
      const response = await fetch(
        `http://127.0.0.1:${instance.port}/v1/executions/${executionId}/events`,
        { headers: { authorization: `Bearer ${adminKey}` } },
      );
      expect(response.status).toBe(200);
      return response.text();
    }

    beforeAll(async () => {
      database = await postgres!.create();
      upstreams.push(await startFakeUpstream(), await startFakeUpstream());
      const env = {
        DATABASE_URL: database.url,
        REDIS_URL: redisTestUrl,
        // One deployment's keys and channels, apart from every other test on this Redis.
        REDIS_KEY_PREFIX: `test-multi-${randomBytes(6).toString('hex')}`,
        // A killed instance's run is taken up about this long after the kill.
        JOB_LOCK_MS: '2000',
        PLATFORM_ADMIN_KEY: adminKey,
        MULTI_UPSTREAM_KEY: upstreamKey,
        MODELS_DIR: path.join(directory, 'models'),
        MODEL_AUTO_PULL: 'false',
      };
      // Started together: migrations and the owner account happen once between them.
      instances.push(
        ...(await Promise.all(
          upstreams.map((upstream, index) =>
            startService({
              ...env,
              PLATFORM_CONFIG: configFile(directory, `instance-${index}`, upstream),
            }),
          ),
        )),
      );
    }, 180_000);

    afterAll(async () => {
      await Promise.all(instances.map((instance) => instance.stop('SIGKILL')));
      await Promise.all(upstreams.map((upstream) => upstream.close()));
      await database?.drop();
      rmSync(directory, { recursive: true, force: true });
    });

    it('counts a rate limit exactly across both instances', async () => {
      const [first, second] = instances as [RunningService, RunningService];
      const created = await call(first, 'POST', '/v1/api-keys', {
        name: 'limited',
        scopes: ['models:read'],
        tier: 'minute10',
      });
      expect(created.status).toBe(201);
      const key = created.json.key as string;
      const responses = await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          call(index % 2 === 0 ? first : second, 'GET', '/v1/features', undefined, key),
        ),
      );
      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(10);
      expect(statuses.filter((status) => status === 429)).toHaveLength(20);
      // Both instances refused some: the count was one, not one per instance.
      const refusedBy = new Set(
        responses.flatMap((response, index) => (response.status === 429 ? [index % 2] : [])),
      );
      expect(refusedBy.size).toBe(2);
    });

    it('refuses a key revoked on one instance on the other within a second', async () => {
      const [first, second] = instances as [RunningService, RunningService];
      const created = await call(first, 'POST', '/v1/api-keys', {
        name: 'to revoke',
        scopes: ['models:read'],
        tier: 'roomy',
      });
      const key = created.json.key as string;
      // Validated (and cached) on the second instance first.
      expect((await call(second, 'GET', '/v1/features', undefined, key)).status).toBe(200);
      const revoked = await call(first, 'DELETE', `/v1/api-keys/${created.json.id as string}`);
      expect(revoked.status).toBe(200);
      // Refused once the other instance's cached lookup lapses (its key cache lifetime, 500 ms by
      // default; the clock-driven tests in test/http/sessions.test.ts hold that bound). Here, over
      // real processes, only that it happens is asserted; the time is printed.
      const at = Date.now();
      let refused: { status: number; json: Record<string, unknown> } | undefined;
      while (refused === undefined) {
        const answer = await call(second, 'GET', '/v1/features', undefined, key);
        if (answer.status !== 200) refused = answer;
        else await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const elapsed = Date.now() - at;
      process.stdout.write(
        `[multi-instance] revocation refused on the other instance after ${elapsed} ms\n`,
      );
      expect(refused?.status).toBe(401);
      expect(refused?.json.error).toMatchObject({ code: 'revoked_api_key' });
    });

    it('finishes on the other instance an async run whose instance was killed, its first stage not rerun, followed from there', async () => {
      const [first] = instances as [RunningService, RunningService];
      const agent = async () => {
        const created = await call(first, 'POST', '/v1/agents', {
          name: 'writer',
          agent_type: 'GenerationAgent',
          configuration: {},
          model_id: 'shared-chat',
        });
        expect(created.status).toBe(201);
        return created.json.id as string;
      };
      const pipeline = await call(first, 'POST', '/v1/pipelines', {
        name: 'two stages',
        stages: [
          { name: 'draft', agent_id: await agent(), input_mapping: { query: '$.input.topic' } },
          {
            name: 'polish',
            agent_id: await agent(),
            input_mapping: { query: '$.stages.draft.text' },
          },
        ],
      });
      expect(pipeline.status).toBe(201);
      // Whichever instance takes the run: its first call is answered after a while (time for
      // the followers to connect), its second hangs until the instance is killed.
      for (const upstream of upstreams) {
        upstream.reset();
        upstream.enqueue(
          { kind: 'delay', ms: 1500, then: { kind: 'reply', content: 'draft from the first run' } },
          { kind: 'hang' },
        );
      }
      const started = await call(
        first,
        'POST',
        `/v1/pipelines/${pipeline.json.pipeline_id as string}/execute`,
        { topic: 'rivers', async: true },
      );
      expect(started.status).toBe(202);
      const executionId = started.json.execution_id as string;
      // Followers on both instances, connected while the first stage is under way.
      const followers = instances.map((instance) =>
        follow(instance, executionId).catch((error: unknown) => error),
      );

      // The instance running it is the one whose upstream saw the second stage's call.
      const runner = await within(
        15_000,
        Promise.race(
          upstreams.map((upstream, index) => upstream.waitForRequests(2, 15_000).then(() => index)),
        ),
        'the second stage',
      );
      const survivor = 1 - runner;
      const survivorUpstream = upstreams[survivor]!;
      expect(survivorUpstream.requests).toHaveLength(0);
      survivorUpstream.reset();
      survivorUpstream.enqueue({ kind: 'reply', content: 'polished on the survivor' });

      await instances[runner]!.stop('SIGKILL');
      const killedAt = Date.now();

      const body = await within(30_000, followers[survivor]!, 'the follower on the survivor');
      process.stdout.write(
        `[multi-instance] run finished on the survivor ${Date.now() - killedAt} ms after the kill\n`,
      );
      expect(typeof body).toBe('string');
      const events = parseEvents(body as string);
      expect(
        events.map((event) =>
          typeof event.stage === 'string' ? `${event.type as string} ${event.stage}` : event.type,
        ),
      ).toEqual([
        'stage-start draft',
        'stage-end draft',
        'stage-start polish',
        'stage-end polish',
        'execution-end',
      ]);
      expect(events.at(-1)).toMatchObject({
        status: 'completed',
        output: { text: 'polished on the survivor' },
        metrics: { stages_completed: 2 },
      });

      // The first stage ran once, on the killed instance; the survivor made one call, the second
      // stage's, fed the first stage's output as recorded.
      expect(upstreams[runner]!.requests).toHaveLength(2);
      expect(survivorUpstream.requests).toHaveLength(1);
      expect(JSON.stringify(survivorUpstream.requests[0]!.body)).toContain(
        'draft from the first run',
      );
      const detail = await call(instances[survivor]!, 'GET', `/v1/executions/${executionId}`);
      const stages = (detail.json.execution as { stages: Array<Record<string, unknown>> }).stages;
      expect(stages.map((stage) => [stage.name, stage.status, stage.attempts])).toEqual([
        ['draft', 'completed', 1],
        ['polish', 'completed', 1],
      ]);
    });
  },
);
