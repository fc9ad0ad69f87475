// Fuzzing every operation of /openapi.json on both dialects: generated malformed bodies, queries
// and path ids (see test/support/openapi-fuzz.ts) must never answer 5xx, and every 4xx must carry
// the contract's error body with a code of the catalog and its status and type. Keys and key
// paths include `__proto__`, `constructor` and `prototype`: no request may change Object.prototype.
// Bounded: a fixed number of runs per operation and dialect (FUZZ_RUNS, default 40) from one seed
// (FUZZ_SEED, random unless given), printed at the start and in every failure so that a failure
// can be replayed exactly. Each dialect draws from its own seed (FUZZ_SEED plus its index), so the
// two together send twice as many different requests to every operation as either alone.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalog, type ErrorCode } from '../../src/errors/catalog.js';
import {
  offlineSpeechModels,
  startChatHarness,
  type ChatHarness,
} from '../support/chat-harness.js';
import { allDialects, type DialectUnderTest } from '../support/dialects.js';
import {
  requestFor,
  strayRequest,
  type FuzzRequest,
  type Operation,
  type OperationParameter,
  type Schema,
} from '../support/openapi-fuzz.js';
import { bearer, createKey } from '../support/test-app.js';

const runs = Number(process.env.FUZZ_RUNS ?? 40);
/** Object.prototype's members before any request (compared after each one). */
const objectMembers = Object.getOwnPropertyNames(Object.prototype);
const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const replay = `replay with FUZZ_SEED=${seed} FUZZ_RUNS=${runs}`;
process.stdout.write(
  `\n[fuzz] seed ${seed} (${allDialects.map((dialect, index) => `${dialect.name} ${seed + index}`).join(', ')}), ${runs} runs per operation and dialect (${replay})\n`,
);

/** Runs a property from a dialect's seed; a failure names the file's seed to replay it with. */
async function check<T>(property: fc.IAsyncProperty<T>, parameters: fc.Parameters<T>) {
  try {
    await fc.assert(property, parameters);
  } catch (error) {
    if (error instanceof Error) error.message = `${error.message}\n[fuzz] ${replay}`;
    throw error;
  }
}

/** One app per dialect for the whole file (the first also publishes the document read below). */
const harnesses = new Map<DialectUnderTest, Promise<ChatHarness>>();
function harnessFor(dialect: DialectUnderTest): Promise<ChatHarness> {
  // The speech engines that need no download, so speech operations run their real code.
  const harness =
    harnesses.get(dialect) ?? startChatHarness({ dialect, extraModels: offlineSpeechModels });
  harnesses.set(dialect, harness);
  return harness;
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: OperationParameter[];
        requestBody?: { content?: Record<string, { schema?: Schema }> };
      }
    >
  >;
}

/** The operations, read from the document the service publishes (the first dialect's app). */
const operations: Operation[] = await (async () => {
  const harness = await harnessFor(allDialects[0]!);
  const document = (
    await harness.app.inject({ method: 'GET', url: '/openapi.json' })
  ).json<OpenApiDocument>();
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      parameters: operation.parameters ?? [],
      body: operation.requestBody?.content?.['application/json']?.schema,
    })),
  );
})();

/** A readable, bounded account of a request for failure messages (bodies can weigh a megabyte). */
function describeRequest(request: FuzzRequest): string {
  const cut = (text: string) =>
    text.length > 300 ? `${text.slice(0, 300)}… (${text.length} chars)` : text;
  return `${request.method} ${cut(request.url)} content-type=${request.headers['content-type'] ?? '(none)'} body=${
    request.payload === undefined ? '(none)' : JSON.stringify(cut(request.payload))
  }`;
}

/** Object.prototype is as it was before any request, and `{}` inherits no `polluted`. */
function prototypeUntouched(): boolean {
  const members = Object.getOwnPropertyNames(Object.prototype);
  return (
    members.length === objectMembers.length &&
    members.every((name, index) => name === objectMembers[index]) &&
    ({} as Record<string, unknown>).polluted === undefined
  );
}

/** The contract's error body: a message, a type and a code of the catalog with this status. */
function isContractError(error: Record<string, unknown> | undefined, status: number): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { message, type, code, param } = error;
  if (typeof message !== 'string' || typeof type !== 'string' || typeof code !== 'string') {
    return false;
  }
  if (param !== null && typeof param !== 'string') return false;
  const entry = errorCatalog[code as ErrorCode] as (typeof errorCatalog)[ErrorCode] | undefined;
  return entry !== undefined && entry.status === status && entry.type === type;
}

describe.each(allDialects)('fuzzing every operation on $name', (dialect) => {
  const seedOfDialect = seed + allDialects.indexOf(dialect);
  let harness: ChatHarness;
  const ids = new Map<string, string[]>();
  const hints = new Map<string, unknown[]>();
  /** Ids the fuzzed requests created, by path parameter: later operations use them too. */
  const created = new Map<string, string[]>();
  const parameterOfPrefix: Record<string, string> = {
    conv: 'conversation_id',
    kb: 'kb_id',
    doc: 'doc_id',
    agent: 'agent_id',
    pipe: 'pipeline_id',
    exec: 'execution_id',
    key: 'key_id',
  };
  const harvest = (value: unknown) => {
    if (typeof value === 'string') {
      const match = /^([a-z]+)_[A-Za-z0-9]{10,}$/.exec(value);
      const parameter = match === null ? undefined : parameterOfPrefix[match[1]!];
      if (parameter === undefined) return;
      const list = created.get(parameter) ?? [];
      if (!list.includes(value)) created.set(parameter, [...list, value].slice(-20));
    } else if (Array.isArray(value)) value.forEach(harvest);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(harvest);
  };
  /** Valid ids for a path parameter: the fixtures (never deleted) and what the fuzz created. */
  const validIds = (operation: Operation, parameter: string) => [
    ...(operation.method === 'DELETE' ? [] : (ids.get(parameter) ?? [])),
    ...(created.get(parameter) ?? []),
  ];

  beforeAll(async () => {
    harness = await harnessFor(dialect);
    const post = async (url: string, payload: unknown) => {
      const response = await harness.app.inject({
        method: 'POST',
        url,
        headers: bearer(harness.adminKey),
        payload: payload as Record<string, unknown>,
      });
      if (response.statusCode >= 300) throw new Error(`${url}: ${response.body}`);
      return response.json<Record<string, unknown>>();
    };
    // The account's own objects, so that a valid id lets a hostile body reach the service.
    const conversation = await post('/v1/chat', {
      user_id: 'fuzz-user',
      messages: [{ role: 'user', content: 'Hello fuzz' }],
    });
    const kb = await post('/v1/knowledge-bases', { name: 'fuzz' });
    const document = await post(`/v1/knowledge-bases/${String(kb.id)}/documents`, {
      title: 'Leave',
      content: 'Employees have 25 days of paid leave.',
    });
    const agent = await post('/v1/agents', {
      name: 'fuzz',
      agent_type: 'GenerationAgent',
      configuration: {},
    });
    const pipeline = await post('/v1/pipelines', {
      name: 'fuzz',
      stages: [{ name: 'write', agent_id: agent.id, input_mapping: { query: '$.input.q' } }],
    });
    const execution = await post(`/v1/agents/${String(agent.id)}/execute`, { query: 'x' });
    const key = await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] });
    ids.set('conversation_id', [String(conversation.conversation_id)]);
    ids.set('kb_id', [String(kb.id)]);
    ids.set('doc_id', [String(document.id)]);
    ids.set('agent_id', [String(agent.id)]);
    ids.set('pipeline_id', [String(pipeline.id)]);
    ids.set('execution_id', [String(execution.execution_id)]);
    ids.set('key_id', [key.id]);
    ids.set('model', ['fake-chat', 'fake-embed']);
    ids.set('template_name', ['standard_assistant', 'expert_assistant']);
    // Good values by field name, so that most requests pass the first check and reach deeper.
    const message = { role: 'user', content: 'Hello there' };
    // `$.input.model` resolves whenever a run's body names a model (a sampled field), so a mapping
    // the fuzz renamed (to `parameters.__proto__.polluted`, say) would reach the run's path setter.
    const stage = { name: 'write', agent_id: agent.id, input_mapping: { query: '$.input.model' } };
    for (const [name, values] of Object.entries({
      model: ['fake-chat', 'fake-backup', 'fake-embed'],
      model_id: ['fake-chat'],
      embedding_model: ['fake-embed'],
      user_id: ['fuzz-user'],
      conversation_id: [conversation.conversation_id],
      message_id: [conversation.message_id],
      agent_id: [agent.id],
      knowledge_base_ids: [[kb.id]],
      template_name: ['standard_assistant', 'expert_assistant'],
      role: ['user', 'system', 'assistant'],
      messages: [[message], [{ role: 'system', content: 'Be brief.' }, message]],
      stages: [[stage]],
      input_mapping: [{ query: '$.input.model' }, { query: '$.input.q' }],
      // Objects whose keys the client names, for the fuzz to rename to reserved names.
      output_mapping: [{ summary: '$.output.text' }],
      metadata: [{ team: 'a', nested: { owner: 'b' } }],
      variables: [{ domain: 'tax law', audience: 'beginners' }],
      parameters: [{ result_count: 2 }],
      name: ['fuzz object'],
      query: ['How many days of leave?'],
      agent_type: [
        'RetrievalAgent',
        'SummarizationAgent',
        'ReasoningAgent',
        'GenerationAgent',
        'WebAgent',
        'StructureAgent',
      ],
      configuration: [{}],
      content: [
        'Employees have 25 days of paid leave. Ask HR.',
        '# Leave\n\n25 days.',
        '<p>25 days</p>',
      ],
      data: [[{ region: 'north', sales: 3 }], 'region,sales\nnorth,3'],
      input: ['Hello', ['Hello', 'there']],
      scopes: [['models:read'], ['chat:write', 'agents:read']],
      tier: ['free', 'test'],
      limit: [1, 20],
      offset: [0, 1],
    })) {
      hints.set(name, values);
    }
  });
  afterAll(async () => {
    await harness.close();
  });

  it('covers the whole published API', () => {
    expect(operations.length).toBeGreaterThanOrEqual(50);
  });

  it.each(operations.map((operation) => [`${operation.method} ${operation.path}`, operation]))(
    '%s: no 5xx, and the contract error body on every 4xx',
    async (_name, operation) => {
      const arbitrary = requestFor(
        operation,
        // Deleting the fixtures would starve the operations after this one of valid ids.
        (parameter) => validIds(operation, parameter),
        bearer(harness.adminKey),
        hints,
      ).map((request) =>
        Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) }),
      );
      await check(
        fc.asyncProperty(arbitrary, async (request) => {
          const response = await harness.app.inject({
            method: request.method as 'GET',
            url: request.url,
            headers: request.headers,
            ...(request.payload === undefined ? {} : { payload: request.payload }),
          });
          // Each check is a plain comparison; an answer that fails one goes through `expect`, for
          // its message, and fails whatever `expect` says.
          const what = () =>
            `${describeRequest(request)} → ${response.statusCode} ${response.body.slice(0, 400)}`;
          if (response.statusCode >= 500) expect(response.statusCode, what()).toBeLessThan(500);
          // No key of any request reached a prototype (test/support/no-pollution.ts checks the
          // whole file at its end; this names the request).
          if (!prototypeUntouched()) {
            expect(Object.getOwnPropertyNames(Object.prototype), what()).toEqual(objectMembers);
            expect(({} as Record<string, unknown>).polluted, what()).toBeUndefined();
            throw new Error(`${what()}: a prototype changed`);
          }
          // A HEAD answer has no body to judge.
          if (request.method === 'HEAD') return;
          if (response.statusCode < 400) {
            if (
              request.method === 'POST' &&
              String(response.headers['content-type'] ?? '').includes('json')
            ) {
              harvest(response.json());
            }
            return;
          }
          const body = response.json<{ error?: Record<string, unknown> }>();
          if (isContractError(body.error, response.statusCode)) return;
          expect(body.error, what()).toMatchObject({
            message: expect.any(String),
            type: expect.any(String),
            code: expect.any(String),
          });
          const error = body.error!;
          expect(error.param === null || typeof error.param === 'string', what()).toBe(true);
          const entry = errorCatalog[error.code as ErrorCode] as
            | (typeof errorCatalog)[ErrorCode]
            | undefined;
          expect(entry, `${what()}: code not in the catalog`).toBeDefined();
          expect([entry!.status, entry!.type], what()).toEqual([response.statusCode, error.type]);
          throw new Error(`${what()}: not the contract's error body`);
        }),
        {
          numRuns: runs,
          seed: seedOfDialect,
          interruptAfterTimeLimit: 45_000,
          markInterruptAsFailure: false,
        },
      );
    },
    90_000,
  );

  it('answers paths the document does not list (and the docs assets) without a 5xx', async () => {
    const prefixes = [...new Set(operations.map((operation) => operation.path.split('/{')[0]!))];
    const arbitrary = strayRequest(prefixes).map((request) =>
      Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) }),
    );
    await check(
      fc.asyncProperty(arbitrary, async (request) => {
        const response = await harness.app.inject({
          method: request.method as 'GET',
          url: request.url,
          headers: bearer(harness.adminKey),
        });
        const what = () =>
          `${describeRequest(request)} → ${response.statusCode} ${response.body.slice(0, 300)}`;
        if (response.statusCode >= 500) expect(response.statusCode, what()).toBeLessThan(500);
        if (response.statusCode >= 400 && request.method !== 'HEAD') {
          const code = response.json<{ error?: { code?: unknown } }>().error?.code;
          if (typeof code !== 'string') expect(code, what()).toEqual(expect.any(String));
        }
      }),
      { numRuns: runs * 2, seed: seedOfDialect },
    );
  });

  it('reads back everything the fuzz stored, through every GET, without a 5xx', async () => {
    let reads = 0;
    for (const operation of operations.filter((candidate) => candidate.method === 'GET')) {
      const parameters = operation.parameters.filter((parameter) => parameter.in === 'path');
      const choices = parameters.map((parameter) => validIds(operation, parameter.name));
      if (choices.some((choice) => choice.length === 0)) continue;
      // Every id of the first path parameter, with the first valid id of any other.
      for (const id of choices[0] ?? ['']) {
        const url = parameters.reduce(
          (path, parameter, index) =>
            path.replace(
              `{${parameter.name}}`,
              encodeURIComponent(index === 0 ? id : choices[index]![0]!),
            ),
          operation.path,
        );
        const query = operation.path === '/v1/conversations' ? '?user_id=fuzz-user&status=all' : '';
        const response = await harness.app.inject({
          method: 'GET',
          url: `${url}${query}`,
          headers: bearer(harness.adminKey),
        });
        reads += 1;
        expect(
          response.statusCode,
          `GET ${url}${query} → ${response.body.slice(0, 400)}`,
        ).toBeLessThan(500);
      }
    }
    expect(reads).toBeGreaterThan(20);
  });

  it('runs pipelines whose names and paths carry reserved keys without changing a prototype', async () => {
    const agentId = ids.get('agent_id')![0]!;
    const segment = fc.constantFrom(
      'parameters',
      '__proto__',
      'constructor',
      'prototype',
      'polluted',
      'query',
      'x',
    );
    // The names that would reach a prototype through a path setter walking inherited properties,
    // often, and any other combination of the segments.
    const dotted = fc.oneof(
      fc.constantFrom(
        'parameters.__proto__.polluted',
        'parameters.constructor.prototype.polluted',
        'query',
      ),
      fc.array(segment, { minLength: 1, maxLength: 4 }).map((keys) => keys.join('.')),
    );
    const inputPath = fc.oneof(
      fc.constantFrom('$.input.polluted', '$.input.query'),
      fc
        .array(
          fc.oneof(
            segment.map((key) => `.${key}`),
            segment.map((key) => `["${key}"]`),
          ),
          {
            minLength: 1,
            maxLength: 3,
          },
        )
        .map((steps) => `$.input${steps.join('')}`),
    );
    const outputPath = fc.oneof(
      fc.constant('$.output.text'),
      segment.map((key) => `$.output.${key}`),
      segment.map((key) => `$.output["${key}"]`),
    );
    // Entries, turned into objects by defining keys: `__proto__` stays a key of the JSON text.
    const stageArbitrary = fc.record({
      name: fc.oneof(fc.constant('write'), segment),
      input: fc.array(fc.tuple(dotted, inputPath), { minLength: 1, maxLength: 3 }),
      output: fc.array(fc.tuple(fc.oneof(segment, dotted), outputPath), { maxLength: 2 }),
    });
    const inputs = { model: 'fake-chat', polluted: 'yes', query: 'q', x: { polluted: 'yes' } };
    const send = (method: 'POST', url: string, body: unknown) =>
      harness.app.inject({
        method,
        url,
        headers: { ...bearer(harness.adminKey), 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    await check(
      fc.asyncProperty(stageArbitrary, async (stage) => {
        const body = {
          name: 'reserved names',
          stages: [
            {
              name: stage.name,
              agent_id: agentId,
              input_mapping: Object.fromEntries(stage.input),
              output_mapping: Object.fromEntries(stage.output),
            },
          ],
        };
        const created = await send('POST', '/v1/pipelines', body);
        const what = `${JSON.stringify(body)} → ${created.statusCode} ${created.body.slice(0, 300)}`;
        expect(created.statusCode, what).toBeLessThan(500);
        if (created.statusCode === 201) {
          const id = created.json<{ id: string }>().id;
          const run = await send('POST', `/v1/pipelines/${id}/execute`, inputs);
          expect(run.statusCode, `${what}; run → ${run.body.slice(0, 300)}`).toBeLessThan(500);
        } else {
          expect(created.json<{ error: { code: string } }>().error.code, what).toBe(
            'invalid_parameter',
          );
        }
        expect(Object.getOwnPropertyNames(Object.prototype), what).toEqual(objectMembers);
        expect(({} as Record<string, unknown>).polluted, what).toBeUndefined();
      }),
      { numRuns: runs, seed: seedOfDialect },
    );
  });

  it('still answers after all that', async () => {
    const health = await harness.app.inject({ method: 'GET', url: '/v1/health' });
    expect(health.statusCode).toBe(200);
  });
});
