// The one tool registry through the HTTP API on both databases: a pipeline is the same tool to a
// ToolAgent's model and to a client of POST /mcp — its arguments the run's inputs, as its
// input_schema describes them, and checked against it before anything runs; every tool of a run is
// named by one rule (a server's tool whose name a built-in holds is named anew, not dropped); and a
// ToolAgent saved with a sealed token is changed again without losing it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { startStreamableServer, type TestMcpServer } from '../support/mcp-test-servers.js';
import { bearer } from '../support/test-app.js';

/** What the fake upstream received: an OpenAI chat request. */
interface ChatBody {
  tools?: Array<{ function: { name: string; description: string; parameters: unknown } }>;
  messages: Array<{ role: string; content: string }>;
}

interface ToolStep {
  kind: string;
  name: string;
  status: string;
  output: { ok: boolean; content: string } | null;
}

const inputSchema = {
  type: 'object',
  properties: { topic: { type: 'string', description: 'What the poem is about.' } },
  required: ['topic'],
};

describe.each(allDialects)('one tool registry on $name', (dialect) => {
  let harness: ChatHarness;
  let mcp: TestMcpServer;
  let origin = '';
  let pipelineId = '';

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(harness.adminKey),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  const createAgent = async (configuration: Record<string, unknown>) => {
    const response = await call('POST', '/v1/agents', {
      name: 'desk',
      agent_type: 'ToolAgent',
      configuration,
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  };

  const chatBodies = () =>
    harness.upstream.requests
      .filter((request) => request.endpoint === 'chat')
      .map((request) => request.body as ChatBody);

  const toolSteps = async (executionId: string) => {
    const response = await call('GET', `/v1/executions/${executionId}`);
    expect(response.statusCode, response.body).toBe(200);
    const { steps } = response.json<{ execution: { steps: ToolStep[] } }>().execution;
    return steps.filter((step) => step.kind === 'tool');
  };

  const pipelineRuns = async () => {
    const response = await call('GET', `/v1/pipelines/${pipelineId}/executions`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ total: number }>().total;
  };

  /** The account's tools as a client of POST /mcp lists them. */
  const mcpTools = async () => {
    const response = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${harness.adminKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      result: { tools: Array<{ name: string; description: string; inputSchema: unknown }> };
    };
    return body.result.tools;
  };

  beforeAll(async () => {
    mcp = await startStreamableServer();
    harness = await startChatHarness({
      dialect,
      env: { TOOL_SECRETS_KEY: randomBytes(32).toString('hex') },
      overrides: { tools: { allowed_private_targets: ['127.0.0.1'] } },
    });
    await harness.app.listen({ host: '127.0.0.1', port: 0 });
    const address = harness.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    origin = `http://127.0.0.1:${address.port}`;
    const writer = await call('POST', '/v1/agents', {
      name: 'writer',
      agent_type: 'GenerationAgent',
      configuration: {},
    });
    expect(writer.statusCode, writer.body).toBe(201);
    const pipeline = await call('POST', '/v1/pipelines', {
      name: 'Poem on a topic',
      description: 'Writes a short poem about the topic.',
      expose_as_tool: true,
      input_schema: inputSchema,
      stages: [
        {
          name: 'write',
          agent_id: writer.json<{ id: string }>().id,
          input_mapping: { query: '$.input.topic' },
        },
      ],
    });
    expect(pipeline.statusCode, pipeline.body).toBe(201);
    pipelineId = pipeline.json<{ pipeline_id: string }>().pipeline_id;
  });
  afterAll(async () => {
    await harness.close();
    await mcp.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  it('offers a pipeline with its input_schema to the model and to /mcp alike; its arguments are the inputs', async () => {
    const agentId = await createAgent({
      tools: [{ type: 'pipeline', name: 'poem', pipeline_id: pipelineId }],
    });
    const runsBefore = await pipelineRuns();
    harness.upstream.enqueueFor(
      'chat',
      { kind: 'reply', toolCalls: [{ id: 'p1', name: 'poem', arguments: '{"topic":"the sea"}' }] },
      { kind: 'reply', content: 'Waves on waves.' },
      { kind: 'reply', content: 'Here is your poem.' },
    );
    const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: 'A sea poem' });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<{ success: boolean; execution_id: string }>();
    expect(body.success, response.body).toBe(true);

    const [first, stage] = chatBodies();
    const offered = first!.tools!.find((tool) => tool.function.name === 'poem')!;
    expect(offered.function.parameters).toEqual(inputSchema);
    expect(offered.function.description).toBe('Writes a short poem about the topic.');
    const listed = (await mcpTools()).find((tool) => tool.name === 'Poem_on_a_topic')!;
    expect(listed.inputSchema).toEqual(offered.function.parameters);
    expect(listed.description).toBe(offered.function.description);

    // The arguments reached the pipeline as its inputs: the stage's agent wrote about the sea.
    expect(stage!.messages.at(-1)!.content).toContain('the sea');
    const [step] = await toolSteps(body.execution_id);
    expect(step).toMatchObject({ name: 'poem', status: 'completed', output: { ok: true } });
    expect(step!.output!.content).toContain('Waves on waves.');
    // The pipeline's run is recorded as its own execution.
    expect(await pipelineRuns()).toBe(runsBefore + 1);
  });

  it('refuses a pipeline call whose arguments do not fit its input_schema, running nothing', async () => {
    const agentId = await createAgent({
      tools: [{ type: 'pipeline', name: 'poem', pipeline_id: pipelineId }],
    });
    const runsBefore = await pipelineRuns();
    harness.upstream.enqueueFor(
      'chat',
      { kind: 'reply', toolCalls: [{ id: 'p2', name: 'poem', arguments: '{"topic":7}' }] },
      { kind: 'reply', content: 'I could not.' },
    );
    const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: 'A poem' });
    const body = response.json<{ success: boolean; execution_id: string }>();
    expect(body.success, response.body).toBe(true);
    const [step] = await toolSteps(body.execution_id);
    expect(step).toMatchObject({ name: 'poem', status: 'failed', output: { ok: false } });
    expect(step!.output!.content).toMatch(/^Not called: .*topic/);
    // Two model turns, no stage: the pipeline did not run.
    expect(chatBodies()).toHaveLength(2);
    expect(await pipelineRuns()).toBe(runsBefore);
  });

  it("names a server's tool whose name a built-in holds anew, rather than dropping it", async () => {
    const agentId = await createAgent({
      tools: [
        { type: 'web_search', name: 'calc__add' },
        { type: 'mcp', name: 'calc', url: mcp.url, allowed_tools: ['add'] },
      ],
    });
    harness.upstream.enqueueFor(
      'chat',
      {
        kind: 'reply',
        toolCalls: [{ id: 'm1', name: 'calc__add_2', arguments: '{"a":2,"b":40}' }],
      },
      { kind: 'reply', content: '42' },
    );
    const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: '2 + 40?' });
    const body = response.json<{ success: boolean; execution_id: string }>();
    expect(body.success, response.body).toBe(true);
    expect(chatBodies()[0]!.tools!.map((tool) => tool.function.name)).toEqual([
      'calc__add',
      'calc__add_2',
    ]);
    const [step] = await toolSteps(body.execution_id);
    expect(step).toMatchObject({ name: 'calc__add_2', status: 'completed' });
    expect(step!.output!.content).toContain('42');
  });

  it('keeps a sealed token when the agent is saved again from its stored configuration', async () => {
    const agentId = await createAgent({
      tools: [{ type: 'mcp', name: 'calc', url: mcp.url, bearer_token: 'sealed-token' }],
    });
    // Re-checked from what is stored (the sealed token included), not from a client's body.
    const changed = await call('PATCH', `/v1/agents/${agentId}`, { is_public: false });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.body).not.toContain('bearer_token_encrypted');
    expect(changed.json<{ configuration: { tools: unknown[] } }>().configuration.tools).toEqual([
      {
        type: 'mcp',
        name: 'calc',
        url: mcp.url,
        requires_approval: false,
        idempotent: false,
        bearer_token_set: true,
      },
    ]);
    harness.upstream.enqueueFor(
      'chat',
      { kind: 'reply', toolCalls: [{ id: 't1', name: 'calc__echo', arguments: '{"text":"x"}' }] },
      { kind: 'reply', content: 'Done.' },
    );
    const response = await call('POST', `/v1/agents/${agentId}/execute`, { query: 'Echo x' });
    expect(response.json<{ success: boolean }>().success, response.body).toBe(true);
    const calls = mcp.requests.filter((request) => request.rpc.includes('tools/call'));
    expect(calls.at(-1)).toMatchObject({ authorization: 'Bearer sealed-token' });
  });
});
