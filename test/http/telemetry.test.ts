// OpenTelemetry over real HTTP, exported to a real OTLP/HTTP receiver in JSON (SQLite) and in
// protobuf (PostgreSQL): a client's trace continued through a server span into one CLIENT span per
// upstream attempt with the GenAI conventions' attributes, its traceparent received by the fake
// provider; a retry its own span; a pipeline whose ToolAgent searches a knowledge base nested
// invoke_workflow → invoke_agent → chat / execute_tool → retrieval; the GenAI metrics; content
// only on opt-in; and no SDK at all without an endpoint. Runs in a process of its own
// (vitest.config.ts): OpenTelemetry's registration is process-wide.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushTelemetry, telemetry } from '../../src/telemetry/otel-runtime.js';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { startFakeVendor, type FakeVendor } from '../support/fake-vendors.js';
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../support/otlp-receiver.js';
import { startTestApp } from '../support/test-app.js';

const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;

const setups = [
  { protocol: 'http/json', contentType: 'application/json', dialect: allDialects[0]! },
  {
    protocol: 'http/protobuf',
    contentType: 'application/x-protobuf',
    dialect: allDialects.at(-1)!,
  },
];

const otelVariables = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_TRACES_SAMPLER',
  'OTEL_NODE_RESOURCE_DETECTORS',
  'OTEL_SERVICE_NAME',
] as const;

/** A W3C traceparent of a client's own span. */
function clientTrace() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

describe.each(setups)('OpenTelemetry over $protocol on $dialect.name', (setup) => {
  let receiver: OtlpReceiver;
  let anthropic: FakeVendor;
  let harness: ChatHarness;
  let baseUrl: string;

  const post = (path: string, body: unknown, traceparent?: string) =>
    fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${harness.adminKey}`,
        'content-type': 'application/json',
        ...(traceparent === undefined ? {} : { traceparent }),
      },
      body: JSON.stringify(body),
    });

  /** The spans of trace `traceId` received once everything pending was exported. */
  const traceOf = async (traceId: string) => {
    await flushTelemetry();
    return receiver.spans.filter((span) => span.traceId === traceId);
  };
  const only = (spans: ReceivedSpan[], predicate: (span: ReceivedSpan) => boolean) => {
    const found = spans.filter(predicate);
    expect(found, spans.map((span) => span.name).join(', ')).toHaveLength(1);
    return found[0]!;
  };

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: setup.protocol,
      OTEL_TRACES_SAMPLER: 'always_on',
      OTEL_NODE_RESOURCE_DETECTORS: 'env',
      OTEL_SERVICE_NAME: 'platform-under-test',
    };
    // The SDK reads its variables from the process, as in production; the service's gate reads
    // the same ones from its configuration's environment.
    Object.assign(process.env, env);
    anthropic = await startFakeVendor('anthropic');
    harness = await startChatHarness({
      dialect: setup.dialect,
      env: { ...env, ANTHROPIC_FAKE_KEY: anthropic.apiKey },
      extraModels: [
        {
          name: 'claude-fake',
          provider: 'anthropic',
          model: 'claude-sonnet-4-5',
          base_url: anthropic.baseUrl,
          api_key_env: 'ANTHROPIC_FAKE_KEY',
          max_tokens: 512,
          context_length: 100_000,
          max_retries: 0,
        },
      ],
    });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await harness?.close();
    await anthropic?.close();
    await receiver?.close();
    for (const name of otelVariables) delete process.env[name];
  });

  it('continues a client’s trace through a tool-calling chat, one CLIENT span per call', async () => {
    const client = clientTrace();
    harness.upstream.reset();
    harness.upstream.enqueueFor('chat', {
      kind: 'reply',
      toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    });
    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      },
    ];
    const question = { role: 'user', content: 'Weather in Paris?' };
    const first = await post(
      '/v1/chat/completions',
      {
        model: 'fake-chat',
        messages: [question],
        tools,
        temperature: 0.2,
        seed: 7,
        max_tokens: 50,
      },
      client.traceparent,
    );
    expect(first.status).toBe(200);
    const call = (
      (await first.json()) as { choices: Array<{ message: { tool_calls: unknown[] } }> }
    ).choices[0]!.message.tool_calls[0];
    const second = await post(
      '/v1/chat/completions',
      {
        model: 'fake-chat',
        stream: true,
        messages: [
          question,
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: 'call_1', content: 'Sunny, 21 °C' },
        ],
        tools,
      },
      client.traceparent,
    );
    expect(second.status).toBe(200);
    await second.text();

    const spans = await traceOf(client.traceId);
    const servers = spans.filter((span) => span.kind === SERVER);
    expect(servers).toHaveLength(2);
    for (const server of servers) {
      expect(server.parentSpanId).toBe(client.spanId);
      expect(server.name).toBe('POST /v1/chat/completions');
      expect(server.attributes['http.response.status_code']).toBe(200);
      expect(server.attributes['platform.account.id']).toMatch(/^acct_/);
    }
    const chats = spans.filter((span) => span.kind === CLIENT);
    expect(chats.map((span) => span.name)).toEqual(['chat gpt-4o-mini', 'chat gpt-4o-mini']);
    const [toolCall, answer] = chats.sort((a, b) =>
      String(a.attributes['gen_ai.request.stream']).localeCompare(
        String(b.attributes['gen_ai.request.stream']),
      ),
    );
    expect(servers.map((server) => server.spanId)).toContain(toolCall!.parentSpanId);
    expect(toolCall!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'gen_ai.request.temperature': 0.2,
      'gen_ai.request.seed': 7,
      'gen_ai.request.max_tokens': 50,
      'gen_ai.request.stream': false,
      'server.address': '127.0.0.1',
      'platform.model': 'fake-chat',
    });
    expect(toolCall!.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(toolCall!.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    expect(toolCall!.attributes['platform.account.id']).toMatch(/^acct_/);
    expect(toolCall!.attributes['platform.api_key.id']).toMatch(/^key_/);
    expect(answer!.attributes).toMatchObject({
      'gen_ai.request.stream': true,
      'gen_ai.response.finish_reasons': ['stop'],
    });
    // The retired attribute is not used; content is not captured unless the operator opts in.
    for (const span of chats) {
      expect(span.attributes['gen_ai.system']).toBeUndefined();
      expect(span.attributes['gen_ai.input.messages']).toBeUndefined();
      expect(span.statusCode).not.toBe(2);
    }
    // The provider received the trace: each request the context of its own attempt's span.
    const received = harness.upstream.requests
      .filter((request) => request.endpoint === 'chat')
      .map((request) => request.headers.traceparent);
    expect(received.toSorted()).toEqual(
      chats.map((span) => `00-${client.traceId}-${span.spanId}-01`).toSorted(),
    );
    expect(receiver.contentTypes).toContain(setup.contentType);
  });

  it('gives a retried upstream call a span per attempt, the failed one with its error type', async () => {
    const client = clientTrace();
    harness.upstream.reset();
    harness.upstream.enqueueFor('chat', { kind: 'error', status: 500 }, { kind: 'reply' });
    const response = await post(
      '/v1/chat/completions',
      { model: 'fake-chat', messages: [{ role: 'user', content: 'Hello' }] },
      client.traceparent,
    );
    expect(response.status).toBe(200);
    const attempts = (await traceOf(client.traceId)).filter((span) => span.kind === CLIENT);
    expect(attempts).toHaveLength(2);
    const failed = only(attempts, (span) => span.attributes['error.type'] === '500');
    expect(failed.statusCode).toBe(2);
    const answered = only(attempts, (span) => span.attributes['error.type'] === undefined);
    expect(answered.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
    expect(failed.parentSpanId).toBe(answered.parentSpanId);
    const received = harness.upstream.requests.map((request) => request.headers.traceparent);
    expect(received).toEqual([
      `00-${client.traceId}-${failed.spanId}-01`,
      `00-${client.traceId}-${answered.spanId}-01`,
    ]);
  });

  it('traces Anthropic’s Messages API passed through, whole and streamed', async () => {
    anthropic.reset();
    anthropic.enqueue(
      { kind: 'reply', text: 'Hello there.', inputTokens: 12, outputTokens: 3 },
      { kind: 'reply', text: 'Hello again, friend.', inputTokens: 14, outputTokens: 4 },
    );
    const client = clientTrace();
    for (const stream of [false, true]) {
      const response = await post(
        '/v1/messages',
        {
          model: 'claude-fake',
          max_tokens: 100,
          temperature: 0.5,
          stream,
          messages: [{ role: 'user', content: 'Hello' }],
        },
        client.traceparent,
      );
      expect(response.status).toBe(200);
      await response.text();
    }
    const chats = (await traceOf(client.traceId)).filter((span) => span.kind === CLIENT);
    expect(chats.map((span) => span.name)).toEqual([
      'chat claude-sonnet-4-5',
      'chat claude-sonnet-4-5',
    ]);
    for (const chat of chats) {
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.temperature': 0.5,
        'gen_ai.request.max_tokens': 100,
        'gen_ai.response.finish_reasons': ['end_turn'],
      });
      expect(chat.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(2);
    }
    expect(anthropic.requests.map((request) => request.headers.traceparent).toSorted()).toEqual(
      chats.map((span) => `00-${client.traceId}-${span.spanId}-01`).toSorted(),
    );
  });

  it('gives an upstream call refused for good one span, with the refusal’s status', async () => {
    const client = clientTrace();
    harness.upstream.reset();
    harness.upstream.enqueueFor('chat', { kind: 'error', status: 400 });
    const response = await post(
      '/v1/chat/completions',
      { model: 'fake-small', messages: [{ role: 'user', content: 'Hello' }] },
      client.traceparent,
    );
    // The upstream refused the platform's request: a gateway error for the client.
    expect(response.status).toBe(502);
    const spans = await traceOf(client.traceId);
    const attempts = spans.filter((span) => span.kind === CLIENT);
    expect(attempts.map((span) => span.attributes['error.type'])).toEqual(['400']);
    expect(
      only(spans, (span) => span.kind === SERVER).attributes['http.response.status_code'],
    ).toBe(502);
  });

  it('nests a pipeline’s agent, its model calls, its tool and the knowledge search it makes', async () => {
    harness.upstream.reset();
    const kb = await post('/v1/knowledge-bases', { name: 'Handbook' });
    expect(kb.status).toBe(201);
    const kbId = ((await kb.json()) as { id: string }).id;
    const document = await post(`/v1/knowledge-bases/${kbId}/documents`, {
      title: 'Refunds',
      content: 'Refunds are paid within 14 days of the return reaching the warehouse.',
    });
    expect(document.status).toBe(201);
    const agent = await post('/v1/agents', {
      name: 'helpdesk',
      agent_type: 'ToolAgent',
      configuration: {
        tools: [{ type: 'knowledge_search', name: 'handbook', knowledge_base_ids: [kbId] }],
      },
    });
    expect(agent.status).toBe(201);
    const agentId = ((await agent.json()) as { id: string }).id;
    const pipeline = await post('/v1/pipelines', {
      name: 'answering',
      stages: [{ name: 'answer', agent_id: agentId, input_mapping: { query: '$.input.question' } }],
    });
    expect(pipeline.status).toBe(201);
    const pipelineId = ((await pipeline.json()) as { id: string }).id;
    harness.upstream.enqueueFor(
      'chat',
      {
        kind: 'reply',
        toolCalls: [{ id: 'call_1', name: 'handbook', arguments: '{"query":"refunds"}' }],
      },
      { kind: 'reply', content: 'Within 14 days.' },
    );

    const client = clientTrace();
    const run = await post(
      `/v1/pipelines/${pipelineId}/execute`,
      { question: 'How long do refunds take?' },
      client.traceparent,
    );
    expect(run.status).toBe(200);
    const spans = await traceOf(client.traceId);
    const server = only(spans, (span) => span.kind === SERVER);
    const workflow = only(spans, (span) => span.name === `invoke_workflow ${pipelineId}`);
    expect(workflow.parentSpanId).toBe(server.spanId);
    expect(workflow.attributes['gen_ai.operation.name']).toBe('invoke_workflow');
    expect(workflow.attributes['platform.execution.status']).toBe('completed');
    const invoked = only(spans, (span) => span.name === 'invoke_agent helpdesk');
    expect(invoked.kind).toBe(INTERNAL);
    expect(invoked.parentSpanId).toBe(workflow.spanId);
    expect(invoked.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': agentId,
      'gen_ai.agent.name': 'helpdesk',
    });
    const chats = spans.filter((span) => span.name === 'chat gpt-4o-mini');
    expect(chats).toHaveLength(2);
    for (const chat of chats) expect(chat.parentSpanId).toBe(invoked.spanId);
    const tool = only(spans, (span) => span.name === 'execute_tool handbook');
    expect(tool.parentSpanId).toBe(invoked.spanId);
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'handbook',
      'gen_ai.tool.call.id': 'call_1',
    });
    const retrieval = only(spans, (span) => span.name === `retrieval ${kbId}`);
    expect(retrieval.parentSpanId).toBe(tool.spanId);
    expect(retrieval.attributes['gen_ai.data_source.id']).toBe(kbId);
    // The provider's requests carry this trace.
    for (const request of harness.upstream.requests.filter((r) => r.endpoint === 'chat')) {
      expect(request.headers.traceparent).toMatch(new RegExp(`^00-${client.traceId}-`));
    }
  });

  it('traces a knowledge search with the embedding call it makes, and exports the GenAI metrics', async () => {
    const kb = await post('/v1/knowledge-bases', { name: 'Notes' });
    const kbId = ((await kb.json()) as { id: string }).id;
    await post(`/v1/knowledge-bases/${kbId}/documents`, {
      title: 'Tides',
      content: 'Tides rise and fall twice a day because of the moon.',
    });
    const client = clientTrace();
    const search = await post(
      `/v1/knowledge-bases/${kbId}/search`,
      { query: 'why do tides rise' },
      client.traceparent,
    );
    expect(search.status).toBe(200);
    const spans = await traceOf(client.traceId);
    const server = only(spans, (span) => span.kind === SERVER);
    const retrieval = only(spans, (span) => span.name === `retrieval ${kbId}`);
    expect(retrieval.parentSpanId).toBe(server.spanId);
    const embedding = only(spans, (span) => span.name === 'embeddings text-embedding-3-small');
    expect(embedding.parentSpanId).toBe(retrieval.spanId);
    expect(embedding.attributes['gen_ai.operation.name']).toBe('embeddings');
    expect(embedding.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);

    // A streamed answer of several tokens gives every GenAI metric a point.
    const streamed = await post('/v1/chat/completions', {
      model: 'fake-chat',
      stream: true,
      messages: [{ role: 'user', content: 'Tell me about the sea and its tides' }],
    });
    await streamed.text();
    await flushTelemetry();
    expect([...receiver.metricNames]).toEqual(
      expect.arrayContaining([
        'gen_ai.client.token.usage',
        'gen_ai.client.operation.duration',
        'gen_ai.server.time_to_first_token',
        'gen_ai.server.time_per_output_token',
      ]),
    );
  });
});

describe('OpenTelemetry with message content captured', () => {
  it('puts the prompt and the answer on the chat span only when the operator opts in', async () => {
    const receiver = await startOtlpReceiver();
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_NODE_RESOURCE_DETECTORS: 'env',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    };
    Object.assign(process.env, env);
    const harness = await startChatHarness({ dialect: allDialects[0]!, env });
    try {
      const client = clientTrace();
      const answer = await harness.app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: { authorization: `Bearer ${harness.adminKey}`, traceparent: client.traceparent },
        payload: { model: 'fake-chat', messages: [{ role: 'user', content: 'Name a colour' }] },
      });
      expect(answer.statusCode).toBe(200);
      await flushTelemetry();
      const chat = receiver.spans.find(
        (span) => span.traceId === client.traceId && span.kind === CLIENT,
      );
      expect(JSON.parse(String(chat?.attributes['gen_ai.input.messages']))).toEqual([
        { role: 'user', parts: [{ type: 'text', content: 'Name a colour' }] },
      ]);
      expect(String(chat?.attributes['gen_ai.output.messages'])).toContain('Name a colour');
    } finally {
      await harness.close();
      await receiver.close();
      for (const name of Object.keys(env)) delete process.env[name];
    }
  });
});

describe('OpenTelemetry switched off', () => {
  it('starts no SDK without an endpoint, nor when OTEL_SDK_DISABLED is set', async () => {
    const receiver = await startOtlpReceiver();
    const envs: Array<Record<string, string>> = [
      {},
      { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SDK_DISABLED: 'true' },
    ];
    for (const env of envs) {
      const app = await startTestApp({ dialect: allDialects[0]!, env });
      try {
        expect(app.services.config.telemetry.enabled).toBe(false);
        expect(telemetry()).toBeNull();
        const response = await app.app.inject({
          method: 'GET',
          url: '/v1/models',
          headers: {
            authorization: `Bearer ${app.adminKey}`,
            traceparent: clientTrace().traceparent,
          },
        });
        expect(response.statusCode).toBe(200);
      } finally {
        await app.close();
      }
    }
    expect(receiver.spans).toHaveLength(0);
    expect(receiver.contentTypes.size).toBe(0);
    await receiver.close();
  });
});
