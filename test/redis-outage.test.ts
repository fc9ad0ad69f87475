// An asynchronous pipeline run asked for while Redis (the job queue's store) is unreachable, on both
// dialects: the service answers 202 without waiting for the outage to end (the run is recorded in
// the database, queued in this instance), and the run is carried out once Redis is back. Redis is
// "down" behind a TCP proxy the test closes; the machine's Redis itself is never touched.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects, redisTestUrl, type TestDatabase } from './support/dialects.js';
import { redisReachable } from './support/redis.js';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';
import { bearer, startTestApp, type TestApp } from './support/test-app.js';

const withRedis = await redisReachable('Redis outage');

function parseEvents(body: string): Array<Record<string, unknown>> {
  return body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => JSON.parse(frame.slice('data: '.length)) as Record<string, unknown>);
}

describe.skipIf(!withRedis).each(allDialects)(
  'an async run while Redis is down ($name)',
  { timeout: 60_000 },
  (dialect) => {
    let proxy: TcpProxy;
    let harness: TestApp;
    let pipelineId = '';
    /** The database once the first instance has stopped (the second does not own it). */
    let database: TestDatabase | null = null;
    const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
      harness.app.inject({
        method,
        url,
        headers: bearer(harness.adminKey),
        ...(payload === undefined ? {} : { payload }),
      });

    beforeAll(async () => {
      proxy = await startTcpProxy(new URL(redisTestUrl));
      harness = await startTestApp({
        dialect,
        env: { REDIS_URL: proxy.url, JOB_ENQUEUE_WAIT_MS: '300' },
        services: {
          rateLimitPrefix: `test-outage-rl-${randomBytes(6).toString('hex')}`,
          executionChannel: `test-outage-feed-${randomBytes(6).toString('hex')}`,
        },
      });
    });
    afterAll(async () => {
      await proxy.open().catch(() => undefined);
      await harness.close();
      await database?.drop();
      await proxy.close();
    });

    it('answers 202 at once with the run recorded, and runs it once Redis is back', async () => {
      const agent = await call('POST', '/v1/agents', {
        name: 'table',
        agent_type: 'StructureAgent',
        configuration: {},
      });
      expect(agent.statusCode, agent.body).toBe(201);
      const pipeline = await call('POST', '/v1/pipelines', {
        name: 'while down',
        stages: [
          {
            name: 'table',
            agent_id: agent.json<{ id: string }>().id,
            input_mapping: { data: '$.input.rows' },
          },
        ],
      });
      expect(pipeline.statusCode, pipeline.body).toBe(201);
      pipelineId = pipeline.json<{ pipeline_id: string }>().pipeline_id;

      await proxy.close();
      // Before the fix this waited for the whole outage, which lasts until the answer arrives:
      // only the test's own timeout would have ended it.
      const started = await call('POST', `/v1/pipelines/${pipelineId}/execute`, {
        rows: 'region,amount\nNorth,1\nSouth,2',
        async: true,
      });
      expect(started.statusCode, started.body).toBe(202);
      const executionId = started.json<{ execution_id: string }>().execution_id;
      const recorded = await call('GET', `/v1/executions/${executionId}`);
      expect(recorded.statusCode).toBe(200);
      expect(recorded.json<{ execution: { status: string } }>().execution.status).toBe('running');

      await proxy.open();
      // The event stream ends with the run's end: it was queued once Redis answered again.
      const events = parseEvents((await call('GET', `/v1/executions/${executionId}/events`)).body);
      expect(events.at(-1)).toMatchObject({ type: 'execution-end', status: 'completed' });
    });

    it('loses no run when the instance holding it stops before Redis is back', async () => {
      await proxy.close();
      const started = await call('POST', `/v1/pipelines/${pipelineId}/execute`, {
        rows: 'region,amount\nEast,3',
        async: true,
      });
      expect(started.statusCode, started.body).toBe(202);
      const executionId = started.json<{ execution_id: string }>().execution_id;
      // The instance stops while Redis is still down (its shutdown must not wait for Redis); the
      // database stays for the next one.
      database = harness.database;
      await harness.app.close();
      await harness.services.close();
      await proxy.open();
      // Another instance over the same database takes the recorded run up and carries it out.
      harness = await startTestApp({
        dialect,
        database,
        adminKey: harness.adminKey,
        env: { REDIS_URL: proxy.url },
      });
      await harness.services.instances.start();
      const events = parseEvents((await call('GET', `/v1/executions/${executionId}/events`)).body);
      expect(events.at(-1)).toMatchObject({ type: 'execution-end', status: 'completed' });
    });
  },
);
