// One tenant must never harm another (issue 17, item 1): no key or name a client chooses reaches an
// object's prototype. Every place a client names a key refuses `__proto__`, `constructor` and
// `prototype` with a 400 `invalid_parameter` naming the field, on both dialects; the reported
// reproduction (a pipeline input named `parameters.__proto__.polluted`) is refused at save time,
// and the same pipeline written straight into the database is refused when it runs, sync or
// async, without touching Object.prototype; another tenant's requests keep working throughout.
// (test/support/no-pollution.ts also fails this file if any request changed a prototype.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer, createAccount, createKey } from '../support/test-app.js';

interface ErrorJson {
  error: { code: string; type: string; param: string | null; message: string };
}

const reserved = ['__proto__', 'constructor', 'prototype'] as const;

/** A JSON text with `key` as an object key, whatever it is (`__proto__` cannot be a literal key). */
function withKey(key: string, value: unknown): Record<string, unknown> {
  return JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(value)}}`) as Record<string, unknown>;
}

function notPolluted(): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
}

describe.each(allDialects)('reserved key names on $name', (dialect) => {
  let harness: ChatHarness;
  let writerKey = '';
  let otherTenantKey = '';
  let tableAgent = '';
  let conversationId = '';
  let kbId = '';

  /** A request as a client sends it: the body as JSON text, so `__proto__` keys travel as keys. */
  const call = (
    method: 'GET' | 'POST' | 'PATCH' | 'PUT',
    url: string,
    body?: unknown,
    key?: string,
  ) =>
    harness.app.inject({
      method,
      url,
      headers: { ...bearer(key ?? harness.adminKey), 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });

  async function expectRefused(
    method: 'POST' | 'PATCH' | 'PUT',
    url: string,
    body: unknown,
    param: string,
  ): Promise<ErrorJson['error']> {
    const response = await call(method, url, body);
    const what = `${method} ${url} ${JSON.stringify(body)} → ${response.body}`;
    expect(response.statusCode, what).toBe(400);
    const error = response.json<ErrorJson>().error;
    expect(error.code, what).toBe('invalid_parameter');
    expect(error.type, what).toBe('invalid_request_error');
    expect(error.param, what).toBe(param);
    notPolluted();
    return error;
  }

  /** Another account's ordinary request still passes validation (nothing leaked into it). */
  async function otherTenantUnharmed(): Promise<void> {
    const response = await call(
      'POST',
      '/v1/conversations',
      { title: 'unharmed', metadata: { team: 'b' } },
      otherTenantKey,
    );
    expect(response.statusCode, response.body).toBe(201);
    notPolluted();
  }

  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
    writerKey = (await createKey(harness.app, harness.adminKey, { scopes: ['agents:write'] })).key;
    otherTenantKey = (await createAccount(harness.app, harness.adminKey, `other-${dialect.name}`))
      .admin_key;
    const agent = await call('POST', '/v1/agents', {
      name: 'table',
      agent_type: 'StructureAgent',
      configuration: {},
    });
    expect(agent.statusCode, agent.body).toBe(201);
    tableAgent = agent.json<{ id: string }>().id;
    const conversation = await call('POST', '/v1/conversations', { title: 'c' });
    conversationId = conversation.json<{ id: string }>().id;
    const kb = await call('POST', '/v1/knowledge-bases', { name: 'kb' });
    expect(kb.statusCode, kb.body).toBe(201);
    kbId = kb.json<{ id: string }>().id;
  });
  afterAll(async () => {
    await harness.close();
  });

  const stage = (extra: Record<string, unknown> = {}) => ({
    name: 'table',
    agent_id: tableAgent,
    input_mapping: { data: '$.input.rows' },
    ...extra,
  });

  describe('the reported reproduction', () => {
    it('refuses parameters.__proto__.polluted at save time, for a key with agents:write only', async () => {
      const body = {
        name: 'pollute',
        stages: [stage({ input_mapping: { 'parameters.__proto__.polluted': '$.input.v' } })],
      };
      const response = await call('POST', '/v1/pipelines', body, writerKey);
      expect(response.statusCode, response.body).toBe(400);
      const error = response.json<ErrorJson>().error;
      expect(error).toMatchObject({
        code: 'invalid_parameter',
        param: 'stages[0].input_mapping.parameters.__proto__.polluted',
      });
      expect(error.message).toContain("'__proto__' is a reserved name");
      notPolluted();
      await otherTenantUnharmed();
    });

    /** A pipeline saved soundly, then its stages replaced in the database as `stages`. */
    async function storedPipeline(stages: unknown[]): Promise<string> {
      const created = await call('POST', '/v1/pipelines', { name: 'stored', stages: [stage()] });
      expect(created.statusCode, created.body).toBe(201);
      const id = created.json<{ id: string }>().id;
      const stored = created.json<{ stages: Array<{ id: string }> }>().stages;
      const withIds = stages.map((entry, index) => ({
        id: stored[index]?.id ?? `stage_injected${index}`,
        ...(entry as object),
      }));
      await harness.services.storage.db
        .updateTable('pipelines')
        .set({ stages: JSON.stringify(withIds) })
        .where('id', '=', id)
        .execute();
      return id;
    }

    it.each([
      [
        'an input name',
        { input_mapping: { data: '$.input.rows', 'parameters.__proto__.polluted': '$.input.v' } },
        'stages[0].input_mapping.parameters.__proto__.polluted',
      ],
      [
        'an input name through constructor.prototype',
        { input_mapping: { 'parameters.constructor.prototype.polluted': '$.input.v' } },
        'stages[0].input_mapping.parameters.constructor.prototype.polluted',
      ],
      [
        'an output name',
        { output_mapping: withKey('__proto__', '$.output.rows') },
        'stages[0].output_mapping.__proto__',
      ],
      [
        'a path',
        { input_mapping: { data: '$.input.rows', query: '$.input.__proto__.v' } },
        'stages[0].input_mapping.query',
      ],
      ['a stage name', { name: 'constructor' }, 'stages[0].name'],
    ])(
      'refuses a stored pipeline with a reserved name in %s when it runs (sync and async), polluting nothing',
      async (_what, change, param) => {
        const id = await storedPipeline([stage(change)]);
        const run = await call('POST', `/v1/pipelines/${id}/execute`, {
          rows: [{ a: 1 }],
          v: 'yes',
        });
        expect(run.statusCode, run.body).toBe(200);
        const result = run.json<{ status: string; error: string; execution_id: string }>();
        expect(result.status).toBe('failed');
        expect(result.error).toContain('is a reserved name');
        notPolluted();
        const detail = (await call('GET', `/v1/executions/${result.execution_id}`)).json<{
          execution: {
            error_detail?: { code: string; param?: string };
            stages: Array<{ status: string; error_detail?: { code: string; param?: string } }>;
          };
        }>().execution;
        expect(detail.stages[0]!.status).toBe('failed');
        expect(JSON.stringify(detail)).toContain(param);

        const queued = await call('POST', `/v1/pipelines/${id}/execute`, {
          rows: [{ a: 1 }],
          v: 'yes',
          async: true,
        });
        expect(queued.statusCode, queued.body).toBe(202);
        const executionId = queued.json<{ execution_id: string }>().execution_id;
        // The event stream ends when the run does.
        await call('GET', `/v1/executions/${executionId}/events`);
        const later = (await call('GET', `/v1/executions/${executionId}`)).json<{
          execution: { status: string; error?: string };
        }>().execution;
        expect(later.status).toBe('failed');
        expect(later.error).toContain('is a reserved name');
        notPolluted();
        await otherTenantUnharmed();
      },
    );
  });

  describe('pipelines', () => {
    const create = (stages: unknown[], extra: Record<string, unknown> = {}) => ({
      name: 'p',
      stages,
      ...extra,
    });

    it.each(reserved)('refuses %s as a stage name', async (key) => {
      await expectRefused(
        'POST',
        '/v1/pipelines',
        create([stage({ name: key })]),
        'stages[0].name',
      );
    });

    it.each(reserved)('refuses %s in an input name, alone or dotted', async (key) => {
      await expectRefused(
        'POST',
        '/v1/pipelines',
        create([stage({ input_mapping: withKey(key, '$.input.v') })]),
        `stages[0].input_mapping.${key}`,
      );
      await expectRefused(
        'POST',
        '/v1/pipelines',
        create([stage({ input_mapping: { [`parameters.${key}.polluted`]: '$.input.v' } })]),
        `stages[0].input_mapping.parameters.${key}.polluted`,
      );
    });

    it.each(reserved)('refuses %s as an output name', async (key) => {
      await expectRefused(
        'POST',
        '/v1/pipelines',
        create([stage({ output_mapping: withKey(key, '$.output.rows') })]),
        `stages[0].output_mapping.${key}`,
      );
    });

    it.each(reserved)('refuses %s as a key of a path, dotted or bracketed', async (key) => {
      for (const path of [
        `$.input.${key}`,
        `$.input.rows.${key}.x`,
        `$.input["${key}"]`,
        `$.input.rows[0]["${key}"]`,
      ]) {
        await expectRefused(
          'POST',
          '/v1/pipelines',
          create([stage({ input_mapping: { data: path } })]),
          'stages[0].input_mapping.data',
        );
      }
      for (const path of [
        `$.stages.${key}.rows`,
        `$.stages["${key}"].rows`,
        `$.stages.first.${key}`,
      ]) {
        await expectRefused(
          'POST',
          '/v1/pipelines',
          create([
            stage({ name: 'first' }),
            stage({ name: 'second', input_mapping: { data: path } }),
          ]),
          'stages[1].input_mapping.data',
        );
      }
      await expectRefused(
        'POST',
        '/v1/pipelines',
        create([stage({ output_mapping: { out: `$.output.${key}` } })]),
        'stages[0].output_mapping.out',
      );
    });

    it.each(reserved)('refuses %s as a field of visual_layout, at any depth', async (key) => {
      const node = { id: 'n1', position: { x: 0, y: 0 } };
      const cases: Array<[unknown, string]> = [
        [{ nodes: [node], ...withKey(key, 1) }, `visual_layout.${key}`],
        [{ nodes: [{ ...node, ...withKey(key, 'x') }] }, `visual_layout.nodes[0].${key}`],
        [
          { nodes: [{ ...node, data: withKey(key, { a: 1 }) }] },
          `visual_layout.nodes[0].data.${key}`,
        ],
        [
          { nodes: [node], edges: [{ source: 'n1', target: 'n1', ...withKey(key, true) }] },
          `visual_layout.edges[0].${key}`,
        ],
        [
          { nodes: [node], viewport: { zoom: 1, nested: withKey(key, 2) } },
          `visual_layout.viewport.nested.${key}`,
        ],
      ];
      for (const [layout, param] of cases) {
        await expectRefused(
          'POST',
          '/v1/pipelines',
          create([stage()], { visual_layout: layout }),
          param,
        );
      }
    });

    it('refuses them on PATCH and PUT too, and stores nothing', async () => {
      const created = await call('POST', '/v1/pipelines', create([stage()]));
      expect(created.statusCode, created.body).toBe(201);
      const id = created.json<{ id: string }>().id;
      for (const method of ['PATCH', 'PUT'] as const) {
        await expectRefused(
          method,
          `/v1/pipelines/${id}`,
          { stages: [stage({ input_mapping: { 'parameters.prototype.x': '$.input.v' } })] },
          'stages[0].input_mapping.parameters.prototype.x',
        );
        await expectRefused(
          method,
          `/v1/pipelines/${id}`,
          { visual_layout: { nodes: [], ...withKey('constructor', {}) } },
          'visual_layout.constructor',
        );
      }
      const stored = (await call('GET', `/v1/pipelines/${id}`)).json<{
        pipeline: { configuration: { stages: Array<{ input_mapping: Record<string, string> }> } };
      }>().pipeline;
      expect(stored.configuration.stages[0]!.input_mapping).toEqual({ data: '$.input.rows' });
    });

    it.each(reserved)('refuses %s as a run input name', async (key) => {
      const created = await call('POST', '/v1/pipelines', create([stage()]));
      const id = created.json<{ id: string }>().id;
      await expectRefused(
        'POST',
        `/v1/pipelines/${id}/execute`,
        { rows: [{ a: 1 }], ...withKey(key, { polluted: 'yes' }) },
        key,
      );
    });
  });

  describe('agents', () => {
    it.each(reserved)('refuses %s as a configuration key, at any depth', async (key) => {
      await expectRefused(
        'POST',
        '/v1/agents',
        { name: 'a', agent_type: 'StructureAgent', configuration: withKey(key, {}) },
        `configuration.${key}`,
      );
      await expectRefused(
        'PATCH',
        `/v1/agents/${tableAgent}`,
        { configuration: { processing_steps: [], extra: withKey(key, 1) } },
        `configuration.extra.${key}`,
      );
    });

    it.each(reserved)('refuses %s as a parameter and as an execution input key', async (key) => {
      await expectRefused(
        'POST',
        `/v1/agents/${tableAgent}/execute`,
        { data: [{ a: 1 }], parameters: withKey(key, { polluted: 'yes' }) },
        `parameters.${key}`,
      );
      await expectRefused(
        'POST',
        `/v1/agents/${tableAgent}/execute`,
        { data: [{ a: 1 }], ...withKey(key, 'yes') },
        key,
      );
    });
  });

  describe('conversations, templates and documents', () => {
    it.each(reserved)('refuses %s as a conversation metadata key, at any depth', async (key) => {
      await expectRefused(
        'POST',
        '/v1/conversations',
        { title: 't', metadata: withKey(key, 1) },
        `metadata.${key}`,
      );
      await expectRefused(
        'PATCH',
        `/v1/conversations/${conversationId}`,
        { metadata: { team: { lead: withKey(key, 'x') } } },
        `metadata.team.lead.${key}`,
      );
    });

    it.each(reserved)('refuses %s as a template variable', async (key) => {
      const error = await expectRefused(
        'POST',
        `/v1/conversations/${conversationId}/template`,
        { template_name: 'expert_assistant', variables: withKey(key, 'x') },
        `variables.${key}`,
      );
      expect(error.message).toContain('reserved name');
    });

    it.each(reserved)('refuses %s as a document metadata key', async (key) => {
      await expectRefused(
        'POST',
        `/v1/knowledge-bases/${kbId}/documents`,
        { title: 'd', content: 'Some text.', metadata: { source: withKey(key, 1) } },
        `metadata.source.${key}`,
      );
    });
  });

  describe('routing policies and layouts', () => {
    it.each(reserved)('refuses %s as a policy condition or action', async (key) => {
      await expectRefused(
        'POST',
        '/v1/routing/policies',
        { name: 'p', conditions: withKey(key, ['x']), actions: { max_tokens: 10 } },
        `conditions.${key}`,
      );
      await expectRefused(
        'POST',
        '/v1/routing/policies',
        { name: 'p', actions: { max_tokens: 10, ...withKey(key, 1) } },
        `actions.${key}`,
      );
    });

    it.each(reserved)('refuses %s as a field of a layout content_analysis', async (key) => {
      await expectRefused(
        'POST',
        '/v1/layout',
        {
          message: 'Hello',
          routing_result: {
            content_analysis: { contentTypes: [], complexity: 'simple', ...withKey(key, 'x') },
          },
        },
        `routing_result.content_analysis.${key}`,
      );
    });
  });

  it.each([...reserved, 'toString', 'hasOwnProperty'])(
    'refuses %s as a key tier (a name looked up among the configured tiers)',
    async (tier) => {
      await expectRefused(
        'POST',
        '/v1/api-keys',
        { name: 'k', scopes: ['models:read'], tier },
        'tier',
      );
    },
  );

  describe('one rule for bodies of every size', () => {
    // Bodies over 1 MiB are parsed in a text thread, smaller ones by Fastify's parser: the same
    // body refuses (or passes) the same way on both sides. The padding is an extra top-level field
    // of /v1/messages, which accepts unknown fields (Anthropic's request may grow).
    const sizes = [
      ['under 1 MiB', 1000],
      ['over 1 MiB', 1100 * 1024],
    ] as const;
    const messagesBody = (reserved: string, padding: number) =>
      `{"a":{"prototype":1},${reserved}"padding":"${'x'.repeat(padding)}",` +
      `"model":"fake-chat","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`;
    const send = (payload: string) =>
      harness.app.inject({
        method: 'POST',
        url: '/v1/messages',
        headers: { ...bearer(harness.adminKey), 'content-type': 'application/json' },
        payload,
      });

    it.each(sizes)(
      'refuses __proto__ and constructor.prototype behind a harmless prototype key, %s',
      async (_side, padding) => {
        for (const [reserved, param] of [
          ['"metadata":{"__proto__":{"polluted":1}},', 'metadata.__proto__'],
          ['"b":[{"constructor":{"prototype":{"polluted":1}}}],', 'b[0].constructor'],
        ] as const) {
          const payload = messagesBody(reserved, padding);
          const response = await send(payload);
          expect(response.statusCode, response.body).toBe(400);
          expect(response.json<ErrorJson>().error).toMatchObject({
            type: 'invalid_request_error',
            code: 'invalid_parameter',
            param,
          });
          expect(response.json<ErrorJson>().error.message).toContain('is a reserved name');
          notPolluted();
        }
      },
    );

    it.each(sizes)(
      'answers a body whose only reserved-looking keys are data (prototype, a text constructor), %s',
      async (_side, padding) => {
        const response = await send(messagesBody('"b":{"constructor":"x"},', padding));
        expect(response.statusCode, response.body).toBe(200);
        expect(response.json<{ type: string }>().type).toBe('message');
        notPolluted();
      },
    );
  });

  it('names a __proto__ key anywhere in any JSON body', async () => {
    const error = await expectRefused(
      'POST',
      '/v1/chat',
      { messages: [{ role: 'user', content: 'hi', ...withKey('__proto__', { polluted: 1 }) }] },
      'messages[0].__proto__',
    );
    expect(error.message).toContain('reserved name');
    await otherTenantUnharmed();
  });
});
