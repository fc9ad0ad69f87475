// Human approval across a dead instance, with the service run as users run it (child processes):
// a ToolAgent's run pauses for approval of an MCP tool call, the instance is killed (SIGKILL),
// another instance starts on the same database, the approval is given there, and the run
// completes with the approved (edited) arguments — the call made once, by the new instance, and
// the model turn taken before the kill not taken again. And a call killed while it runs: the new
// instance does not make it again — it is `interrupted`, waiting for a person, and rejecting it
// leaves the tool called once in all. On SQLite (the embedded default, the new instance on the
// same file) and on PostgreSQL with Redis (BullMQ carries the run).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { allDialects, redisTestUrl, type DialectUnderTest } from './support/dialects.js';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.js';
import { startStreamableServer, type TestMcpServer } from './support/mcp-test-servers.js';
import { startService, type RunningService } from './support/process.js';
import { redisReachable } from './support/redis.js';

interface StepJson {
  kind: string;
  name: string;
  status: string;
  arguments: Record<string, unknown> | null;
  output: { content?: string } | null;
  decision: { decision: string; edited: boolean } | null;
}

/** The answers this test reads (other fields are left out). */
interface Answer {
  id?: string;
  status?: string;
  execution_id?: string;
  execution: {
    status: string;
    output: Record<string, unknown> | null;
    steps: StepJson[];
    pending_approvals: StepJson[];
  };
}

const withRedis = await redisReachable('approval-restart');
const upstreamKey = 'sk-approval-restart-upstream';

function configFile(directory: string, upstream: FakeUpstream): string {
  const file = path.join(directory, 'platform.json');
  writeFileSync(
    file,
    JSON.stringify({
      default_model: 'tool-chat',
      models: [
        {
          name: 'tool-chat',
          provider: 'openai-compatible',
          base_url: upstream.baseUrl,
          api_key_env: 'RESTART_UPSTREAM_KEY',
          model: 'gpt-4o-mini',
          max_tokens: 64,
          max_retries: 0,
        },
      ],
      // The MCP server runs on this machine's loopback: the operator allows it for tools.
      tools: { allowed_private_targets: ['127.0.0.1'] },
    }),
  );
  return file;
}

const setups = allDialects.map((dialect) => ({
  dialect,
  redis: dialect.name === 'postgres',
}));

describe.each(setups)('approval after a kill on $dialect.name', ({ dialect, redis }) => {
  const skip = redis && !withRedis;
  const directory = mkdtempSync(path.join(tmpdir(), 'platform-approval-'));
  const adminKey = generateApiKey();
  let upstream: FakeUpstream;
  let mcp: TestMcpServer;
  let database: Awaited<ReturnType<DialectUnderTest['create']>>;
  let env: Record<string, string>;
  const instances: RunningService[] = [];

  async function call(instance: RunningService, method: string, url: string, body?: unknown) {
    const response = await fetch(`http://127.0.0.1:${instance.port}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${adminKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as Answer };
  }

  beforeAll(async () => {
    if (skip) return;
    database = await dialect.create();
    upstream = await startFakeUpstream({ requireApiKey: upstreamKey });
    mcp = await startStreamableServer();
    env = {
      DATABASE_URL: database.url,
      PLATFORM_ADMIN_KEY: adminKey,
      RESTART_UPSTREAM_KEY: upstreamKey,
      PLATFORM_CONFIG: configFile(directory, upstream),
      MODELS_DIR: path.join(directory, 'models'),
      MODEL_AUTO_PULL: 'false',
      // A killed instance is taken for stopped after 1.5 s (and BullMQ's lock lapses after 2 s).
      JOB_INSTANCE_TIMEOUT_MS: '1500',
      JOB_LOCK_MS: '2000',
      ...(redis
        ? {
            REDIS_URL: redisTestUrl,
            REDIS_KEY_PREFIX: `test-approval-${randomBytes(6).toString('hex')}`,
          }
        : {}),
    };
  }, 180_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop('SIGKILL')));
    await upstream?.close();
    await mcp?.close();
    await database?.drop();
    rmSync(directory, { recursive: true, force: true });
  });

  it.skipIf(skip)(
    'completes on a new instance, with the approved arguments, a run paused before a kill',
    { timeout: 90_000 },
    async () => {
      const first = await startService(env);
      instances.push(first);
      const agent = await call(first, 'POST', '/v1/agents', {
        name: 'careful',
        agent_type: 'ToolAgent',
        configuration: {
          tools: [{ type: 'mcp', name: 'box', url: mcp.url, requires_approval: ['echo'] }],
        },
      });
      expect(agent.status, JSON.stringify(agent.json)).toBe(201);
      upstream.enqueueFor(
        'chat',
        {
          kind: 'reply',
          toolCalls: [{ id: 'call_e', name: 'box__echo', arguments: '{"text":"draft"}' }],
        },
        { kind: 'reply', content: 'Echoed.' },
      );
      const run = await call(first, 'POST', `/v1/agents/${agent.json.id ?? ''}/execute`, {
        query: 'Echo something',
      });
      expect(run.json.status, JSON.stringify(run.json)).toBe('waiting_for_approval');
      const id = run.json.execution_id ?? '';
      const callsBefore = mcp.requests.filter((request) => request.rpc.includes('tools/call'));
      expect(callsBefore).toHaveLength(0);

      await first.stop('SIGKILL');
      const second = await startService(env);
      instances.push(second);
      const paused = await call(second, 'GET', `/v1/executions/${id}`);
      expect(paused.json.execution.status).toBe('waiting_for_approval');
      expect(paused.json.execution.pending_approvals[0]).toMatchObject({
        name: 'box__echo',
        arguments: { text: 'draft' },
      });

      const approved = await call(second, 'POST', `/v1/executions/${id}/approve`, {
        arguments: { text: 'approved text' },
      });
      expect(approved.status, JSON.stringify(approved.json)).toBe(200);
      // Followed to its end on the new instance.
      const events = await fetch(`http://127.0.0.1:${second.port}/v1/executions/${id}/events`, {
        headers: { authorization: `Bearer ${adminKey}` },
      });
      const text = await events.text();
      expect(text).toContain('"type":"execution-end"');
      const done = await call(second, 'GET', `/v1/executions/${id}`);
      expect(done.json.execution.status, JSON.stringify(done.json)).toBe('completed');
      expect(done.json.execution.output).toMatchObject({ answer: 'Echoed.' });
      const toolStep = done.json.execution.steps.find((step) => step.kind === 'tool');
      expect(toolStep).toMatchObject({
        status: 'completed',
        arguments: { text: 'approved text' },
        decision: { decision: 'approved', edited: true },
      });
      expect(toolStep?.output?.content).toContain('approved text');
      // One tool call, made after the approval; two model turns in all (none repeated).
      expect(mcp.requests.filter((request) => request.rpc.includes('tools/call'))).toHaveLength(1);
      expect(upstream.requests.filter((request) => request.endpoint === 'chat')).toHaveLength(2);
    },
  );

  it.skipIf(skip)(
    'does not make again a call its instance was killed in: it waits, interrupted, for a person',
    { timeout: 90_000 },
    async () => {
      // No instance of the test before may take this run's job (they share the queue).
      await Promise.all(instances.splice(0).map((instance) => instance.stop('SIGKILL')));
      const first = await startService(env);
      instances.push(first);
      const agent = await call(first, 'POST', '/v1/agents', {
        name: 'payer',
        agent_type: 'ToolAgent',
        configuration: {
          tools: [{ type: 'mcp', name: 'box', url: mcp.url, requires_approval: ['wait'] }],
        },
      });
      expect(agent.status, JSON.stringify(agent.json)).toBe(201);
      upstream.reset();
      upstream.enqueueFor('chat', {
        kind: 'reply',
        toolCalls: [{ id: 'call_w', name: 'box__wait', arguments: '{"ms":60000}' }],
      });
      const run = await call(first, 'POST', `/v1/agents/${agent.json.id ?? ''}/execute`, {
        query: 'Pay it',
      });
      expect(run.json.status, JSON.stringify(run.json)).toBe('waiting_for_approval');
      const id = run.json.execution_id ?? '';
      const calls = () =>
        mcp.requests.flatMap((request) => request.calledTools).filter((name) => name === 'wait')
          .length;
      expect(calls()).toBe(0);

      // Approved: the call starts on the first instance, which is killed while it runs.
      const approved = await call(first, 'POST', `/v1/executions/${id}/approve`, {});
      expect(approved.status, JSON.stringify(approved.json)).toBe(200);
      while (calls() === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      await first.stop('SIGKILL');

      const second = await startService(env);
      instances.push(second);
      // The second instance takes the run up once the first's heartbeat is stale.
      let paused = await call(second, 'GET', `/v1/executions/${id}`);
      while (paused.json.execution.status !== 'waiting_for_approval') {
        expect(paused.json.execution.status, JSON.stringify(paused.json)).toBe('running');
        await new Promise((resolve) => setTimeout(resolve, 100));
        paused = await call(second, 'GET', `/v1/executions/${id}`);
      }
      expect(paused.json.execution.pending_approvals).toMatchObject([
        { name: 'box__wait', status: 'interrupted', arguments: { ms: 60000 } },
      ]);
      expect(calls()).toBe(1);

      const rejected = await call(second, 'POST', `/v1/executions/${id}/reject`, {
        reason: 'it was paid already',
      });
      expect(rejected.status, JSON.stringify(rejected.json)).toBe(200);
      expect(rejected.json.execution.status).toBe('failed');
      expect(calls()).toBe(1);
    },
  );
});
