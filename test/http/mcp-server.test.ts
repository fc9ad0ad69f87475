// The platform as an MCP server (POST /mcp), over real HTTP with the official SDK client: the
// account's exposed agents and pipelines and knowledge_search as tools, calls recorded as
// executions of the calling key, scopes, accounts kept apart, and `expose_as_tool` /
// `input_schema` on the REST API.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer, createAccount, createKey } from '../support/test-app.js';

interface ToolText {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
}

const pipelineInputSchema = {
  type: 'object',
  properties: { topic: { type: 'string', maxLength: 200, description: 'What to write about.' } },
  required: ['topic'],
  additionalProperties: false,
};

/** The JSON answer of a tool call. */
function json(result: unknown): Record<string, unknown> {
  const text = (result as ToolText).content[0]!.text;
  return JSON.parse(text) as Record<string, unknown>;
}

function text(result: unknown): string {
  return (result as ToolText).content.map((part) => part.text).join('\n');
}

describe.each(allDialects)('the platform as an MCP server on $name', (dialect) => {
  let harness: ChatHarness;
  let origin: string;
  const clients: Client[] = [];
  /** Account A: its admin key, a key with agents:read only, and a key without agents:read. */
  let a: { id: string; admin_key: string; admin_key_id: string };
  let readOnlyKey: string;
  let chatOnlyKey: string;
  let b: { id: string; admin_key: string };
  let haikuAgent: { id: string };
  let twinAgent: { id: string };
  let pipeline: { id: string };
  let kb: { id: string };

  const call = (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    key: string,
    payload?: unknown,
  ) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(key),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  async function created<T>(url: string, key: string, body: Record<string, unknown>): Promise<T> {
    const response = await call('POST', url, key, body);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<T>();
  }

  async function connect(key: string): Promise<Client> {
    const client = new Client({ name: 'mcp-server-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  /** A raw POST of one JSON-RPC message, as a client without the SDK sends it. */
  const rawPost = (headers: Record<string, string>, body?: unknown) =>
    fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body ?? { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });

  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
    await harness.app.listen({ host: '127.0.0.1', port: 0 });
    const address = harness.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    origin = `http://127.0.0.1:${address.port}`;

    a = await createAccount(harness.app, harness.adminKey, 'Tools A');
    b = await createAccount(harness.app, harness.adminKey, 'Tools B');
    readOnlyKey = (await createKey(harness.app, a.admin_key, { scopes: ['agents:read'] })).key;
    chatOnlyKey = (await createKey(harness.app, a.admin_key, { scopes: ['chat:read'] })).key;

    haikuAgent = await created('/v1/agents', a.admin_key, {
      name: 'Haiku writer!',
      description: 'Writes a haiku about the query.',
      agent_type: 'GenerationAgent',
      configuration: {},
      expose_as_tool: true,
    });
    // Same sanitised name: the later one gets a suffix from its id.
    twinAgent = await created('/v1/agents', a.admin_key, {
      name: 'Haiku writer?',
      agent_type: 'SummarizationAgent',
      configuration: {},
      expose_as_tool: true,
    });
    await created('/v1/agents', a.admin_key, {
      name: 'Hidden helper',
      agent_type: 'GenerationAgent',
      configuration: {},
    });
    pipeline = await created('/v1/pipelines', a.admin_key, {
      name: 'Poem pipeline',
      description: 'Writes a poem on a topic.',
      stages: [
        { name: 'write', agent_id: haikuAgent.id, input_mapping: { query: '$.input.topic' } },
      ],
      expose_as_tool: true,
      input_schema: pipelineInputSchema,
    });
    kb = await created('/v1/knowledge-bases', a.admin_key, {
      name: 'Animals',
      embedding_model: null,
    });
    await created(`/v1/knowledge-bases/${kb.id}/documents`, a.admin_key, {
      title: 'Quokkas',
      content: 'Quokkas are small marsupials that live on Rottnest Island near Perth.',
    });
    await created('/v1/agents', b.admin_key, {
      name: 'B agent',
      agent_type: 'GenerationAgent',
      configuration: {},
      expose_as_tool: true,
    });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  it("lists the account's exposed agents and pipelines and knowledge_search, with their schemas", async () => {
    const client = await connect(a.admin_key);
    const { tools } = await client.listTools();
    const twinName = `Haiku_writer_${twinAgent.id.slice(-8)}`;
    expect(tools.map((tool) => tool.name)).toEqual([
      'Haiku_writer',
      twinName,
      'Poem_pipeline',
      'knowledge_search',
    ]);
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const haiku = byName.get('Haiku_writer')!;
    expect(haiku.description).toBe('Writes a haiku about the query.');
    expect(haiku.inputSchema).toMatchObject({
      type: 'object',
      required: ['query'],
      properties: { query: { type: 'string' }, parameters: { type: 'object' } },
    });
    // GenerationAgent's per-run options, as GET /v1/agent-types publishes them.
    const types = (await call('GET', '/v1/agent-types', a.admin_key)).json<{
      agent_types: Array<{ id: string; parameters_schema: { properties: object } }>;
    }>().agent_types;
    const generation = types.find((type) => type.id === 'GenerationAgent')!;
    expect(
      Object.keys(
        (haiku.inputSchema.properties as { parameters: { properties: object } }).parameters
          .properties,
      ),
    ).toEqual(Object.keys(generation.parameters_schema.properties));
    expect(byName.get(twinName)!.description).toBe("Runs the SummarizationAgent 'Haiku writer?'.");
    expect(byName.get('Poem_pipeline')!.inputSchema).toEqual(pipelineInputSchema);
    expect(byName.get('knowledge_search')!.description).toContain(`${kb.id} (Animals)`);
    for (const tool of tools) expect(tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it('runs an agent tool as a recorded execution of the calling key', async () => {
    const client = await connect(a.admin_key);
    harness.upstream.enqueue({ kind: 'reply', content: 'Old silent pond' });
    const result = await client.callTool({
      name: 'Haiku_writer',
      arguments: { query: 'A frog.', parameters: { max_words: 20 } },
    });
    expect(result.isError).toBeFalsy();
    const body = json(result);
    expect(body).toMatchObject({ success: true, result: { text: 'Old silent pond' } });
    const executionId = body.execution_id as string;
    const execution = await call('GET', `/v1/executions/${executionId}`, a.admin_key);
    expect(execution.statusCode, execution.body).toBe(200);
    expect(execution.json()).toMatchObject({
      execution: {
        kind: 'agent',
        agent_id: haikuAgent.id,
        status: 'completed',
        input: { query: 'A frog.', parameters: { max_words: 20 } },
      },
    });
    const recorded = await harness.services.executions.get(a.id, executionId);
    expect(recorded.execution.apiKeyId).toBe(a.admin_key_id);
  });

  it('answers a failed run as a tool error carrying the recorded execution', async () => {
    const client = await connect(a.admin_key);
    // The model, its retries and its fallback all fail.
    const failure = { kind: 'error', status: 400 } as const;
    harness.upstream.enqueue(failure, failure, failure, failure);
    const result = await client.callTool({ name: 'Haiku_writer', arguments: { query: 'Fail.' } });
    expect(result.isError).toBe(true);
    const body = json(result);
    expect(body).toMatchObject({ success: false, error: { code: expect.any(String) } });
    const execution = await call('GET', `/v1/executions/${String(body.execution_id)}`, a.admin_key);
    expect(execution.json()).toMatchObject({ execution: { status: 'failed' } });
  });

  it('runs a pipeline tool synchronously, recorded among the pipeline’s executions', async () => {
    const client = await connect(a.admin_key);
    harness.upstream.enqueue({ kind: 'reply', content: 'Autumn moon rises' });
    const result = await client.callTool({
      name: 'Poem_pipeline',
      arguments: { topic: 'the moon' },
    });
    expect(result.isError, text(result)).toBeFalsy();
    const body = json(result);
    expect(body).toMatchObject({
      status: 'completed',
      pipeline_id: pipeline.id,
      output: { text: 'Autumn moon rises' },
      metrics: { stages_completed: 1 },
    });
    const listed = (
      await call('GET', `/v1/pipelines/${pipeline.id}/executions`, a.admin_key)
    ).json<{ executions: Array<{ id: string; status: string }> }>().executions;
    expect(listed).toContainEqual(
      expect.objectContaining({ id: body.execution_id, status: 'completed' }),
    );
    const recorded = await harness.services.executions.get(a.id, body.execution_id as string);
    expect(recorded.execution).toMatchObject({
      apiKeyId: a.admin_key_id,
      input: { topic: 'the moon' },
    });
  });

  it("searches the account's knowledge bases with knowledge_search", async () => {
    const client = await connect(a.admin_key);
    const result = await client.callTool({
      name: 'knowledge_search',
      arguments: { query: 'Where do quokkas live?', top_k: 3 },
    });
    expect(result.isError, text(result)).toBeFalsy();
    const body = json(result) as { results: Array<Record<string, unknown>>; top_k: number };
    expect(body.top_k).toBe(3);
    expect(body.results[0]).toMatchObject({ knowledge_base_id: kb.id, title: 'Quokkas' });
    expect(String(body.results[0]!.text)).toContain('Rottnest Island');
  });

  it('refuses a request without a key with 401, and GET and DELETE with 405, in the contract’s body', async () => {
    const response = await rawPost({});
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({
      error: { code: 'missing_api_key', type: 'authentication_error' },
    });
    const wrong = await rawPost(bearer('sk-not-a-key'));
    expect(wrong.status).toBe(401);
    for (const method of ['GET', 'DELETE']) {
      const refused = await fetch(`${origin}/mcp`, {
        method,
        headers: { ...bearer(a.admin_key), accept: 'text/event-stream' },
      });
      expect(refused.status).toBe(405);
      expect(refused.headers.get('allow')).toBe('POST');
      expect(await refused.json()).toMatchObject({ error: { code: 'method_not_allowed' } });
    }
  });

  it('refuses what the transport cannot take in the contract’s error body', async () => {
    const cases: Array<[Record<string, string>, unknown, number, string, string | null]> = [
      [{ accept: 'application/json' }, undefined, 400, 'invalid_parameter', 'accept'],
      [{}, { jsonrpc: '1.0', id: 1, method: 'tools/list' }, 400, 'invalid_parameter', 'jsonrpc'],
      [{}, { jsonrpc: '2.0', id: 1 }, 400, 'invalid_parameter', 'body'],
      [
        { 'mcp-protocol-version': '1999-01-01' },
        undefined,
        400,
        'invalid_parameter',
        'mcp-protocol-version',
      ],
    ];
    for (const [headers, body, status, code, param] of cases) {
      const response = await rawPost({ ...bearer(a.admin_key), ...headers }, body);
      expect(response.status, JSON.stringify(headers)).toBe(status);
      expect(await response.json()).toMatchObject({ error: { code, param } });
    }
    const batch = await rawPost(bearer(a.admin_key), [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ]);
    expect(batch.status).toBe(200);
  });

  it('counts every request against the rate limit, and in the metrics, like any route', async () => {
    const response = await rawPost(bearer(a.admin_key));
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-remaining-requests')).toMatch(/^\d+$/);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const body = (await response.json()) as { result: { tools: Array<{ name: string }> } };
    expect(body.result.tools.map((tool) => tool.name)).toContain('Poem_pipeline');
    // The response hooks ran for the hijacked answer too (the request log is one of them).
    const metrics = await call('GET', '/metrics', harness.adminKey);
    expect(metrics.body).toMatch(
      /platform_http_requests_total\{method="POST",route="\/mcp",status="200"\} [1-9]/,
    );
  });

  it("shows another account's key only that account's tools", async () => {
    const client = await connect(b.admin_key);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['B_agent']);
    await expect(
      client.callTool({ name: 'Haiku_writer', arguments: { query: 'Hello.' } }),
    ).rejects.toThrow(McpError);
  });

  it('answers a call without the needed scope as a tool error naming it', async () => {
    const client = await connect(readOnlyKey);
    expect((await client.listTools()).tools).toHaveLength(4);
    const result = await client.callTool({ name: 'Haiku_writer', arguments: { query: 'Hi.' } });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("lacks the 'agents:write' scope");
    expect(harness.upstream.requests).toHaveLength(0);
    // knowledge_search needs agents:read, as POST /v1/knowledge-bases/{kb_id}/search does.
    const search = await client.callTool({
      name: 'knowledge_search',
      arguments: { query: 'quokkas' },
    });
    expect(search.isError, text(search)).toBeFalsy();
    // Listing needs agents:read: a key without it is refused before any MCP message is read.
    const refused = await rawPost(bearer(chatOnlyKey));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      error: { code: 'insufficient_permissions', required_scope: 'agents:read' },
    });
  });

  it('answers invalid arguments as a tool error naming the argument, and an unknown tool as an MCP error', async () => {
    const client = await connect(a.admin_key);
    const missing = await client.callTool({ name: 'Haiku_writer', arguments: {} });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain("'query'");
    const unknown = await client.callTool({
      name: 'Haiku_writer',
      arguments: { query: 'x', temperature: 2 },
    });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toContain("'temperature'");
    const badParameter = await client.callTool({
      name: 'Haiku_writer',
      arguments: { query: 'x', parameters: { max_words: 'many' } },
    });
    expect(badParameter.isError).toBe(true);
    expect(text(badParameter)).toContain('parameters.max_words');
    const badInput = await client.callTool({ name: 'Poem_pipeline', arguments: { topic: 7 } });
    expect(badInput.isError).toBe(true);
    expect(text(badInput)).toContain("'topic'");
    expect(harness.upstream.requests).toHaveLength(0);
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(
      /Unknown tool/,
    );
  });

  it('keeps expose_as_tool and input_schema on the REST API', async () => {
    const agent = await created<{ id: string; expose_as_tool: boolean }>(
      '/v1/agents',
      a.admin_key,
      { name: 'Flag test', agent_type: 'GenerationAgent', configuration: {} },
    );
    expect(agent.expose_as_tool).toBe(false);
    const changed = await call('PATCH', `/v1/agents/${agent.id}`, a.admin_key, {
      expose_as_tool: true,
    });
    expect(changed.json()).toMatchObject({ expose_as_tool: true });
    expect((await call('GET', `/v1/agents/${agent.id}`, a.admin_key)).json()).toMatchObject({
      expose_as_tool: true,
    });
    const agents = (await call('GET', '/v1/agents?limit=100', a.admin_key)).json<{
      agents: Array<{ id: string; expose_as_tool: boolean }>;
    }>().agents;
    expect(agents.find((entry) => entry.id === agent.id)?.expose_as_tool).toBe(true);
    expect(agents.find((entry) => entry.id === haikuAgent.id)?.expose_as_tool).toBe(true);
    await call('DELETE', `/v1/agents/${agent.id}`, a.admin_key);

    const detail = (await call('GET', `/v1/pipelines/${pipeline.id}`, a.admin_key)).json<{
      pipeline: Record<string, unknown>;
    }>().pipeline;
    expect(detail).toMatchObject({ expose_as_tool: true, input_schema: pipelineInputSchema });
    const pipelines = (await call('GET', '/v1/pipelines', a.admin_key)).json<{
      pipelines: Array<{ id: string; expose_as_tool: boolean }>;
    }>().pipelines;
    expect(pipelines.find((entry) => entry.id === pipeline.id)?.expose_as_tool).toBe(true);

    const plain = await created<{ id: string; expose_as_tool: boolean; input_schema: unknown }>(
      '/v1/pipelines',
      a.admin_key,
      { name: 'Plain' },
    );
    expect(plain).toMatchObject({ expose_as_tool: false, input_schema: null });
    const updated = await call('PATCH', `/v1/pipelines/${plain.id}`, a.admin_key, {
      input_schema: { type: 'object', properties: { n: { type: 'integer' } } },
      expose_as_tool: true,
    });
    expect(updated.json()).toMatchObject({
      expose_as_tool: true,
      input_schema: { type: 'object', properties: { n: { type: 'integer' } } },
    });
    const cleared = await call('PATCH', `/v1/pipelines/${plain.id}`, a.admin_key, {
      input_schema: null,
    });
    expect(cleared.json()).toMatchObject({ expose_as_tool: true, input_schema: null });
    await call('DELETE', `/v1/pipelines/${plain.id}`, a.admin_key);
  });

  it.each([
    [{ type: 'string' }, 'input_schema.type'],
    [
      { type: 'object', properties: { x: { type: 'string', pattern: '^(a+)+$' } } },
      'input_schema.properties.x.pattern',
    ],
    [
      { type: 'object', properties: { x: { $ref: '#/$defs/y' } } },
      'input_schema.properties.x.$ref',
    ],
    [{ type: 'object', properties: { x: { type: 'no-such-type' } } }, 'input_schema'],
    [
      { type: 'object', properties: { __proto__: { type: 'string' } } },
      'input_schema.properties.__proto__',
    ],
  ])('refuses the input_schema %j with a 400 naming %s', async (schema, param) => {
    const response = await harness.app.inject({
      method: 'POST',
      url: '/v1/pipelines',
      headers: { ...bearer(a.admin_key), 'content-type': 'application/json' },
      // As text: a literal __proto__ key must reach the service as a key.
      payload: JSON.stringify({ name: 'Bad schema', input_schema: schema }).replace(
        '"properties":{}',
        '"properties":{"__proto__":{"type":"string"}}',
      ),
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toMatchObject({ error: { param } });
  });
});

describe.each(allDialects)('MCP tools under switched-off features on $name', (dialect) => {
  let harness: ChatHarness;
  beforeAll(async () => {
    harness = await startChatHarness({
      dialect,
      overrides: { features: { agent_orchestration: false } },
    });
    await harness.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await harness.close();
  });

  it('offers no agent or pipeline tool while agent_orchestration is off', async () => {
    const account = await createAccount(harness.app, harness.adminKey, 'Switched');
    // Made through the service: the agents' routes are switched off.
    await harness.services.agents.create(account.id, {
      name: 'Dormant',
      agentType: 'GenerationAgent',
      configuration: {},
      exposeAsTool: true,
    });
    const kb = await harness.app.inject({
      method: 'POST',
      url: '/v1/knowledge-bases',
      headers: bearer(account.admin_key),
      payload: { name: 'Notes', embedding_model: null },
    });
    expect(kb.statusCode, kb.body).toBe(201);
    const address = harness.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const client = new Client({ name: 'mcp-server-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${address.port}/mcp`), {
        requestInit: { headers: bearer(account.admin_key) },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
        'knowledge_search',
      ]);
      await expect(client.callTool({ name: 'Dormant', arguments: { query: 'x' } })).rejects.toThrow(
        /Unknown tool/,
      );
    } finally {
      await client.close();
    }
  });
});
