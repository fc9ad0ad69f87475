// ToolAgent through the HTTP API on both databases, over the fake OpenAI-compatible upstream
// issuing tool calls: a two-step loop with a built-in tool, parallel calls, limits, every step in
// the execution and its events, approval (edited arguments), rejection, and save-time refusals.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { bearer } from '../support/test-app.js';
import {
  startHttpServer,
  startStreamableServer,
  type TestMcpServer,
} from '../support/mcp-test-servers.js';

interface Step {
  id: string;
  stage_record_id: string | null;
  kind: 'model' | 'tool';
  name: string;
  call_id: string | null;
  arguments: Record<string, unknown> | null;
  output: Record<string, unknown> | null;
  status: string;
  decision: { decision: string; reason: string | null; edited: boolean } | null;
  duration_ms: number | null;
}

/** What the fake upstream received: an OpenAI chat request. */
interface ChatBody {
  tools: Array<{ function: { name: string } }>;
  messages: Array<{ role: string; content: string; tool_call_id?: string }>;
}

interface ExecutionJson {
  id: string;
  status: string;
  output: Record<string, unknown> | null;
  error_detail?: { code: string; message: string; limit?: string; reason?: string };
  steps: Step[];
  pending_approvals: Step[];
  execution_time_ms: number | null;
}

describe.each(allDialects)('ToolAgent on $name', (dialect) => {
  let harness: ChatHarness;
  let knowledgeBaseId = '';
  let helperAgentId = '';

  const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(harness.adminKey),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  const createAgent = async (configuration: Record<string, unknown>, extra = {}) => {
    const response = await call('POST', '/v1/agents', {
      name: 'tool user',
      agent_type: 'ToolAgent',
      configuration,
      ...extra,
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  };

  const execution = async (id: string) => {
    const response = await call('GET', `/v1/executions/${id}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ execution: ExecutionJson }>().execution;
  };

  /** The events of an execution until it ends (the stream closes then). */
  const events = async (id: string) => {
    const response = await call('GET', `/v1/executions/${id}/events`);
    expect(response.statusCode, response.body).toBe(200);
    return response.body
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
  };

  const chatRequests = () =>
    harness.upstream.requests.filter((request) => request.endpoint === 'chat');

  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
    const kb = await call('POST', '/v1/knowledge-bases', { name: 'Handbook' });
    expect(kb.statusCode, kb.body).toBe(201);
    knowledgeBaseId = kb.json<{ id: string }>().id;
    const added = await call('POST', `/v1/knowledge-bases/${knowledgeBaseId}/documents`, {
      title: 'Refunds',
      content: 'Refunds are paid within 14 days of the return reaching the warehouse.',
    });
    expect(added.statusCode, added.body).toBe(201);
    const helper = await call('POST', '/v1/agents', {
      name: 'writer',
      agent_type: 'GenerationAgent',
      configuration: {},
    });
    expect(helper.statusCode, helper.body).toBe(201);
    helperAgentId = helper.json<{ id: string }>().id;
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  const searchTool = (extra: Record<string, unknown> = {}) => ({
    type: 'knowledge_search',
    name: 'handbook',
    knowledge_base_ids: [knowledgeBaseId],
    ...extra,
  });

  it('runs a two-step tool loop: the model calls a tool, reads its result and answers', async () => {
    const agentId = await createAgent({
      tools: [searchTool()],
      instructions: 'Answer from the handbook.',
    });
    harness.upstream.enqueueFor(
      'chat',
      {
        kind: 'reply',
        toolCalls: [{ id: 'call_1', name: 'handbook', arguments: '{"query":"refund time"}' }],
      },
      { kind: 'reply', content: 'Refunds take up to 14 days.' },
    );
    const response = await call('POST', `/v1/agents/${agentId}/execute`, {
      query: 'How long do refunds take?',
    });
    const body = response.json<{
      success: boolean;
      status: string;
      execution_id: string;
      result: Record<string, unknown>;
    }>();
    expect(body.success, response.body).toBe(true);
    expect(body.status).toBe('completed');
    expect(body.result).toMatchObject({
      answer: 'Refunds take up to 14 days.',
      model_turns: 2,
      tool_calls: 1,
    });
    // The model was offered the tool, then given its result as a tool message.
    const [first, second] = chatRequests().map((request) => request.body as ChatBody);
    expect(first!.tools.map((tool) => tool.function.name)).toEqual(['handbook']);
    const toolMessage = second!.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.tool_call_id).toBe('call_1');
    expect(toolMessage?.content).toContain('14 days of the return');
    // Every step is recorded, in order, with its arguments and result.
    const detail = await execution(body.execution_id);
    expect(detail.steps.map((step) => [step.kind, step.status])).toEqual([
      ['model', 'completed'],
      ['tool', 'completed'],
      ['model', 'completed'],
    ]);
    expect(detail.steps[1]).toMatchObject({
      name: 'handbook',
      call_id: 'call_1',
      arguments: { query: 'refund time' },
      output: { ok: true },
    });
    expect(detail.steps[1]!.duration_ms).toEqual(expect.any(Number));
    // The events replay the steps, then the end.
    const told = await events(body.execution_id);
    expect(told.map((event) => event.type)).toEqual(['step', 'step', 'step', 'execution-end']);
  });

  it('runs the calls of one turn in parallel and feeds every result back', async () => {
    const agentId = await createAgent({
      tools: [searchTool(), { type: 'agent', name: 'writer', agent_id: helperAgentId }],
    });
    harness.upstream.enqueueFor(
      'chat',
      {
        kind: 'reply',
        toolCalls: [
          // The slower call first: the nested agent's model turn ends after the search.
          { id: 'call_a', name: 'writer', arguments: '{"query":"a haiku about refunds"}' },
          { id: 'call_b', name: 'handbook', arguments: '{"query":"refunds"}' },
        ],
      },
      // The nested GenerationAgent's answer, then the final answer.
      { kind: 'reply', content: 'Money comes back home' },
      { kind: 'reply', content: 'Done: both tools answered.' },
    );
    const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: 'Go' });
    const body = response.json<{ success: boolean; execution_id: string }>();
    expect(body.success, response.body).toBe(true);
    const last = chatRequests().at(-1)!.body as ChatBody;
    const toolMessages = last.messages.filter((message) => message.role === 'tool');
    expect(toolMessages.map((message) => message.tool_call_id)).toEqual(['call_a', 'call_b']);
    expect(toolMessages[0]?.content).toContain('Money comes back home');
    // Listed in the order the model asked for them, whichever finished first.
    const detail = await execution(body.execution_id);
    expect(detail.steps.filter((step) => step.kind === 'tool').map((step) => step.name)).toEqual([
      'writer',
      'handbook',
    ]);
  });

  it('stops a loop that never ends at max_steps, with every step recorded', async () => {
    const agentId = await createAgent({ tools: [searchTool()], max_steps: 3 });
    harness.upstream.setDefaultBehaviour({
      kind: 'reply',
      toolCalls: [{ name: 'handbook', arguments: '{"query":"again"}' }],
    });
    const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: 'Loop' });
    const body = response.json<{
      success: boolean;
      execution_id: string;
      error: { code: string; limit: string };
    }>();
    expect(body.success).toBe(false);
    expect(body.error).toMatchObject({ code: 'limit_reached', limit: 'max_steps' });
    expect(chatRequests()).toHaveLength(3);
    const detail = await execution(body.execution_id);
    expect(detail.status).toBe('failed');
    expect(detail.steps.filter((step) => step.kind === 'model')).toHaveLength(3);
  });

  it('stops at the token budget', async () => {
    const agentId = await createAgent({ tools: [searchTool()], token_budget: 100 });
    harness.upstream.setDefaultBehaviour({
      kind: 'reply',
      toolCalls: [{ name: 'handbook', arguments: '{"query":"again"}' }],
      usage: { prompt_tokens: 60, completion_tokens: 10, total_tokens: 70 },
    });
    const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: 'Loop' });
    const body = response.json<{ success: boolean; error: { code: string; limit: string } }>();
    expect(body.error).toMatchObject({ code: 'limit_reached', limit: 'token_budget' });
    expect(chatRequests()).toHaveLength(2);
  });

  it('feeds back an unknown tool and bad arguments as errors the model can correct', async () => {
    const agentId = await createAgent({ tools: [searchTool()] });
    harness.upstream.enqueueFor(
      'chat',
      {
        kind: 'reply',
        toolCalls: [
          { id: 'c1', name: 'nope', arguments: '{}' },
          { id: 'c2', name: 'handbook', arguments: '{not json' },
        ],
      },
      { kind: 'reply', content: 'Sorry.' },
    );
    const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: 'Try' });
    expect(response.json<{ success: boolean }>().success, response.body).toBe(true);
    const last = chatRequests().at(-1)!.body as ChatBody;
    const contents = last.messages
      .filter((message) => message.role === 'tool')
      .map((message) => message.content);
    expect(contents[0]).toContain("no tool named 'nope'");
    expect(contents[1]).toContain('not valid JSON');
  });

  it('pauses for approval, then runs the call with the edited arguments once approved', async () => {
    const agentId = await createAgent({ tools: [searchTool({ requires_approval: true })] });
    harness.upstream.enqueueFor('chat', {
      kind: 'reply',
      toolCalls: [{ id: 'call_x', name: 'handbook', arguments: '{"query":"bread"}' }],
    });
    const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: 'Refunds?' });
    const body = response.json<{ success: boolean; status: string; execution_id: string }>();
    expect(body.status, response.body).toBe('waiting_for_approval');
    const paused = await execution(body.execution_id);
    expect(paused.status).toBe('waiting_for_approval');
    expect(paused.pending_approvals).toHaveLength(1);
    expect(paused.pending_approvals[0]).toMatchObject({
      name: 'handbook',
      arguments: { query: 'bread' },
      status: 'waiting_for_approval',
    });
    // Only the model turn so far: the tool was not called.
    expect(chatRequests()).toHaveLength(1);
    // The time it worked until it paused is kept (a person's wait is not added to it: the
    // execution module's unit test of workStart).
    expect(paused.execution_time_ms).toEqual(expect.any(Number));
    harness.upstream.enqueueFor('chat', { kind: 'reply', content: 'Refunds take 14 days.' });
    const approved = await call('POST', `/v1/executions/${body.execution_id}/approve`, {
      arguments: { query: 'refunds' },
    });
    expect(approved.statusCode, approved.body).toBe(200);
    // The run goes on in the background; its events end with its end.
    const told = await events(body.execution_id);
    expect(told.map((event) => event.type)).toContain('approval-required');
    expect(told.at(-1)).toMatchObject({ type: 'execution-end', status: 'completed' });
    const done = await execution(body.execution_id);
    expect(done.output).toMatchObject({ answer: 'Refunds take 14 days.' });
    // Its time goes on from what it had worked when it paused.
    expect(done.execution_time_ms).toBeGreaterThanOrEqual(paused.execution_time_ms!);
    const toolStep = done.steps.find((step) => step.kind === 'tool')!;
    expect(toolStep).toMatchObject({
      status: 'completed',
      arguments: { query: 'refunds' },
      decision: { decision: 'approved', edited: true },
    });
    const toolMessage = (chatRequests().at(-1)!.body as ChatBody).messages.find(
      (message) => message.role === 'tool',
    );
    expect(toolMessage?.content).toContain('14 days of the return');
    // Deciding again is a conflict.
    const again = await call('POST', `/v1/executions/${body.execution_id}/approve`, {});
    expect(again.statusCode).toBe(409);
  });

  it('pauses a pipeline at a ToolAgent stage and goes on once approved, the first stage not rerun', async () => {
    const toolAgentId = await createAgent({
      tools: [searchTool({ requires_approval: true })],
    });
    const created = await call('POST', '/v1/pipelines', {
      name: 'draft then look up',
      stages: [
        { name: 'draft', agent_id: helperAgentId, input_mapping: { query: '$.input.topic' } },
        {
          name: 'desk',
          agent_id: toolAgentId,
          input_mapping: { query: '$.stages.draft.text' },
        },
      ],
    });
    expect(created.statusCode, created.body).toBe(201);
    const pipelineId = created.json<{ id: string }>().id;
    harness.upstream.enqueueFor(
      'chat',
      { kind: 'reply', content: 'Ask about refunds' },
      {
        kind: 'reply',
        toolCalls: [{ id: 'call_p', name: 'handbook', arguments: '{"query":"refunds"}' }],
      },
    );
    const run = await call('POST', `/v1/pipelines/${pipelineId}/execute`, { topic: 'refunds' });
    expect(run.statusCode, run.body).toBe(200);
    const answer = run.json<{ status: string; execution_id: string }>();
    expect(answer.status, run.body).toBe('waiting_for_approval');
    const paused = await execution(answer.execution_id);
    expect(paused.pending_approvals).toHaveLength(1);
    expect(chatRequests()).toHaveLength(2);
    harness.upstream.enqueueFor('chat', { kind: 'reply', content: 'Within 14 days.' });
    const approved = await call('POST', `/v1/executions/${answer.execution_id}/approve`, {});
    expect(approved.statusCode, approved.body).toBe(200);
    const told = await events(answer.execution_id);
    expect(told.at(-1)).toMatchObject({ type: 'execution-end', status: 'completed' });
    const done = await execution(answer.execution_id);
    expect(done.output).toMatchObject({ answer: 'Within 14 days.' });
    // The draft stage ran once (before the pause): three model calls in all.
    expect(chatRequests()).toHaveLength(3);
    expect(done.steps.every((step) => step.stage_record_id !== null)).toBe(true);
  });

  it('ends the run when the call is rejected, with the reason recorded', async () => {
    const agentId = await createAgent({
      tools: [searchTool({ requires_approval: ['handbook'] })],
    });
    harness.upstream.enqueueFor('chat', {
      kind: 'reply',
      toolCalls: [{ id: 'call_r', name: 'handbook', arguments: '{"query":"salaries"}' }],
    });
    const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: 'Salaries?' });
    const id = response.json<{ execution_id: string }>().execution_id;
    const rejected = await call('POST', `/v1/executions/${id}/reject`, {
      reason: 'not for this team',
    });
    expect(rejected.statusCode, rejected.body).toBe(200);
    const detail = await execution(id);
    expect(detail.status).toBe('failed');
    expect(detail.error_detail).toMatchObject({
      code: 'approval_rejected',
      reason: 'not for this team',
    });
    expect(detail.steps.find((step) => step.kind === 'tool')).toMatchObject({
      status: 'rejected',
      decision: { decision: 'rejected', reason: 'not for this team' },
    });
    expect(chatRequests()).toHaveLength(1);
  });

  it('refuses at save time: a public ToolAgent, another account’s objects, duplicate names', async () => {
    const make = (configuration: Record<string, unknown>, extra = {}) =>
      call('POST', '/v1/agents', {
        name: 'bad',
        agent_type: 'ToolAgent',
        configuration,
        ...extra,
      });
    const isPublic = await make({ tools: [searchTool()] }, { is_public: true });
    expect(isPublic.statusCode).toBe(400);
    expect(isPublic.json<{ error: { param: string } }>().error.param).toBe('is_public');
    const missing = await make({
      tools: [{ type: 'agent', name: 'x', agent_id: 'agent_doesnotexist' }],
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json<{ error: { param: string } }>().error.param).toBe(
      'configuration.tools[0].agent_id',
    );
    const twice = await make({ tools: [searchTool(), searchTool()] });
    expect(twice.statusCode).toBe(400);
    expect(twice.json<{ error: { param: string } }>().error.param).toBe(
      'configuration.tools[1].name',
    );
  });
});

describe.each(allDialects)('ToolAgent with an MCP server on $name', (dialect) => {
  let harness: ChatHarness;
  let mcp: TestMcpServer;

  const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(harness.adminKey),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  beforeAll(async () => {
    mcp = await startStreamableServer();
    // The operator allows loopback for tools (the MCP server runs on 127.0.0.1), and approvals
    // time out quickly.
    harness = await startChatHarness({
      dialect,
      overrides: { tools: { allowed_private_targets: ['127.0.0.1'], approval_timeout_ms: 1000 } },
    });
  });
  afterAll(async () => {
    await harness.close();
    await mcp.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  const createAgent = async (tools: unknown[]) => {
    const response = await call('POST', '/v1/agents', {
      name: 'mcp user',
      agent_type: 'ToolAgent',
      configuration: { tools },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  };

  it('calls an MCP server’s tool with the model’s arguments and answers from its result', async () => {
    const agentId = await createAgent([{ type: 'mcp', name: 'calc', url: mcp.url }]);
    harness.upstream.enqueueFor(
      'chat',
      { kind: 'reply', toolCalls: [{ id: 'm1', name: 'calc__add', arguments: '{"a":2,"b":40}' }] },
      { kind: 'reply', content: 'It is 42.' },
    );
    const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: '2 + 40?' });
    const body = response.json<{ success: boolean; execution_id: string }>();
    expect(body.success, response.body).toBe(true);
    const requests = harness.upstream.requests.filter((request) => request.endpoint === 'chat');
    const offered = (requests[0]!.body as { tools: Array<{ function: { name: string } }> }).tools;
    expect(offered.map((tool) => tool.function.name)).toContain('calc__add');
    const messages = (requests[1]!.body as { messages: Array<{ role: string; content: string }> })
      .messages;
    expect(messages.find((message) => message.role === 'tool')?.content).toContain('42');
    expect(mcp.requests.some((request) => request.rpc.includes('tools/call'))).toBe(true);
  });

  it('calls an operation of an OpenAPI-described HTTP API as a tool', async () => {
    const api = await startHttpServer((request, _body, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ parcel: request.url, status: 'left the warehouse' }));
    });
    try {
      const document = {
        openapi: '3.1.0',
        info: { title: 'Shipping', version: '1' },
        servers: [{ url: `http://127.0.0.1:${api.port}` }],
        paths: {
          '/parcels/{id}': {
            get: {
              operationId: 'getParcel',
              summary: 'A parcel and where it is.',
              parameters: [
                { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
                { name: 'detail', in: 'query', schema: { type: 'string' } },
              ],
            },
          },
        },
      };
      const agentId = await createAgent([{ type: 'openapi', name: 'ship', document }]);
      harness.upstream.enqueueFor(
        'chat',
        {
          kind: 'reply',
          toolCalls: [
            { id: 'o1', name: 'ship__getParcel', arguments: '{"id":"P 42","detail":"full"}' },
          ],
        },
        { kind: 'reply', content: 'It left the warehouse.' },
      );
      const response = await call('POST', `/v1/agents/${agentId}/execute`, {
        query: 'Where is P 42?',
      });
      expect(response.json<{ success: boolean }>().success, response.body).toBe(true);
      expect(api.requests.map((request) => [request.method, request.url])).toEqual([
        ['GET', '/parcels/P%2042?detail=full'],
      ]);
      const requests = harness.upstream.requests.filter((request) => request.endpoint === 'chat');
      const messages = (requests[1]!.body as { messages: Array<{ role: string; content: string }> })
        .messages;
      expect(messages.find((message) => message.role === 'tool')?.content).toContain(
        'left the warehouse',
      );
    } finally {
      await api.close();
    }
  });

  it('feeds a failing MCP tool back as an error', async () => {
    const agentId = await createAgent([{ type: 'mcp', name: 'calc', url: mcp.url }]);
    harness.upstream.enqueueFor(
      'chat',
      { kind: 'reply', toolCalls: [{ id: 'f1', name: 'calc__fail', arguments: '{}' }] },
      { kind: 'reply', content: 'The widget is broken.' },
    );
    const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: 'Try it' });
    const { execution_id: id } = response.json<{ execution_id: string }>();
    const detail = (await call('GET', `/v1/executions/${id}`)).json<{
      execution: ExecutionJson;
    }>().execution;
    expect(detail.steps.find((step) => step.kind === 'tool')).toMatchObject({
      status: 'failed',
      output: { ok: false },
    });
  });

  it('stops at the time budget a call of a tool that does not answer', async () => {
    const agentId = await createAgent([{ type: 'mcp', name: 'calc', url: mcp.url }]);
    harness.upstream.enqueueFor('chat', {
      kind: 'reply',
      toolCalls: [{ id: 's1', name: 'calc__slow', arguments: '{}' }],
    });
    const response = await call('POST', `/v1/agents/${agentId}/execute`, {
      query: 'Wait for it',
      parameters: { time_budget_ms: 1000 },
    });
    const body = response.json<{
      success: boolean;
      execution_id: string;
      error: { code: string; limit: string };
    }>();
    expect(body.success, response.body).toBe(false);
    expect(body.error).toMatchObject({ code: 'limit_reached', limit: 'time_budget_ms' });
    const detail = (await call('GET', `/v1/executions/${body.execution_id}`)).json<{
      execution: ExecutionJson;
    }>().execution;
    expect(detail.steps.find((step) => step.kind === 'tool')).toMatchObject({
      name: 'calc__slow',
      status: 'failed',
    });
    // Only the first model turn: the budget was spent in the call.
    expect(harness.upstream.requests.filter((request) => request.endpoint === 'chat')).toHaveLength(
      1,
    );
  });

  it('ends a run whose approval never comes, after the configured timeout', async () => {
    const agentId = await createAgent([
      { type: 'mcp', name: 'calc', url: mcp.url, requires_approval: true },
    ]);
    harness.upstream.enqueueFor('chat', {
      kind: 'reply',
      toolCalls: [{ id: 't1', name: 'calc__add', arguments: '{"a":1,"b":1}' }],
    });
    const callsBefore = mcp.requests.filter((request) => request.rpc.includes('tools/call')).length;
    const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: '1 + 1?' });
    const body = response.json<{ status: string; execution_id: string }>();
    expect(body.status, response.body).toBe('waiting_for_approval');
    // The events end when the run does: no decision is sent.
    const events = await call('GET', `/v1/executions/${body.execution_id}/events`);
    expect(events.body).toContain('"approval_timeout"');
    const detail = (await call('GET', `/v1/executions/${body.execution_id}`)).json<{
      execution: ExecutionJson;
    }>().execution;
    expect(detail.status).toBe('failed');
    expect(detail.error_detail?.code).toBe('approval_timeout');
    expect(mcp.requests.filter((request) => request.rpc.includes('tools/call'))).toHaveLength(
      callsBefore,
    );
  });
});

describe('ToolAgent tool addresses without the operator’s allow-list', () => {
  let harness: ChatHarness;
  beforeAll(async () => {
    harness = await startChatHarness({ dialect: allDialects[0]! });
  });
  afterAll(async () => {
    await harness.close();
  });

  it.each([
    ['loopback', 'http://127.0.0.1:8080/mcp'],
    ['a metadata address', 'http://169.254.169.254/latest/meta-data'],
    ['a private address', 'http://10.1.2.3/mcp'],
    ['localhost', 'http://localhost:3000/mcp'],
  ])('refuses an MCP server at %s when the agent is saved', async (_what, url) => {
    const response = await harness.app.inject({
      method: 'POST',
      url: '/v1/agents',
      headers: bearer(harness.adminKey),
      payload: {
        name: 'ssrf',
        agent_type: 'ToolAgent',
        configuration: { tools: [{ type: 'mcp', name: 'inside', url }] },
      },
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json<{ error: { param: string } }>().error.param).toBe(
      'configuration.tools[0].url',
    );
  });
});
