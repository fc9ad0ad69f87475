// The ToolAgent's safety rules through the HTTP API on both databases, over the fake upstream
// issuing tool calls and a real MCP server (issue 29): arguments a person approves meet the tool's
// input schema as the model's do; a call found `running` by a later sitting is not made again by
// itself; parallel calls spend the time budget once; one turn's calls are capped and their
// arguments bounded, without holding the event loop; and an execution's answer stays small.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allowedBlockMs, measureLoopBlock, remeasured } from '../support/loop-block.js';
import { startStreamableServer, type TestMcpServer } from '../support/mcp-test-servers.js';
import { bearer } from '../support/test-app.js';

interface Step {
  id: string;
  kind: 'model' | 'tool';
  call_id: string | null;
  name: string;
  arguments: Record<string, unknown> | null;
  output: Record<string, unknown> | null;
  status: string;
}

interface ExecutionJson {
  id: string;
  status: string;
  error_detail?: { code: string; limit?: string };
  steps: Step[];
  steps_total: number;
  pending_approvals: Step[];
}

interface ChatBody {
  messages: Array<{ role: string; content: string; tool_call_id?: string }>;
}

describe.each(allDialects)('ToolAgent safety on $name', remeasured, (dialect) => {
  let harness: ChatHarness;
  let mcp: TestMcpServer;
  let knowledgeBaseId = '';

  const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(harness.adminKey),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  const createAgent = async (tools: unknown[], extra: Record<string, unknown> = {}) => {
    const response = await call('POST', '/v1/agents', {
      name: 'careful',
      agent_type: 'ToolAgent',
      configuration: { tools, ...extra },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  };

  const execute = async (agentId: string, body: Record<string, unknown>) => {
    const response = await call('POST', `/v1/agents/${agentId}/execute`, body);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ status: string; execution_id: string; success: boolean }>();
  };

  const execution = async (id: string) => {
    const response = await call('GET', `/v1/executions/${id}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ execution: ExecutionJson }>().execution;
  };

  /** Reads the execution until it has `status` (a paused run's event stream does not end). */
  const until = async (id: string, status: string) => {
    for (;;) {
      const current = await execution(id);
      if (current.status === status) return current;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  const toolCalls = (name: string) =>
    mcp.requests.flatMap((request) => request.calledTools).filter((tool) => tool === name).length;
  const chatRequests = () =>
    harness.upstream.requests.filter((request) => request.endpoint === 'chat');

  beforeAll(async () => {
    mcp = await startStreamableServer();
    harness = await startChatHarness({
      dialect,
      overrides: { tools: { allowed_private_targets: ['127.0.0.1'] } },
    });
    const kb = await call('POST', '/v1/knowledge-bases', { name: 'Handbook' });
    knowledgeBaseId = kb.json<{ id: string }>().id;
    await call('POST', `/v1/knowledge-bases/${knowledgeBaseId}/documents`, {
      title: 'Refunds',
      content: 'Refunds are paid within 14 days of the return reaching the warehouse.',
    });
  });
  afterAll(async () => {
    await harness.close();
    await mcp.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  it('checks approved arguments against the tool’s input schema: 400 naming the field, the call still waiting', async () => {
    const agentId = await createAgent([
      { type: 'mcp', name: 'shop', url: mcp.url, requires_approval: ['refund'] },
    ]);
    harness.upstream.enqueueFor(
      'chat',
      {
        kind: 'reply',
        toolCalls: [
          { id: 'r1', name: 'shop__refund', arguments: '{"order_id":"A-1","amount":40}' },
        ],
      },
      { kind: 'reply', content: 'Refunded.' },
    );
    const run = await execute(agentId, { query: 'Refund order A-1' });
    expect(run.status).toBe('waiting_for_approval');
    const before = toolCalls('refund');

    const refused = [
      [{ order_id: 'A-1', amount: 1000 }, 'invalid_parameter', 'arguments.amount'],
      [{ amount: 10 }, 'missing_parameter', 'arguments.order_id'],
      [{ order_id: 'A-1', amount: 'ten' }, 'invalid_parameter', 'arguments.amount'],
      [{ order_id: 'A-1', amount: 10, note: 'x' }, 'invalid_parameter', 'arguments.note'],
    ] as const;
    for (const [args, code, param] of refused) {
      const answer = await call('POST', `/v1/executions/${run.execution_id}/approve`, {
        arguments: args,
      });
      expect(answer.statusCode, answer.body).toBe(400);
      expect(answer.json<{ error: { code: string; param: string } }>().error).toMatchObject({
        code,
        param,
      });
    }
    const waiting = await execution(run.execution_id);
    expect(waiting.status).toBe('waiting_for_approval');
    expect(waiting.pending_approvals).toHaveLength(1);
    expect(toolCalls('refund')).toBe(before);

    const approved = await call('POST', `/v1/executions/${run.execution_id}/approve`, {
      arguments: { order_id: 'A-1', amount: 25 },
    });
    expect(approved.statusCode, approved.body).toBe(200);
    await call('GET', `/v1/executions/${run.execution_id}/events`);
    const done = await execution(run.execution_id);
    expect(done.status).toBe('completed');
    expect(done.steps.find((step) => step.kind === 'tool')?.output?.content).toBe(
      'refunded 25 on A-1',
    );
    expect(toolCalls('refund')).toBe(before + 1);
  });

  it('does not make a call whose arguments the model wrote against the schema; the model is told why', async () => {
    const agentId = await createAgent([{ type: 'mcp', name: 'shop', url: mcp.url }]);
    harness.upstream.enqueueFor(
      'chat',
      {
        kind: 'reply',
        toolCalls: [
          { id: 'x1', name: 'shop__refund', arguments: '{"order_id":"A-2","amount":500}' },
        ],
      },
      { kind: 'reply', content: 'I cannot refund that much.' },
    );
    const before = toolCalls('refund');
    const run = await execute(agentId, { query: 'Refund 500 on A-2' });
    expect(run.success).toBe(true);
    expect(toolCalls('refund')).toBe(before);
    const fedBack = (chatRequests()[1]!.body as ChatBody).messages.find(
      (message) => message.role === 'tool',
    );
    expect(fedBack?.content).toMatch(/^Not called: .*arguments\.amount/);
  });

  it('asks a person before making again a call a stopped sitting left running; an idempotent one runs again', async () => {
    const careful = await createAgent([{ type: 'mcp', name: 'shop', url: mcp.url }]);
    const relaxed = await createAgent([
      { type: 'mcp', name: 'shop', url: mcp.url, idempotent: true },
    ]);
    for (const [agentId, idempotent] of [
      [careful, false],
      [relaxed, true],
    ] as const) {
      harness.upstream.reset();
      harness.upstream.enqueueFor(
        'chat',
        {
          kind: 'reply',
          toolCalls: [{ id: 'k1', name: 'shop__refund', arguments: '{"order_id":"K","amount":5}' }],
        },
        { kind: 'reply', content: 'Done.' },
        { kind: 'reply', content: 'Done.' },
      );
      const run = await execute(agentId, { query: 'Refund 5 on K' });
      expect(run.status).toBe('completed');
      // As a stopped instance leaves it: the call recorded running, no result, the run queued.
      const { db } = harness.services.storage;
      await db
        .updateTable('execution_steps')
        .set({ status: 'running', output: null, completed_at: null, duration_ms: null })
        .where('execution_id', '=', run.execution_id)
        .where('kind', '=', 'tool')
        .execute();
      await db
        .deleteFrom('execution_steps')
        .where('execution_id', '=', run.execution_id)
        .where('position', '>', 2)
        .execute();
      await db
        .updateTable('executions')
        .set({
          status: 'running',
          completed_at: null,
          output: null,
          run_plan: JSON.stringify({ kind: 'agent' }),
          instance_id: 'inst_gone',
        })
        .where('id', '=', run.execution_id)
        .execute();
      const before = toolCalls('refund');
      expect(await harness.services.instances.recover()).toBeGreaterThanOrEqual(1);
      const after = await until(
        run.execution_id,
        idempotent ? 'completed' : 'waiting_for_approval',
      );
      if (idempotent) {
        expect(toolCalls('refund')).toBe(before + 1);
        continue;
      }
      expect(after.status).toBe('waiting_for_approval');
      expect(after.pending_approvals).toMatchObject([
        { name: 'shop__refund', status: 'interrupted', arguments: { order_id: 'K', amount: 5 } },
      ]);
      expect(toolCalls('refund')).toBe(before);
      const approved = await call('POST', `/v1/executions/${run.execution_id}/approve`, {});
      expect(approved.statusCode, approved.body).toBe(200);
      await call('GET', `/v1/executions/${run.execution_id}/events`);
      expect((await execution(run.execution_id)).status).toBe('completed');
      expect(toolCalls('refund')).toBe(before + 1);
    }
  });

  it('spends the time budget once for calls made at once', async () => {
    const agentId = await createAgent([{ type: 'mcp', name: 'clock', url: mcp.url }]);
    // 16 calls of 1.5 s each: 24 s added up, 1.5 s of wall time, within a 15 s budget.
    harness.upstream.enqueueFor(
      'chat',
      {
        kind: 'reply',
        toolCalls: Array.from({ length: 16 }, (_, index) => ({
          id: `w${index}`,
          name: 'clock__wait',
          arguments: '{"ms":1500}',
        })),
      },
      { kind: 'reply', content: 'All waited.' },
    );
    const run = await execute(agentId, {
      query: 'Wait sixteen times',
      parameters: { time_budget_ms: 15_000 },
    });
    expect(run.success, JSON.stringify(run)).toBe(true);
    const detail = await execution(run.execution_id);
    const calls = detail.steps.filter((step) => step.kind === 'tool');
    expect(calls.filter((step) => step.status === 'completed')).toHaveLength(16);
    // Listed in the order the model asked, whichever ended first (each is recorded as it starts).
    expect(calls.map((step) => step.call_id)).toEqual(
      Array.from({ length: 16 }, (_, index) => `w${index}`),
    );
  });

  it('makes at most max_calls_per_turn calls of a turn asking for 1,000, tells the model, and does not hold the loop', async () => {
    const agentId = await createAgent([
      { type: 'knowledge_search', name: 'handbook', knowledge_base_ids: [knowledgeBaseId] },
    ]);
    const turnOf = (count: number) => ({
      kind: 'reply' as const,
      toolCalls: Array.from({ length: count }, (_, index) => ({
        id: `c${index}`,
        name: 'handbook',
        arguments: '{"query":"refund time"}',
      })),
    });
    harness.upstream.enqueueFor('chat', turnOf(16), { kind: 'reply', content: 'Control.' });
    const control = await measureLoopBlock(() => execute(agentId, { query: 'control' }));
    harness.upstream.reset();
    harness.upstream.enqueueFor('chat', turnOf(1000), { kind: 'reply', content: 'Capped.' });
    const hostile = await measureLoopBlock(() => execute(agentId, { query: 'a thousand' }));
    console.log('1,000 calls', control.maxBlockMs, hostile.maxBlockMs);
    expect(hostile.result.success).toBe(true);
    const detail = await execution(hostile.result.execution_id);
    expect(detail.steps.filter((step) => step.kind === 'tool')).toHaveLength(16);
    expect(detail.steps.find((step) => step.kind === 'model')?.output).toMatchObject({
      calls_refused: 984,
    });
    const tools = (chatRequests()[1]!.body as ChatBody).messages.filter(
      (message) => message.role === 'tool',
    );
    expect(tools).toHaveLength(16);
    expect(tools.at(-1)?.content).toContain('984 more calls were not made');
    expect(hostile.maxBlockMs).toBeLessThan(allowedBlockMs(control.maxBlockMs, hostile));
  });

  it('neither parses nor stores 5 MB of arguments, and the execution answer stays small', async () => {
    const agentId = await createAgent([
      { type: 'knowledge_search', name: 'handbook', knowledge_base_ids: [knowledgeBaseId] },
    ]);
    const hugeArguments = JSON.stringify({
      query: 'refund',
      padding: Array.from({ length: 520_000 }, (_, index) => `v${index}`),
    });
    expect(hugeArguments.length).toBeGreaterThan(5_000_000);
    const turn = (args: string) => ({
      kind: 'reply' as const,
      toolCalls: [{ id: 'h1', name: 'handbook', arguments: args }],
    });
    harness.upstream.enqueueFor('chat', turn('{"query":"refund"}'), {
      kind: 'reply',
      content: 'Control.',
    });
    const control = await measureLoopBlock(() => execute(agentId, { query: 'control' }));
    harness.upstream.reset();
    harness.upstream.enqueueFor('chat', turn(hugeArguments), {
      kind: 'reply',
      content: 'Too big.',
    });
    const hostile = await measureLoopBlock(() => execute(agentId, { query: 'huge' }));
    console.log('5 MB arguments', control.maxBlockMs, hostile.maxBlockMs);
    expect(hostile.result.success).toBe(true);
    const answer = await call('GET', `/v1/executions/${hostile.result.execution_id}`);
    expect(answer.body.length).toBeLessThan(20_000);
    const detail = answer.json<{ execution: ExecutionJson }>().execution;
    const toolStep = detail.steps.find((step) => step.kind === 'tool');
    expect(toolStep).toMatchObject({ status: 'failed', arguments: null });
    expect(String(toolStep?.output?.content)).toMatch(/^Not called: the arguments are \d+ bytes/);
    // The model's next turn is sent the placeholder, not the 5 MB.
    const next = JSON.stringify(chatRequests()[1]!.body);
    expect(next.length).toBeLessThan(20_000);
    expect(next).toContain('arguments_cut');
    expect(hostile.maxBlockMs).toBeLessThan(allowedBlockMs(control.maxBlockMs, hostile));
  });

  it('answers an execution with its first 100 steps, large fields as previews; the rest page by page, one step whole', async () => {
    const agentId = await createAgent(
      [{ type: 'knowledge_search', name: 'handbook', knowledge_base_ids: [knowledgeBaseId] }],
      { max_result_chars: 20_000 },
    );
    const longQuery = JSON.stringify({ query: `refund ${'x'.repeat(10_000)}` });
    harness.upstream.enqueueFor(
      'chat',
      ...Array.from({ length: 7 }, (_, turn) => ({
        kind: 'reply' as const,
        toolCalls: Array.from({ length: 16 }, (_, index) => ({
          id: `p${turn}_${index}`,
          name: 'handbook',
          arguments: index === 0 ? longQuery : '{"query":"refund"}',
        })),
      })),
      { kind: 'reply', content: 'Many steps.' },
    );
    const run = await execute(agentId, { query: 'many', parameters: { max_steps: 10 } });
    expect(run.success, JSON.stringify(run)).toBe(true);
    const detail = await execution(run.execution_id);
    expect(detail.steps_total).toBe(8 + 7 * 16);
    expect(detail.steps).toHaveLength(100);
    const cut = detail.steps.find((step) => step.arguments?.truncated === true);
    expect(cut?.arguments).toMatchObject({ truncated: true, preview: expect.any(String) });
    const page = await call('GET', `/v1/executions/${run.execution_id}/steps?limit=100&offset=100`);
    expect(page.statusCode, page.body).toBe(200);
    const rest = page.json<{ steps: Step[]; total: number }>();
    expect(rest.total).toBe(detail.steps_total);
    expect(rest.steps).toHaveLength(detail.steps_total - 100);
    const whole = await call('GET', `/v1/executions/${run.execution_id}/steps/${cut!.id}`);
    expect(whole.statusCode, whole.body).toBe(200);
    expect(whole.json<{ step: Step }>().step.arguments).toEqual(JSON.parse(longQuery));
    const missing = await call('GET', `/v1/executions/${run.execution_id}/steps/step_nope`);
    expect(missing.statusCode).toBe(404);
  });
});
