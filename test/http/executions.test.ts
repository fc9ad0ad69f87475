// Executions through the HTTP API, on every dialect: records of agent and pipeline runs, and their
// event streams fed by the change feed — in one instance, and across two instances sharing one
// database, through PostgreSQL LISTEN/NOTIFY and through Redis pub/sub.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects, redisTestUrl } from '../support/dialects.js';
import { redisReachable } from '../support/redis.js';
import { bearer, createAccount } from '../support/test-app.js';

const withRedis = await redisReachable('executions');

function parseEvents(body: string): Array<Record<string, unknown>> {
  return body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => JSON.parse(frame.slice('data: '.length)) as Record<string, unknown>);
}

/** `promise`, or a failure naming `what` after `ms` (a follower the feed never wakes hangs). */
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

const label = (event: Record<string, unknown>) =>
  `${event.type as string}${typeof event.stage === 'string' ? ` ${event.stage}` : ''}`;

const call = (
  harness: ChatHarness,
  method: 'GET' | 'POST',
  url: string,
  payload?: unknown,
  key?: string,
) =>
  harness.app.inject({
    method,
    url,
    headers: bearer(key ?? harness.adminKey),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

/** A table stage (instant) and a generation stage whose model answers after `delayMs`. */
async function slowPipeline(harness: ChatHarness): Promise<string> {
  const agent = async (body: Record<string, unknown>) => {
    const response = await call(harness, 'POST', '/v1/agents', { name: 'a', ...body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  };
  const table = await agent({ agent_type: 'StructureAgent', configuration: {} });
  const writer = await agent({ agent_type: 'GenerationAgent', configuration: {} });
  const response = await call(harness, 'POST', '/v1/pipelines', {
    name: 'slow',
    stages: [
      { name: 'table', agent_id: table, input_mapping: { data: '$.input.rows' } },
      { name: 'write', agent_id: writer, input_mapping: { query: '$.stages.table.markdown' } },
    ],
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ pipeline_id: string }>().pipeline_id;
}

const rows = 'region,amount\nNorth,1\nSouth,2';
const expectedEvents = [
  'stage-start table',
  'stage-end table',
  'stage-start write',
  'stage-end write',
  'execution-end',
];

describe.each(allDialects)('executions on $name', (dialect) => {
  let harness: ChatHarness;
  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
  });
  afterAll(async () => {
    await harness.close();
  });

  it('follows a run in the same instance from before its first stage to its end', async () => {
    const pipeline = await slowPipeline(harness);
    harness.upstream.enqueue({ kind: 'delay', ms: 250, then: { kind: 'reply', content: 'Done.' } });
    const started = await call(harness, 'POST', `/v1/pipelines/${pipeline}/execute`, {
      rows,
      async: true,
      user_id: 'alice',
    });
    expect(started.statusCode, started.body).toBe(202);
    const id = started.json<{ execution_id: string }>().execution_id;
    const events = parseEvents((await call(harness, 'GET', `/v1/executions/${id}/events`)).body);
    expect(events.map(label)).toEqual(expectedEvents);
    expect(events.at(-1)).toMatchObject({
      execution_id: id,
      kind: 'pipeline',
      status: 'completed',
      output: { text: 'Done.' },
      metrics: { stages_completed: 2 },
    });
    const detail = (await call(harness, 'GET', `/v1/executions/${id}`)).json<{
      execution: { user_id: string | null; input: Record<string, unknown>; status: string };
    }>().execution;
    expect(detail).toMatchObject({ status: 'completed', user_id: 'alice', input: { rows } });
    expect(detail.input).not.toHaveProperty('user_id');
    expect(harness.services.executions.feedReach).toBe(
      dialect.name === 'postgres' ? 'postgres' : 'process',
    );
  });

  it('streams an agent execution as its end alone, and hides other accounts’ executions', async () => {
    const agent = (
      await call(harness, 'POST', '/v1/agents', {
        name: 'table',
        agent_type: 'StructureAgent',
        configuration: {},
      })
    ).json<{ id: string }>().id;
    const run = await call(harness, 'POST', `/v1/agents/${agent}/execute`, { data: rows });
    const id = run.json<{ execution_id: string }>().execution_id;
    const events = parseEvents((await call(harness, 'GET', `/v1/executions/${id}/events`)).body);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'execution-end',
        execution_id: id,
        kind: 'agent',
        status: 'completed',
        metrics: expect.objectContaining({ stages_completed: 0 }),
      }),
    ]);
    const other = await createAccount(harness.app, harness.adminKey, `exec-${dialect.name}`);
    for (const url of [`/v1/executions/${id}`, `/v1/executions/${id}/events`]) {
      const refused = await call(harness, 'GET', url, undefined, other.admin_key);
      expect(refused.statusCode, url).toBe(404);
      expect(refused.json<{ error: { code: string } }>().error.code).toBe('not_found');
    }
    expect((await call(harness, 'GET', '/v1/executions/exec_missing/events')).statusCode).toBe(404);
  });

  it('records a stage failure with its catalog code and type', async () => {
    const pipeline = await slowPipeline(harness);
    const run = await call(harness, 'POST', `/v1/pipelines/${pipeline}/execute`, {});
    expect(run.json()).toMatchObject({ status: 'failed' });
    const id = run.json<{ execution_id: string }>().execution_id;
    const detail = (await call(harness, 'GET', `/v1/executions/${id}`)).json<{
      execution: { error_detail: { code: string; type: string; path: string } };
    }>().execution;
    expect(detail.error_detail).toMatchObject({
      code: 'unresolved_path',
      type: 'invalid_request_error',
      path: '$.input.rows',
    });
  });
});

interface Transport {
  name: string;
  dialect: (typeof allDialects)[number];
  env: Record<string, string>;
  reach: string;
}

const transports: Transport[] = [];
const postgres = allDialects.find((dialect) => dialect.name === 'postgres');
if (postgres !== undefined) {
  transports.push({
    name: 'PostgreSQL LISTEN/NOTIFY',
    dialect: postgres,
    env: {},
    reach: 'postgres',
  });
}
if (withRedis) {
  for (const dialect of allDialects) {
    transports.push({
      name: `Redis pub/sub over ${dialect.name}`,
      dialect,
      env: { REDIS_URL: redisTestUrl },
      reach: 'redis',
    });
  }
}

describe.each(transports)('execution events across two instances: $name', (transport) => {
  let first: ChatHarness;
  let second: ChatHarness;
  beforeAll(async () => {
    const channel = `test-executions-${randomBytes(6).toString('hex')}`;
    const services = {
      executionChannel: channel,
      rateLimitPrefix: `test-exec-${randomBytes(6).toString('hex')}`,
    };
    first = await startChatHarness({ dialect: transport.dialect, env: transport.env, services });
    second = await startChatHarness({
      dialect: transport.dialect,
      env: transport.env,
      services,
      database: first.database,
      adminKey: first.adminKey,
    });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('delivers every change of a run on one instance to a follower on the other', async () => {
    expect(second.services.executions.feedReach).toBe(transport.reach);
    const pipeline = await slowPipeline(first);
    first.upstream.enqueue({ kind: 'delay', ms: 400, then: { kind: 'reply', content: 'Far.' } });
    const started = await call(first, 'POST', `/v1/pipelines/${pipeline}/execute`, {
      rows,
      async: true,
    });
    expect(started.statusCode, started.body).toBe(202);
    const id = started.json<{ execution_id: string }>().execution_id;
    // The follower starts while the run is under way on the first instance: it can only learn of
    // the later stages and the end through the transport (there is no polling to fall back on).
    const response = await within(
      25_000,
      call(second, 'GET', `/v1/executions/${id}/events`),
      'the follower on the other instance',
    );
    const received = Date.now();
    const events = parseEvents(response.body);
    expect(events.map(label)).toEqual(expectedEvents);
    const end = events.at(-1)!;
    expect(end).toMatchObject({ status: 'completed', output: { text: 'Far.' } });
    const detail = (await call(first, 'GET', `/v1/executions/${id}`)).json<{
      execution: { completed_at: string };
    }>().execution;
    const latency = received - Date.parse(detail.completed_at);
    process.stdout.write(
      `[executions] ${transport.name}: end seen on the other instance ${latency} ms after it was recorded\n`,
    );
  });

  it('tells followers on the other instance of runs continued from a stopped instance', async () => {
    const pipeline = await slowPipeline(first);
    first.upstream.enqueue({ kind: 'reply', content: 'Before.' });
    const started = await call(first, 'POST', `/v1/pipelines/${pipeline}/execute`, {
      rows,
      async: true,
    });
    const id = started.json<{ execution_id: string }>().execution_id;
    await within(5000, call(first, 'GET', `/v1/executions/${id}/events`), 'the first run');
    // As a crashed instance leaves it: still running in stage 'write', owned by an instance that
    // stopped beating.
    const { db } = first.services.storage;
    const old = new Date(Date.now() - 10 * 60_000).toISOString();
    const crashed = `inst_${randomBytes(8).toString('hex')}`;
    await db
      .insertInto('instances')
      .values({ id: crashed, started_at: old, heartbeat_at: old })
      .execute();
    await db
      .updateTable('executions')
      .set({ status: 'running', completed_at: null, output: null, instance_id: crashed })
      .where('id', '=', id)
      .execute();
    await db
      .updateTable('execution_stages')
      .set({ status: 'running', completed_at: null, output: null })
      .where('execution_id', '=', id)
      .where('position', '=', 1)
      .execute();
    first.upstream.enqueue({ kind: 'delay', ms: 200, then: { kind: 'reply', content: 'After.' } });
    const following = call(second, 'GET', `/v1/executions/${id}/events`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await first.services.instances.recover()).toBeGreaterThanOrEqual(1);
    const events = parseEvents((await within(5000, following, 'the follower')).body);
    expect(events.at(-1)).toMatchObject({
      type: 'execution-end',
      status: 'completed',
      output: { text: 'After.' },
    });
  });
});
