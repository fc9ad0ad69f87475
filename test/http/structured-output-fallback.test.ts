// Agents on an OpenAI-compatible server that ignores `response_format` and answers plain text:
// one repair request, then each type's own fallback, flagged; and what `structured_outputs` sends.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeModelCatalog, upstreamSecret } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { bearer, startTestApp, type TestApp } from '../support/test-app.js';

interface ExecutionResponse {
  success: boolean;
  execution_id: string;
  result: Record<string, unknown> | null;
  metrics: { execution_time_ms: number; tokens_used: number };
}

interface SentRequest {
  messages: Array<{ role: string; content: string }>;
  response_format?: { type: string; json_schema?: { schema: unknown } };
}

const plainReasoning = [
  'Let me work through this.',
  '',
  '1. Each box holds 4 apples.',
  '2. There are 3 boxes, so **3 × 4 = 12**.',
  '',
  'Conclusion: there are 12 apples.',
].join('\n');

const article = [
  'Solar power capacity grew faster than any other energy source last year.',
  'Analysts attribute the growth of solar power to falling panel prices and new storage.',
  'The weather in the capital was mild for most of the season.',
  'Cheaper batteries let solar power supply homes after sunset.',
  'Several football clubs changed their coaches.',
  'Governments expect solar power and storage to dominate new capacity this decade.',
].join(' ');

describe.each(allDialects)('structured output with an ordinary server on $name', (dialect) => {
  let upstream: FakeUpstream;
  let harness: TestApp;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ requireApiKey: upstreamSecret });
    const catalog = fakeModelCatalog(upstream.baseUrl);
    const chat = catalog.models[0]!;
    harness = await startTestApp({
      dialect,
      env: { FAKE_UPSTREAM_KEY: upstreamSecret },
      overrides: {
        ...catalog,
        models: [
          ...catalog.models,
          { ...chat, name: 'fake-schema', fallbacks: [], structured_outputs: true },
        ],
      },
    });
  });
  afterAll(async () => {
    await harness.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.reset();
  });

  const call = (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(harness.adminKey),
      ...(payload === undefined ? {} : { payload }),
    });

  async function run(agent: Record<string, unknown>, input: Record<string, unknown>) {
    const created = await call('POST', '/v1/agents', {
      name: 'agent',
      configuration: {},
      ...agent,
    });
    expect(created.statusCode, created.body).toBe(201);
    const response = await call(
      'POST',
      `/v1/agents/${created.json<{ id: string }>().id}/execute`,
      input,
    );
    expect(response.statusCode, response.body).toBe(200);
    return response.json<ExecutionResponse>();
  }

  const sent = (index: number) => upstream.requests[index]!.body as SentRequest;

  it('ReasoningAgent asks once more, then reads steps and a conclusion from the plain text', async () => {
    upstream.setDefaultBehaviour({ kind: 'reply', content: plainReasoning });
    const body = await run(
      { agent_type: 'ReasoningAgent' },
      { query: 'How many apples are in 3 boxes of 4?' },
    );
    expect(body.success).toBe(true);
    expect(body.result).toMatchObject({
      steps: [
        'Let me work through this.',
        'Each box holds 4 apples.',
        'There are 3 boxes, so 3 × 4 = 12.',
      ],
      conclusion: 'there are 12 apples.',
      structured: false,
    });
    const notice = body.result!.notice as string;
    expect(notice).toContain('did not match the expected structure twice');
    expect(notice).toContain('structured_outputs: true');
    // One repair attempt, naming the problem, and no more.
    expect(upstream.requests).toHaveLength(2);
    expect(sent(0).response_format?.type).toBe('json_object');
    expect(sent(1).messages[1]!.content).toContain(
      'Your previous answer was not valid: it is not JSON',
    );

    const record = (await call('GET', `/v1/executions/${body.execution_id}`)).json<{
      execution: { status: string; output: unknown };
    }>().execution;
    expect(record).toMatchObject({ status: 'completed', output: body.result });
  });

  it('ReasoningAgent takes a repaired answer as structured, and JSON wrapped in prose at once', async () => {
    upstream.enqueue(
      { kind: 'reply', content: 'I think it is 4.' },
      { kind: 'reply', content: JSON.stringify({ steps: ['2 + 2 = 4'], conclusion: '4' }) },
    );
    const repaired = await run({ agent_type: 'ReasoningAgent' }, { query: 'What is 2 + 2?' });
    expect(repaired.result).toEqual({ steps: ['2 + 2 = 4'], conclusion: '4', structured: true });
    expect(upstream.requests).toHaveLength(2);

    upstream.reset();
    upstream.enqueue({
      kind: 'reply',
      content: `Sure! Here is the answer:\n\`\`\`json\n${JSON.stringify({ steps: ['3 + 3 = 6'], conclusion: '6' })}\n\`\`\`\nHope this helps.`,
    });
    const wrapped = await run({ agent_type: 'ReasoningAgent' }, { query: 'What is 3 + 3?' });
    expect(wrapped.result).toEqual({ steps: ['3 + 3 = 6'], conclusion: '6', structured: true });
    expect(upstream.requests).toHaveLength(1);
  });

  it('SummarizationAgent falls back to the extractive summary, saying why', async () => {
    upstream.setDefaultBehaviour({
      kind: 'reply',
      content: 'Solar power is growing quickly because panels and batteries got cheaper.',
    });
    const body = await run(
      { agent_type: 'SummarizationAgent', configuration: { length: 'short', key_points: 2 } },
      { query: article },
    );
    expect(body.success).toBe(true);
    const result = body.result as {
      method: string;
      notice: string;
      key_points: string[];
      summary: string;
    };
    expect(result.method).toBe('extractive');
    expect(result.notice).toContain('not written by a model');
    expect(result.notice).toContain('did not match the expected structure twice (it is not JSON)');
    expect(result.key_points).toHaveLength(2);
    for (const point of result.key_points) expect(point).toContain('solar power');
    expect(result.summary).not.toContain('football');
    expect(upstream.requests).toHaveLength(2);
  });

  it('GenerationAgent asks for no structure, so a plain-text server answers it in one request', async () => {
    upstream.enqueue({ kind: 'reply', content: 'Thank you, team, for a great year.' });
    const body = await run(
      { agent_type: 'GenerationAgent', configuration: { format: 'text' } },
      { query: 'Thank the team.' },
    );
    expect(body.result).toEqual({
      text: 'Thank you, team, for a great year.',
      format: 'text',
      word_count: 7,
    });
    expect(upstream.requests).toHaveLength(1);
    expect(sent(0).response_format).toBeUndefined();
  });

  it('with structured_outputs: true the server is sent the JSON Schema itself', async () => {
    upstream.setDefaultBehaviour({ kind: 'reply', content: plainReasoning });
    const body = await run(
      { agent_type: 'ReasoningAgent', model_id: 'fake-schema' },
      { query: 'How many apples are in 3 boxes of 4?' },
    );
    expect(body.result).toMatchObject({ structured: false, conclusion: 'there are 12 apples.' });
    expect(body.result!.notice).not.toContain('structured_outputs');
    expect(sent(0).response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { schema: { required: ['steps', 'conclusion'] } },
    });
  });
});
