// The spec's common parameters (user_id, conversation_id, model) on agents, agent execution,
// pipelines, pipeline execution and knowledge bases, on every dialect: accepted everywhere without
// a 400, and recorded where they mean something — the user who ran an execution, the model that
// replaces an agent's for one run — while agent execution input stays free-form.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer } from '../support/test-app.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

interface ErrorJson {
  error: { message: string; type: string; code: string; param: string | null };
}

interface ExecutionJson {
  user_id: string | null;
  conversation_id: string | null;
  input: Record<string, unknown>;
  status: string;
}

describe.each(allDialects)('common parameters on $name', (dialect) => {
  let harness: ChatHarness;
  let conversation = '';
  let common: Record<string, string> = {};

  const call = (method: Method, url: string, payload?: unknown) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(harness.adminKey),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const query = () => new URLSearchParams(common).toString();

  async function created(url: string, body: Record<string, unknown>) {
    const response = await call('POST', url, body);
    expect(response.statusCode, `${url} ${response.body}`).toBe(201);
    return response.json<{ id: string }>().id;
  }

  const record = async (id: string) =>
    (await call('GET', `/v1/executions/${id}`)).json<{ execution: ExecutionJson }>().execution;

  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
    conversation = await created('/v1/conversations', { user_id: 'alice' });
    common = { user_id: 'alice', conversation_id: conversation, model: 'fake-chat' };
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  it('are part of every request body of every operation in /openapi.json', async () => {
    const document = (await call('GET', '/openapi.json')).json<{
      paths: Record<
        string,
        Record<
          string,
          {
            tags?: string[];
            requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
          }
        >
      >;
    }>();
    const missing: string[] = [];
    let bodies = 0;
    for (const [path, operations] of Object.entries(document.paths)) {
      // A JSON-RPC message of the Model Context Protocol: its envelope is the protocol's, and a
      // tool call's arguments are the tool's (an agent tool takes `model` in its own way there).
      if (path === '/mcp') continue;
      for (const [method, operation] of Object.entries(operations)) {
        const schema = operation.requestBody?.content['application/json']?.schema;
        if (schema === undefined) continue;
        bodies += 1;
        const properties = (schema.properties ?? {}) as Record<string, unknown>;
        for (const name of ['user_id', 'conversation_id', 'model']) {
          if (!(name in properties)) missing.push(`${method.toUpperCase()} ${path}: ${name}`);
        }
      }
    }
    expect(bodies).toBeGreaterThanOrEqual(25);
    expect(missing).toEqual([]);
  });

  it('are accepted by the operations on keys, accounts, conversations, templates, feedback and embeddings', async () => {
    const ok = async (method: Method, url: string, body: Record<string, unknown>) => {
      const response = await call(method, url, { ...common, ...body });
      expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
      return response;
    };
    await ok('POST', '/v1/api-keys', { name: 'with common parameters' });
    await ok('POST', '/v1/accounts', { name: 'Team with common parameters' });
    const created = (await ok('POST', '/v1/conversations', { title: 'x' })).json<{ id: string }>();
    await ok('PATCH', `/v1/conversations/${created.id}`, { title: 'y' });
    await ok('POST', `/v1/conversations/${created.id}/template`, {
      template_name: 'standard_assistant',
    });
    const turn = (
      await ok('POST', '/v1/chat', { messages: [{ role: 'user', content: 'hello' }] })
    ).json<{ conversation_id: string; message_id: string }>();
    await ok('POST', '/v1/feedback', {
      conversation_id: turn.conversation_id,
      message_id: turn.message_id,
      feedback_type: 'thumbs_up',
    });
    await ok('POST', '/v1/embeddings', { input: 'hello', model: 'fake-embed' });
  });

  it('are accepted by every operation on agents, pipelines, executions and knowledge bases', async () => {
    const seen: string[] = [];
    const accepted = async (method: Method, url: string, body?: Record<string, unknown>) => {
      const withQuery =
        body === undefined ? `${url}${url.includes('?') ? '&' : '?'}${query()}` : url;
      const response = await call(
        method,
        withQuery,
        body === undefined ? undefined : { ...common, ...body },
      );
      expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
      seen.push(`${method} ${url.split('?')[0]!}`);
      return response;
    };

    const agent = (
      await accepted('POST', '/v1/agents', {
        name: 'table',
        agent_type: 'StructureAgent',
        configuration: {},
      })
    ).json<{ id: string }>().id;
    await accepted('GET', '/v1/agent-types');
    await accepted('GET', '/v1/agents');
    await accepted('GET', `/v1/agents/${agent}`);
    await accepted('PATCH', `/v1/agents/${agent}`, { description: 'patched' });
    await accepted('PUT', `/v1/agents/${agent}`, { description: 'put' });
    const run = (await accepted('POST', `/v1/agents/${agent}/execute`, { data: 'a,b\n1,2' })).json<{
      execution_id: string;
      success: boolean;
    }>();
    expect(run.success).toBe(true);
    await accepted('GET', `/v1/executions/${run.execution_id}`);
    await accepted('GET', `/v1/executions/${run.execution_id}/events`);

    const pipeline = (
      await accepted('POST', '/v1/pipelines', {
        name: 'flow',
        stages: [{ name: 'table', agent_id: agent, input_mapping: { data: '$.input.rows' } }],
      })
    ).json<{ pipeline_id: string }>().pipeline_id;
    await accepted('GET', '/v1/pipelines');
    await accepted('GET', `/v1/pipelines/${pipeline}`);
    await accepted('PATCH', `/v1/pipelines/${pipeline}`, { description: 'patched' });
    await accepted('PUT', `/v1/pipelines/${pipeline}`, { description: 'put' });
    await accepted('POST', `/v1/pipelines/${pipeline}/execute`, { rows: 'a,b\n1,2' });
    await accepted('GET', `/v1/pipelines/${pipeline}/executions`);

    const kb = (await accepted('POST', '/v1/knowledge-bases', { name: 'docs' })).json<{
      id: string;
    }>().id;
    await accepted('GET', '/v1/knowledge-bases');
    await accepted('GET', `/v1/knowledge-bases/${kb}`);
    const document = (
      await accepted('POST', `/v1/knowledge-bases/${kb}/documents`, {
        title: 'Tides',
        content: 'The Moon pulls the sea.',
      })
    ).json<{ id: string }>().id;
    await accepted('GET', `/v1/knowledge-bases/${kb}/documents`);
    await accepted('POST', `/v1/knowledge-bases/${kb}/search`, { query: 'moon' });
    await accepted('DELETE', `/v1/knowledge-bases/${kb}/documents/${document}`);
    await accepted('DELETE', `/v1/knowledge-bases/${kb}`);
    await accepted('DELETE', `/v1/pipelines/${pipeline}`);
    await accepted('DELETE', `/v1/agents/${agent}`);
    expect(seen).toHaveLength(26);
  });

  it('records the user who ran an execution, and keeps keys the agent type does not use', async () => {
    const agent = await created('/v1/agents', {
      name: 'table',
      agent_type: 'StructureAgent',
      configuration: {},
    });
    const response = await call('POST', `/v1/agents/${agent}/execute`, {
      data: 'a,b\n1,2',
      user_id: 'carol',
      colour: 'red',
      context: { page: 'pricing', tags: ['x'] },
    });
    expect(response.statusCode, response.body).toBe(200);
    const id = response.json<{ execution_id: string }>().execution_id;
    const execution = await record(id);
    expect(execution).toMatchObject({
      user_id: 'carol',
      conversation_id: null,
      status: 'completed',
      input: { data: 'a,b\n1,2', colour: 'red', context: { page: 'pricing', tags: ['x'] } },
    });
    expect(execution.input).not.toHaveProperty('user_id');
    // Without user_id nothing is recorded for it.
    const anonymous = await call('POST', `/v1/agents/${agent}/execute`, { data: 'a\n1' });
    expect(
      (await record(anonymous.json<{ execution_id: string }>().execution_id)).user_id,
    ).toBeNull();
  });

  it("runs an agent execution with `model` in place of the agent's model_id", async () => {
    const agent = await created('/v1/agents', {
      name: 'writer',
      agent_type: 'GenerationAgent',
      configuration: {},
      model_id: 'fake-chat',
    });
    harness.upstream.enqueue(
      { kind: 'reply', content: 'With the agent’s model.' },
      { kind: 'reply', content: 'With the run’s model.' },
    );
    await call('POST', `/v1/agents/${agent}/execute`, { query: 'Hello.' });
    const run = await call('POST', `/v1/agents/${agent}/execute`, {
      query: 'Hello.',
      model: 'fake-backup',
    });
    expect(run.json()).toMatchObject({ success: true, result: { text: 'With the run’s model.' } });
    const upstreamModels = harness.upstream.requests.map(
      (request) => (request.body as { model: string }).model,
    );
    // fake-chat is gpt-4o-mini upstream, fake-backup is gpt-4o.
    expect(upstreamModels).toEqual(['gpt-4o-mini', 'gpt-4o']);
    const execution = await record(run.json<{ execution_id: string }>().execution_id);
    expect(execution.input).toMatchObject({ model: 'fake-backup' });
    // The agent itself is unchanged.
    expect((await call('GET', `/v1/agents/${agent}`)).json()).toMatchObject({
      model_id: 'fake-chat',
    });

    const unknown = await call('POST', `/v1/agents/${agent}/execute`, {
      query: 'Hello.',
      model: 'no-such-model',
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json<ErrorJson>().error).toMatchObject({
      code: 'unknown_model',
      param: 'model',
    });
    const embedding = await call('POST', `/v1/agents/${agent}/execute`, {
      query: 'Hello.',
      model: 'fake-embed',
    });
    expect(embedding.statusCode).toBe(400);
    expect(embedding.json<ErrorJson>().error).toMatchObject({
      code: 'invalid_parameter',
      param: 'model',
    });
  });

  it('lets a pipeline stage take its model from the run’s input', async () => {
    const writer = await created('/v1/agents', {
      name: 'writer',
      agent_type: 'GenerationAgent',
      configuration: {},
      model_id: 'fake-chat',
    });
    const response = await call('POST', '/v1/pipelines', {
      name: 'chosen model',
      stages: [
        {
          name: 'write',
          agent_id: writer,
          input_mapping: { query: '$.input.topic', model: '$.input.model' },
        },
      ],
    });
    expect(response.statusCode, response.body).toBe(201);
    const pipeline = response.json<{ pipeline_id: string }>().pipeline_id;
    harness.upstream.enqueue({ kind: 'reply', content: 'Written.' });
    const run = await call('POST', `/v1/pipelines/${pipeline}/execute`, {
      topic: 'tides',
      model: 'fake-backup',
      user_id: 'dave',
    });
    expect(run.json()).toMatchObject({ status: 'completed', output: { text: 'Written.' } });
    expect((harness.upstream.requests[0]!.body as { model: string }).model).toBe('gpt-4o');
    const execution = await record(run.json<{ execution_id: string }>().execution_id);
    expect(execution).toMatchObject({
      user_id: 'dave',
      input: { topic: 'tides', model: 'fake-backup' },
    });

    const unknown = await call('POST', `/v1/pipelines/${pipeline}/execute`, {
      topic: 'tides',
      model: 'no-such-model',
    });
    const failed = unknown.json<{ execution_id: string; error: string }>();
    expect(failed.error).toContain("Model 'no-such-model' is not in the catalog");
    expect(
      (await call('GET', `/v1/executions/${failed.execution_id}`)).json<{
        execution: { error_detail: { code: string } };
      }>().execution.error_detail.code,
    ).toBe('unknown_model');
  });
});
