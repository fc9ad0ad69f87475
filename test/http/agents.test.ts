// Agents through the HTTP API: the type catalog, CRUD with configuration validation, public agents
// across accounts, execution records, and the model-backed types against a fake upstream.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { bearer, createAccount, createKey } from '../support/test-app.js';

interface AgentJson {
  id: string;
  name: string;
  agent_type: string;
  model_id: string | null;
  is_public: boolean;
  owned: boolean;
  configuration: Record<string, unknown>;
}

interface ExecutionResponse {
  success: boolean;
  execution_id: string;
  result: Record<string, unknown> | null;
  metrics: { execution_time_ms: number; tokens_used: number };
  error?: { message: string; type: string; code: string };
}

interface ErrorJson {
  error: { message: string; type: string; code: string; param: string | null };
}

describe.each(allDialects)('agents on $name', (dialect) => {
  let harness: ChatHarness;
  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  const call = (
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
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

  async function createAgent(body: Record<string, unknown>, key?: string): Promise<AgentJson> {
    const response = await call('POST', '/v1/agents', { name: 'agent', ...body }, key);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<AgentJson>();
  }

  const execute = (id: string, body: Record<string, unknown>, key?: string) =>
    call('POST', `/v1/agents/${id}/execute`, body, key);

  it('lists the seven types with capabilities and configuration schemas', async () => {
    const response = await call('GET', '/v1/agent-types');
    expect(response.statusCode).toBe(200);
    const types = response.json<{
      agent_types: Array<{
        id: string;
        capabilities: string[];
        configuration_schema: { properties: object };
      }>;
    }>().agent_types;
    expect(types.map((type) => [type.id, type.capabilities])).toEqual([
      ['RetrievalAgent', ['document_retrieval', 'knowledge_base_search']],
      ['SummarizationAgent', ['text_summarization', 'key_point_extraction']],
      ['ReasoningAgent', ['logical_reasoning', 'problem_solving']],
      ['GenerationAgent', ['text_generation', 'creative_writing']],
      ['WebAgent', ['web_search', 'content_extraction']],
      ['StructureAgent', ['data_processing', 'table_generation']],
      ['ToolAgent', ['tool_calling', 'mcp', 'human_approval']],
    ]);
    expect(Object.keys(types[2]!.configuration_schema.properties)).toContain('processing_steps');
    const document = (await harness.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      components: { schemas: Record<string, unknown> };
    }>();
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['RetrievalAgentConfiguration', 'ReasoningAgentConfiguration']),
    );
  });

  it('creates, reads, lists, changes and deletes an agent, filling configuration defaults', async () => {
    const created = await createAgent({
      name: 'Thinker',
      agent_type: 'ReasoningAgent',
      description: 'Solves puzzles',
      configuration: { processing_steps: ['Understand', 'Solve'] },
      model_id: 'fake-chat',
    });
    expect(created).toMatchObject({
      name: 'Thinker',
      agent_type: 'ReasoningAgent',
      model_id: 'fake-chat',
      is_public: false,
      owned: true,
      configuration: { processing_steps: ['Understand', 'Solve'], max_steps: 8 },
    });
    expect(created.id).toMatch(/^agent_/);
    expect((await call('GET', `/v1/agents/${created.id}`)).json<AgentJson>()).toEqual(
      expect.objectContaining({ id: created.id, configuration: created.configuration }),
    );
    const list = (await call('GET', '/v1/agents')).json<{
      agents: Array<Record<string, unknown>>;
    }>();
    const entry = list.agents.find((agent) => agent.id === created.id)!;
    expect(entry).toMatchObject({ name: 'Thinker' });
    expect(entry).not.toHaveProperty('configuration');

    for (const method of ['PATCH', 'PUT'] as const) {
      const updated = await call(method, `/v1/agents/${created.id}`, {
        description: `changed by ${method}`,
        configuration: { max_steps: 3 },
      });
      expect(updated.statusCode, updated.body).toBe(200);
      expect(updated.json<AgentJson>()).toMatchObject({
        name: 'Thinker',
        description: `changed by ${method}`,
        configuration: { max_steps: 3 },
      });
    }
    const deleted = await call('DELETE', `/v1/agents/${created.id}`);
    expect(deleted.json()).toEqual({ success: true, message: expect.any(String), id: created.id });
    expect((await call('GET', `/v1/agents/${created.id}`)).statusCode).toBe(404);
  });

  it.each([
    [{ agent_type: 'MagicAgent', configuration: {} }, 'invalid_parameter', 'agent_type'],
    [
      { agent_type: 'ReasoningAgent', configuration: { colour: 'red' } },
      'invalid_parameter',
      'configuration.colour',
    ],
    [
      { agent_type: 'ReasoningAgent', configuration: { max_steps: 'many' } },
      'invalid_parameter',
      'configuration.max_steps',
    ],
    [
      { agent_type: 'RetrievalAgent', configuration: {} },
      'missing_parameter',
      'configuration.knowledge_base_ids',
    ],
    [
      { agent_type: 'ReasoningAgent', configuration: {}, model_id: 'no-such-model' },
      'unknown_model',
      'model_id',
    ],
    [
      { agent_type: 'ReasoningAgent', configuration: {}, model_id: 'fake-embed' },
      'invalid_parameter',
      'model_id',
    ],
    [{ agent_type: 'ReasoningAgent' }, 'missing_parameter', 'configuration'],
  ])('refuses %j with %s naming %s', async (body, code, param) => {
    const response = await call('POST', '/v1/agents', { name: 'x', ...body });
    expect(response.statusCode).toBe(400);
    expect(response.json<ErrorJson>().error).toMatchObject({ code, param });
  });

  it('lets other accounts read and execute a public agent, never change it; private ones are invisible', async () => {
    const other = await createAccount(harness.app, harness.adminKey, `tenant-${dialect.name}`);
    const publicAgent = await createAgent({
      agent_type: 'SummarizationAgent',
      configuration: { method: 'extractive' },
      is_public: true,
    });
    const privateAgent = await createAgent({ agent_type: 'SummarizationAgent', configuration: {} });
    const otherKey = other.admin_key;
    expect(
      (await call('GET', `/v1/agents/${publicAgent.id}`, undefined, otherKey)).json<AgentJson>(),
    ).toMatchObject({
      id: publicAgent.id,
      owned: false,
    });
    const listed = (await call('GET', '/v1/agents', undefined, otherKey)).json<{
      agents: Array<{ id: string }>;
    }>();
    expect(listed.agents.map((agent) => agent.id)).toContain(publicAgent.id);
    expect(listed.agents.map((agent) => agent.id)).not.toContain(privateAgent.id);
    const run = await execute(
      publicAgent.id,
      { query: 'One sentence here. Another one there.' },
      otherKey,
    );
    expect(run.json<ExecutionResponse>().success).toBe(true);
    for (const method of ['PATCH', 'DELETE'] as const) {
      const refused = await call(
        method,
        `/v1/agents/${publicAgent.id}`,
        method === 'PATCH' ? { name: 'mine' } : undefined,
        otherKey,
      );
      expect(refused.statusCode).toBe(403);
      expect(refused.json<ErrorJson>().error.code).toBe('insufficient_permissions');
    }
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const hidden = await call(
        method,
        `/v1/agents/${privateAgent.id}`,
        method === 'PATCH' ? { name: 'mine' } : undefined,
        otherKey,
      );
      expect(hidden.statusCode, method).toBe(404);
    }
    expect((await execute(privateAgent.id, { query: 'x' }, otherKey)).statusCode).toBe(404);
    // The caller's execution record is the caller's: the owner does not see it.
    const executionId = run.json<ExecutionResponse>().execution_id;
    expect(
      (await call('GET', `/v1/executions/${executionId}`, undefined, otherKey)).statusCode,
    ).toBe(200);
    expect((await call('GET', `/v1/executions/${executionId}`)).statusCode).toBe(404);
  });

  it('runs ReasoningAgent through structured output, and records the execution', async () => {
    const agent = await createAgent({
      agent_type: 'ReasoningAgent',
      configuration: { processing_steps: ['Identify the givens', 'Compute the answer'] },
    });
    harness.upstream.enqueue({
      kind: 'reply',
      content: JSON.stringify({
        steps: ['Identify the givens: 3 boxes of 4 apples', 'Compute the answer: 3 × 4 = 12'],
        conclusion: 'There are 12 apples.',
      }),
    });
    const response = await execute(agent.id, {
      query: 'How many apples are in 3 boxes of 4?',
      parameters: { context: 'Each box holds the same number.' },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json<ExecutionResponse>();
    expect(body).toMatchObject({
      success: true,
      result: {
        steps: ['Identify the givens: 3 boxes of 4 apples', 'Compute the answer: 3 × 4 = 12'],
        conclusion: 'There are 12 apples.',
      },
    });
    expect(body.metrics.tokens_used).toBeGreaterThan(0);
    const sent = harness.upstream.requests[0]!.body as {
      messages: Array<{ role: string; content: string }>;
      response_format?: { type: string };
    };
    expect(sent.response_format?.type).toMatch(/^json/);
    expect(sent.messages[0]!.content).toContain('1. Identify the givens');
    expect(sent.messages[1]!.content).toContain('Each box holds the same number.');

    const record = (await call('GET', `/v1/executions/${body.execution_id}`)).json<{
      execution: Record<string, unknown>;
    }>().execution;
    expect(record).toMatchObject({
      id: body.execution_id,
      kind: 'agent',
      agent_id: agent.id,
      status: 'completed',
      input: { query: 'How many apples are in 3 boxes of 4?' },
      output: body.result,
      tokens_used: body.metrics.tokens_used,
      stages: [],
    });
  });

  it('repairs a malformed structured answer once, then reads the plain text, flagged', async () => {
    const agent = await createAgent({ agent_type: 'ReasoningAgent', configuration: {} });
    harness.upstream.enqueue(
      { kind: 'reply', content: 'Let me think… the answer is 4.' },
      { kind: 'reply', content: JSON.stringify({ steps: ['2 + 2 = 4'], conclusion: '4' }) },
    );
    const repaired = (
      await execute(agent.id, { query: 'What is 2 + 2?' })
    ).json<ExecutionResponse>();
    expect(repaired).toMatchObject({ success: true, result: { conclusion: '4' } });
    expect(harness.upstream.requests).toHaveLength(2);

    harness.upstream.enqueue(
      { kind: 'reply', content: 'not json' },
      { kind: 'reply', content: JSON.stringify({ steps: [] }) },
    );
    // The answer that is not a JSON attempt is read (test/http/structured-output-fallback.test.ts).
    const fallback = (
      await execute(agent.id, { query: 'What is 2 + 2?' })
    ).json<ExecutionResponse>();
    expect(fallback).toMatchObject({
      success: true,
      result: { steps: [], conclusion: 'not json', structured: false },
    });
    const record = (await call('GET', `/v1/executions/${fallback.execution_id}`)).json<{
      execution: { status: string };
    }>().execution;
    expect(record.status).toBe('completed');
  });

  it('records a model-backed run as failed when its model fails', async () => {
    const agent = await createAgent({
      agent_type: 'GenerationAgent',
      configuration: {},
      model_id: 'fake-slow',
    });
    harness.upstream.enqueue({ kind: 'error', status: 500 });
    const body = (await execute(agent.id, { query: 'Write a haiku.' })).json<ExecutionResponse>();
    expect(body).toMatchObject({
      success: false,
      error: { type: 'upstream_error', code: 'upstream_error' },
    });
  });

  it('runs GenerationAgent with the configured style, format and length', async () => {
    const agent = await createAgent({
      agent_type: 'GenerationAgent',
      configuration: { style: 'warm and plain', format: 'text', length: 'short' },
    });
    harness.upstream.enqueue({ kind: 'reply', content: 'Thank you for joining us today.' });
    const body = (
      await execute(agent.id, { query: 'Thank the team.', parameters: { max_words: 20 } })
    ).json<ExecutionResponse>();
    expect(body).toMatchObject({
      success: true,
      result: { text: 'Thank you for joining us today.', format: 'text', word_count: 6 },
    });
    const system = (harness.upstream.requests[0]!.body as { messages: Array<{ content: string }> })
      .messages[0]!.content;
    expect(system).toContain('Style: warm and plain.');
    expect(system).toContain('plain text');
    expect(system).toContain('about 20 words, never more');
    const refused = await execute(agent.id, { query: 'x', parameters: { colour: 'red' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json<ErrorJson>().error.param).toBe('parameters.colour');
    expect((await execute(agent.id, {})).json<ErrorJson>().error).toMatchObject({
      code: 'missing_parameter',
      param: 'query',
    });
  });

  const article = [
    'Solar power capacity grew faster than any other energy source last year.',
    'Analysts attribute the growth of solar power to falling panel prices and new storage.',
    'The weather in the capital was mild for most of the season.',
    'Cheaper batteries let solar power supply homes after sunset.',
    'Several football clubs changed their coaches.',
    'Governments expect solar power and storage to dominate new capacity this decade.',
  ].join(' ');

  it('summarises with the model when one is available', async () => {
    const agent = await createAgent({
      agent_type: 'SummarizationAgent',
      configuration: { output_format: 'bullets' },
    });
    harness.upstream.enqueue({
      kind: 'reply',
      content: JSON.stringify({
        summary: 'Solar power is growing fast thanks to cheaper panels and batteries.',
        key_points: ['Solar grew fastest', 'Storage extends it past sunset'],
      }),
    });
    const body = (await execute(agent.id, { query: article })).json<ExecutionResponse>();
    expect(body).toMatchObject({
      success: true,
      result: {
        method: 'model',
        summary: '- Solar grew fastest\n- Storage extends it past sunset',
        key_points: ['Solar grew fastest', 'Storage extends it past sunset'],
      },
    });
  });

  it('summarises extractively without a model, and says so', async () => {
    const agent = await createAgent({
      agent_type: 'SummarizationAgent',
      configuration: { method: 'extractive', length: 'short', key_points: 2 },
    });
    const body = (await execute(agent.id, { query: article })).json<ExecutionResponse>();
    expect(body.success).toBe(true);
    const result = body.result as {
      method: string;
      summary: string;
      key_points: string[];
      notice: string;
    };
    expect(result.method).toBe('extractive');
    expect(result.notice).toContain('not written by a model');
    expect(result.key_points).toHaveLength(2);
    for (const point of result.key_points) expect(point).toContain('solar power');
    expect(result.summary).not.toContain('football');
    expect(harness.upstream.requests).toHaveLength(0);
  });

  it('refuses to delete an agent that pipelines use, naming them, unless ?force=true', async () => {
    const agent = await createAgent({ agent_type: 'StructureAgent', configuration: {} });
    const stage = { name: 'table', agent_id: agent.id, input_mapping: { data: '$.input.rows' } };
    const pipelineIds: string[] = [];
    for (const name of ['Weekly report', 'Daily digest']) {
      const response = await call('POST', '/v1/pipelines', { name, stages: [stage] });
      expect(response.statusCode, response.body).toBe(201);
      pipelineIds.push(response.json<{ pipeline_id: string }>().pipeline_id);
    }
    const refused = await call('DELETE', `/v1/agents/${agent.id}`);
    expect(refused.statusCode).toBe(409);
    const error = refused.json<{
      error: ErrorJson['error'] & {
        pipelines: Array<{ id: string; name: string }>;
        pipeline_count: number;
        other_accounts_pipelines: number;
      };
    }>().error;
    expect(error).toMatchObject({
      code: 'conflict',
      type: 'conflict_error',
      pipelines: [
        { id: pipelineIds[0], name: 'Weekly report' },
        { id: pipelineIds[1], name: 'Daily digest' },
      ],
      pipeline_count: 2,
      other_accounts_pipelines: 0,
    });
    for (const id of pipelineIds) expect(error.message).toContain(id);
    expect(error.message).toContain("'Weekly report'");
    expect(error.message).toContain('?force=true');
    expect((await call('GET', `/v1/agents/${agent.id}`)).statusCode).toBe(200);
    expect((await call('DELETE', `/v1/agents/${agent.id}?force=false`)).statusCode).toBe(409);

    // Another account's pipeline using a public agent is counted, never named.
    const shared = await createAgent({
      agent_type: 'StructureAgent',
      configuration: {},
      is_public: true,
    });
    const other = await createAccount(harness.app, harness.adminKey, `deleter-${dialect.name}`);
    const theirs = await call(
      'POST',
      '/v1/pipelines',
      { name: 'Their secret flow', stages: [{ ...stage, agent_id: shared.id }] },
      other.admin_key,
    );
    expect(theirs.statusCode).toBe(201);
    const sharedRefused = await call('DELETE', `/v1/agents/${shared.id}`);
    expect(sharedRefused.statusCode).toBe(409);
    expect(
      sharedRefused.json<{ error: { other_accounts_pipelines: number } }>().error,
    ).toMatchObject({ other_accounts_pipelines: 1, pipelines: [] });
    expect(sharedRefused.body).not.toContain('Their secret flow');
    expect(sharedRefused.body).not.toContain(theirs.json<{ pipeline_id: string }>().pipeline_id);

    const forced = await call('DELETE', `/v1/agents/${agent.id}?force=true`);
    expect(forced.statusCode).toBe(200);
    expect((await call('GET', `/v1/agents/${agent.id}`)).statusCode).toBe(404);
    // The pipelines stay; a run fails at the stage whose agent is gone.
    const run = await call('POST', `/v1/pipelines/${pipelineIds[0]}/execute`, { rows: 'a\n1' });
    expect(run.json()).toMatchObject({
      status: 'failed',
      error: `stage 'table' failed: agent '${agent.id}' no longer exists`,
    });
    // An agent no pipeline uses is deleted without force.
    const unused = await createAgent({ agent_type: 'StructureAgent', configuration: {} });
    expect((await call('DELETE', `/v1/agents/${unused.id}`)).statusCode).toBe(200);
  });

  it('needs agents:read to read and agents:write to change or execute', async () => {
    const agent = await createAgent({ agent_type: 'SummarizationAgent', configuration: {} });
    const reader = (await createKey(harness.app, harness.adminKey, { scopes: ['agents:read'] }))
      .key;
    expect((await call('GET', `/v1/agents/${agent.id}`, undefined, reader)).statusCode).toBe(200);
    const refused = await execute(agent.id, { query: 'x' }, reader);
    expect(refused.statusCode).toBe(403);
    expect(refused.json<{ error: { required_scope: string } }>().error.required_scope).toBe(
      'agents:write',
    );
  });
});
