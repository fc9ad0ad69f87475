// Pipelines through the HTTP API, on every dialect: data flowing through stages by path
// expressions, every save-time 400, a failing middle stage recorded exactly, async runs with their
// event stream, runs a stopped instance left running (queued ones continued, others failed),
// execution records, and updates.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { bearer, createAccount } from '../support/test-app.js';

interface RunJson {
  execution_id: string;
  status: string;
  pipeline_id: string;
  output: Record<string, unknown> | null;
  error?: string;
  metrics: { execution_time_ms: number; stages_completed: number; tokens_used: number };
}

interface StageJson {
  name: string;
  status: string;
  input: Record<string, unknown> | null;
  output: Record<string, unknown> | null;
  error?: string;
  attempts: number;
  started_at: string | null;
  completed_at: string | null;
}

interface ExecutionJson {
  id: string;
  pipeline_id: string;
  status: string;
  error?: string;
  input: Record<string, unknown>;
  output: Record<string, unknown> | null;
  stages: StageJson[];
}

interface ErrorJson {
  error: { code: string; param: string | null; message: string };
}

function parseEvents(body: string): Array<Record<string, unknown>> {
  return body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => JSON.parse(frame.slice('data: '.length)) as Record<string, unknown>);
}

const sales = ['region,amount', 'North,120', 'South,80', 'North,150', 'East,40'].join('\n');

describe.each(allDialects)('pipelines on $name', (dialect) => {
  let harness: ChatHarness;
  let tableAgent = '';
  let summaryAgent = '';
  let generationAgent = '';

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

  async function agent(body: Record<string, unknown>): Promise<string> {
    const response = await call('POST', '/v1/agents', { name: 'stage agent', ...body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ id: string }>().id;
  }

  async function pipeline(body: Record<string, unknown>): Promise<string> {
    const response = await call('POST', '/v1/pipelines', { name: 'flow', ...body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ pipeline_id: string }>().pipeline_id;
  }

  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
    tableAgent = await agent({ agent_type: 'StructureAgent', configuration: {} });
    summaryAgent = await agent({
      agent_type: 'SummarizationAgent',
      configuration: { method: 'extractive' },
    });
    generationAgent = await agent({
      agent_type: 'GenerationAgent',
      configuration: {},
      model_id: 'fake-slow',
    });
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  /** Three stages: totals per region → sort → a sentence about the top region. */
  const threeStages = () => [
    {
      name: 'totals',
      agent_id: tableAgent,
      input_mapping: { data: '$.input.rows', 'parameters.operations': '$.input.grouping' },
      output_mapping: { top_region: '$.output.rows[0].region' },
    },
    {
      name: 'sorted',
      agent_id: tableAgent,
      input_mapping: {
        data: '$.stages.totals.rows',
        'parameters.operations': '$.input.sorting',
      },
      output_mapping: { leader: '$.output.rows[0]' },
    },
    {
      name: 'report',
      agent_id: generationAgent,
      input_mapping: { query: '$.stages.sorted.markdown', 'parameters.max_words': '$.input.words' },
    },
  ];

  const runInputs = {
    rows: sales,
    grouping: [
      {
        type: 'group_by',
        columns: ['region'],
        aggregates: [{ function: 'sum', column: 'amount', as: 'total' }],
      },
    ],
    sorting: [{ type: 'sort', by: [{ column: 'total', direction: 'desc' }] }],
    words: 12,
  };

  it('runs data through three stages by path expressions and records every stage', async () => {
    const id = await pipeline({ stages: threeStages() });
    harness.upstream.enqueue({ kind: 'reply', content: 'North leads with 270.' });
    const response = await call('POST', `/v1/pipelines/${id}/execute`, runInputs);
    expect(response.statusCode, response.body).toBe(200);
    const run = response.json<RunJson>();
    expect(run).toMatchObject({
      status: 'completed',
      pipeline_id: id,
      output: { text: 'North leads with 270.' },
      metrics: { stages_completed: 3 },
    });
    expect(run.metrics.tokens_used).toBeGreaterThan(0);
    // The third stage received the second's Markdown, and the run's word budget as a parameter.
    const prompt = (harness.upstream.requests[0]!.body as { messages: Array<{ content: string }> })
      .messages;
    expect(prompt[1]!.content).toMatch(/^\| region \| total \|/);
    expect(prompt[1]!.content).toMatch(/\| North +\| +270 \|/);
    expect(prompt[0]!.content).toContain('about 12 words');

    const detail = (await call('GET', `/v1/executions/${run.execution_id}`)).json<{
      execution: ExecutionJson;
    }>().execution;
    expect(detail).toMatchObject({
      id: run.execution_id,
      pipeline_id: id,
      status: 'completed',
      input: runInputs,
    });
    expect(detail.stages.map((stage) => [stage.name, stage.status, stage.attempts])).toEqual([
      ['totals', 'completed', 1],
      ['sorted', 'completed', 1],
      ['report', 'completed', 1],
    ]);
    expect(detail.stages[0]!.output).toMatchObject({ top_region: 'North' });
    expect(detail.stages[1]!.input).toMatchObject({
      parameters: { operations: runInputs.sorting },
    });
    expect(detail.stages[1]!.output).toMatchObject({ leader: { region: 'North', total: 270 } });
    expect(detail.stages[2]!.input).toMatchObject({ parameters: { max_words: 12 } });
    for (const stage of detail.stages) {
      expect(Date.parse(stage.completed_at!)).toBeGreaterThanOrEqual(Date.parse(stage.started_at!));
    }
  });

  it.each([
    [
      (stages: ReturnType<typeof threeStages>) => [{ ...stages[0]!, agent_id: 'agent_missing' }],
      'stages[0].agent_id',
    ],
    [
      (stages: ReturnType<typeof threeStages>) => [stages[0]!, { ...stages[1]!, name: 'totals' }],
      'stages[1].name',
    ],
    [
      (stages: ReturnType<typeof threeStages>) => [
        { ...stages[0]!, input_mapping: { data: 'input.rows' } },
      ],
      'stages[0].input_mapping.data',
    ],
    [
      (stages: ReturnType<typeof threeStages>) => [
        { ...stages[0]!, input_mapping: { data: '$.stages.sorted.rows' } },
        stages[1]!,
      ],
      'stages[0].input_mapping.data',
    ],
    [
      (stages: ReturnType<typeof threeStages>) => [
        { ...stages[0]!, input_mapping: { data: '$.stages.totals.rows' } },
      ],
      'stages[0].input_mapping.data',
    ],
    [
      (stages: ReturnType<typeof threeStages>) => [
        { ...stages[0]!, input_mapping: { colour: '$.input.x' } },
      ],
      'stages[0].input_mapping.colour',
    ],
    [
      (stages: ReturnType<typeof threeStages>) => [
        { ...stages[0]!, input_mapping: { data: '$.output.rows' } },
      ],
      'stages[0].input_mapping.data',
    ],
    [
      (stages: ReturnType<typeof threeStages>) => [
        { ...stages[0]!, output_mapping: { top: '$.input.rows' } },
      ],
      'stages[0].output_mapping.top',
    ],
    [
      (stages: ReturnType<typeof threeStages>) => [
        { ...stages[0]!, output_mapping: { top: '$.output' } },
      ],
      'stages[0].output_mapping.top',
    ],
    [
      (stages: ReturnType<typeof threeStages>) => [{ ...stages[0]!, retries: 9 }],
      'stages[0].retries',
    ],
  ])('refuses at save time (%#), naming %s', async (change, param) => {
    const response = await call('POST', '/v1/pipelines', {
      name: 'bad',
      stages: change(threeStages()),
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json<ErrorJson>().error.param).toBe(param);
  });

  it("refuses another account's private agent as a stage, and accepts a public one", async () => {
    const other = await createAccount(harness.app, harness.adminKey, `pipes-${dialect.name}`);
    const stage = {
      name: 'only',
      agent_id: summaryAgent,
      input_mapping: { query: '$.input.text' },
    };
    const refused = await call(
      'POST',
      '/v1/pipelines',
      { name: 'x', stages: [stage] },
      other.admin_key,
    );
    expect(refused.json<ErrorJson>().error.param).toBe('stages[0].agent_id');
    const publicAgent = await agent({
      agent_type: 'SummarizationAgent',
      configuration: { method: 'extractive' },
      is_public: true,
    });
    const accepted = await call(
      'POST',
      '/v1/pipelines',
      { name: 'x', stages: [{ ...stage, agent_id: publicAgent }] },
      other.admin_key,
    );
    expect(accepted.statusCode).toBe(201);
    // And the pipeline itself is invisible to the first account.
    const id = accepted.json<{ pipeline_id: string }>().pipeline_id;
    expect((await call('GET', `/v1/pipelines/${id}`)).statusCode).toBe(404);
  });

  it('stops at a failing middle stage: failed, naming stage and cause, later stages skipped', async () => {
    const id = await pipeline({
      stages: [
        threeStages()[0]!,
        {
          name: 'summarize',
          agent_id: generationAgent,
          input_mapping: { query: '$.stages.totals.markdown' },
          retries: 1,
        },
        { name: 'after', agent_id: tableAgent, input_mapping: { data: '$.stages.totals.rows' } },
      ],
    });
    harness.upstream.enqueue({ kind: 'error', status: 503 }, { kind: 'error', status: 503 });
    const run = (await call('POST', `/v1/pipelines/${id}/execute`, runInputs)).json<RunJson>();
    expect(run).toMatchObject({ status: 'failed', output: null, metrics: { stages_completed: 1 } });
    expect(run.error).toMatch(/^stage 'summarize' failed: .*503.*\(after 2 attempts\)$/);
    expect(harness.upstream.requests).toHaveLength(2);
    const detail = (await call('GET', `/v1/executions/${run.execution_id}`)).json<{
      execution: ExecutionJson;
    }>().execution;
    expect(detail.status).toBe('failed');
    expect(detail.error).toBe(run.error);
    expect(detail.stages.map((stage) => [stage.name, stage.status])).toEqual([
      ['totals', 'completed'],
      ['summarize', 'failed'],
      ['after', 'skipped'],
    ]);
    expect(detail.stages[1]).toMatchObject({ attempts: 2, error: expect.stringContaining('503') });
    expect(detail.stages[2]).toMatchObject({ started_at: null, input: null, output: null });
  });

  it('fails, naming the path, when a stage input resolves to nothing', async () => {
    const id = await pipeline({ stages: threeStages() });
    const { rows: _rows, ...withoutRows } = runInputs;
    const run = (await call('POST', `/v1/pipelines/${id}/execute`, withoutRows)).json<RunJson>();
    expect(run).toMatchObject({ status: 'failed', metrics: { stages_completed: 0 } });
    expect(run.error).toBe(
      "stage 'totals' failed: input 'data' resolves to nothing: $.input.rows (the run has no input 'rows')",
    );
  });

  it('runs asynchronously: 202 at once, then events stage by stage and the end', async () => {
    const id = await pipeline({ stages: threeStages() });
    harness.upstream.enqueue({ kind: 'delay', ms: 120, then: { kind: 'reply', content: 'Done.' } });
    const started = await call('POST', `/v1/pipelines/${id}/execute`, {
      ...runInputs,
      async: true,
    });
    expect(started.statusCode).toBe(202);
    const run = started.json<RunJson>();
    expect(run).toMatchObject({
      status: 'running',
      output: null,
      metrics: { stages_completed: 0 },
    });
    const events = parseEvents(
      (await call('GET', `/v1/executions/${run.execution_id}/events`)).body,
    );
    expect(
      events.map(
        (event) =>
          `${event.type as string}${typeof event.stage === 'string' ? ` ${event.stage}` : ''}`,
      ),
    ).toEqual([
      'stage-start totals',
      'stage-end totals',
      'stage-start sorted',
      'stage-end sorted',
      'stage-start report',
      'stage-end report',
      'execution-end',
    ]);
    expect(events[events.length - 1]).toMatchObject({
      status: 'completed',
      output: { text: 'Done.' },
      metrics: { stages_completed: 3 },
    });
    // A finished execution replays the same events at once.
    const replay = parseEvents(
      (await call('GET', `/v1/executions/${run.execution_id}/events`)).body,
    );
    expect(replay.map((event) => event.type)).toEqual(events.map((event) => event.type));
    const detail = (await call('GET', `/v1/executions/${run.execution_id}`)).json<{
      execution: ExecutionJson;
    }>().execution;
    expect(detail.status).toBe('completed');
  });

  /** The rows of `executionId` put back as an instance that crashed mid-run leaves them. */
  async function leftByCrashedInstance(
    executionId: string,
    stages: Array<{ status: string; output?: Record<string, unknown> }>,
  ): Promise<void> {
    const { db } = harness.services.storage;
    const old = new Date(Date.now() - 10 * 60_000).toISOString();
    const crashed = `inst_crashed_${executionId}`;
    await db
      .insertInto('instances')
      .values({ id: crashed, started_at: old, heartbeat_at: old })
      .execute();
    await db
      .updateTable('executions')
      .set({
        status: 'running',
        completed_at: null,
        error: null,
        output: null,
        instance_id: crashed,
      })
      .where('id', '=', executionId)
      .execute();
    for (const [position, stage] of stages.entries()) {
      await db
        .updateTable('execution_stages')
        .set({
          status: stage.status as 'completed' | 'running' | 'pending',
          ...(stage.output === undefined ? {} : { output: JSON.stringify(stage.output) }),
          ...(stage.status === 'completed' ? {} : { completed_at: null }),
        })
        .where('execution_id', '=', executionId)
        .where('position', '=', position)
        .execute();
    }
  }

  it('continues an async run a stopped instance left running, reading completed stages back', async () => {
    const id = await pipeline({ stages: threeStages() });
    harness.upstream.enqueue({ kind: 'reply', content: 'First.' });
    const started = await call('POST', `/v1/pipelines/${id}/execute`, {
      ...runInputs,
      async: true,
    });
    const executionId = started.json<RunJson>().execution_id;
    await call('GET', `/v1/executions/${executionId}/events`);
    const before = (await call('GET', `/v1/executions/${executionId}`)).json<{
      execution: ExecutionJson;
    }>().execution;
    expect(before.status).toBe('completed');
    // Crashed in stage 'report', after 'sorted' completed — with an output that recomputing
    // 'sorted' could never produce, so only reading the record back can put it in the prompt.
    await leftByCrashedInstance(executionId, [
      { status: 'completed' },
      { status: 'completed', output: { markdown: 'the table as recorded before the crash' } },
      { status: 'running' },
    ]);
    harness.upstream.reset();
    harness.upstream.enqueue({ kind: 'reply', content: 'Resumed.' });

    expect(await harness.services.instances.recover()).toBe(1);
    const events = parseEvents((await call('GET', `/v1/executions/${executionId}/events`)).body);
    expect(events.at(-1)).toMatchObject({
      type: 'execution-end',
      status: 'completed',
      output: { text: 'Resumed.' },
      metrics: { stages_completed: 3 },
    });
    // Only the interrupted stage ran again: one upstream call, fed the recorded output.
    expect(harness.upstream.requests).toHaveLength(1);
    expect(JSON.stringify(harness.upstream.requests[0]!.body)).toContain(
      'the table as recorded before the crash',
    );
    const after = (await call('GET', `/v1/executions/${executionId}`)).json<{
      execution: ExecutionJson;
    }>().execution;
    expect(after.stages.map((stage) => stage.status)).toEqual([
      'completed',
      'completed',
      'completed',
    ]);
    expect(after.stages[0]!.completed_at).toBe(before.stages[0]!.completed_at);
    expect(after.stages[1]!.completed_at).toBe(before.stages[1]!.completed_at);
    expect(await harness.services.instances.recover()).toBe(0);
  });

  it('marks synchronous runs left running by a stopped instance as failed, interrupted', async () => {
    const id = await pipeline({ stages: threeStages() });
    const run = (await call('POST', `/v1/pipelines/${id}/execute`, runInputs)).json<RunJson>();
    expect(run.status).toBe('completed');
    await leftByCrashedInstance(run.execution_id, [
      { status: 'completed' },
      { status: 'running' },
      { status: 'pending' },
    ]);

    expect(await harness.services.instances.recover()).toBe(1);
    const detail = (await call('GET', `/v1/executions/${run.execution_id}`)).json<{
      execution: ExecutionJson;
    }>().execution;
    expect(detail.status).toBe('failed');
    expect(detail.error).toMatch(/^interrupted/);
    expect(detail.stages.map((stage) => stage.status)).toEqual(['completed', 'failed', 'skipped']);
    expect(await harness.services.instances.recover()).toBe(0);
  });

  it('lists executions newest first with totals, and reads one with its stages', async () => {
    const id = await pipeline({ stages: threeStages().slice(0, 2) });
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      ids.push(
        (await call('POST', `/v1/pipelines/${id}/execute`, runInputs)).json<RunJson>().execution_id,
      );
    }
    const page = (await call('GET', `/v1/pipelines/${id}/executions?limit=2`)).json<{
      executions: Array<{ id: string; status: string; pipeline_id: string }>;
      total: number;
    }>();
    expect(page.total).toBe(3);
    expect(page.executions.map((execution) => execution.id)).toEqual([ids[2], ids[1]]);
    expect(page.executions[0]).toMatchObject({ status: 'completed', pipeline_id: id });
    const rest = (await call('GET', `/v1/pipelines/${id}/executions?limit=2&offset=2`)).json<{
      executions: Array<{ id: string }>;
    }>();
    expect(rest.executions.map((execution) => execution.id)).toEqual([ids[0]]);
  });

  it('accepts the minimal layout nodes {id, position} and {id, x, y}, stored in one shape', async () => {
    const layout = {
      nodes: [
        { id: 'a', position: { x: 0, y: 10 } },
        { id: 'b', x: 260, y: 10 },
        { id: 'c', x: 520, y: 10, type: 'output', data: { label: 'Report' }, width: 150 },
      ],
      edges: [
        { source: 'a', target: 'b' },
        { id: 'mine', source: 'b', target: 'c', animated: true },
      ],
      viewport: { x: 0, y: 0, zoom: 1 },
    };
    const created = await call('POST', '/v1/pipelines', {
      name: 'drawn',
      stages: threeStages(),
      visual_layout: layout,
    });
    expect(created.statusCode, created.body).toBe(201);
    const stored = {
      nodes: [
        { id: 'a', position: { x: 0, y: 10 } },
        { id: 'b', position: { x: 260, y: 10 } },
        {
          id: 'c',
          position: { x: 520, y: 10 },
          type: 'output',
          data: { label: 'Report' },
          width: 150,
        },
      ],
      edges: [
        { id: 'edge_a_b', source: 'a', target: 'b' },
        { id: 'mine', source: 'b', target: 'c', animated: true },
      ],
      viewport: { x: 0, y: 0, zoom: 1 },
    };
    expect(created.json<{ visual_layout: unknown }>().visual_layout).toEqual(stored);
    const id = created.json<{ pipeline_id: string }>().pipeline_id;
    const read = (await call('GET', `/v1/pipelines/${id}`)).json<{
      pipeline: { visual_layout: unknown };
    }>();
    expect(read.pipeline.visual_layout).toEqual(stored);
    // Edges are optional; PATCH takes the short form too.
    const patched = await call('PATCH', `/v1/pipelines/${id}`, {
      visual_layout: { nodes: [{ id: 'only', x: 1.5, y: -2 }] },
    });
    expect(patched.json<{ visual_layout: unknown }>().visual_layout).toEqual({
      nodes: [{ id: 'only', position: { x: 1.5, y: -2 } }],
      edges: [],
    });
  });

  it.each([
    [{ nodes: [{ id: 'a' }] }, 'visual_layout.nodes[0].position', 'missing_parameter'],
    [{ nodes: [{ id: 'a', x: 1 }] }, 'visual_layout.nodes[0].position', 'missing_parameter'],
    [
      { nodes: [{ id: 'a', x: 0, y: 0 }], edges: [{ source: 'a', target: 'nowhere' }] },
      'visual_layout.edges[0].target',
      'invalid_parameter',
    ],
    [{ nodes: [{ id: 'a', x: 'left', y: 0 }] }, 'visual_layout.nodes[0].x', 'invalid_parameter'],
  ])('refuses the layout %j naming %s', async (layout, param, code) => {
    const response = await call('POST', '/v1/pipelines', { name: 'bad', visual_layout: layout });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json<ErrorJson>().error).toMatchObject({ param, code });
  });

  it('reads stages inside configuration, replaces them in order on update, and lays them out', async () => {
    const created = await call('POST', '/v1/pipelines', {
      name: 'editable',
      description: 'v1',
      stages: threeStages(),
    });
    const body = created.json<{
      pipeline_id: string;
      stages: Array<{ id: string; name: string }>;
      visual_layout: { nodes: Array<{ id: string }>; edges: unknown[] };
    }>();
    expect(
      body.stages.map((stage) => stage.id).every((stageId) => stageId.startsWith('stage_')),
    ).toBe(true);
    expect(body.visual_layout.nodes.map((node) => node.id)).toEqual(
      body.stages.map((stage) => stage.id),
    );
    expect(body.visual_layout.edges).toHaveLength(2);
    const read = (await call('GET', `/v1/pipelines/${body.pipeline_id}`)).json<{
      pipeline: { configuration: { stages: Array<{ name: string }> } };
    }>();
    expect(read.pipeline.configuration.stages.map((stage) => stage.name)).toEqual([
      'totals',
      'sorted',
      'report',
    ]);

    const [totals, sorted] = threeStages();
    const reordered = [
      { ...totals!, name: 'totals' },
      { name: 'again', agent_id: tableAgent, input_mapping: { data: '$.stages.totals.rows' } },
      sorted!,
    ];
    const layout = {
      nodes: [{ id: 'n1', position: { x: 5, y: 6 }, data: { label: 'mine' } }],
      edges: [],
    };
    const updated = await call('PATCH', `/v1/pipelines/${body.pipeline_id}`, {
      stages: reordered,
      visual_layout: layout,
    });
    expect(updated.statusCode, updated.body).toBe(200);
    const after = updated.json<{
      description: string;
      stages: Array<{ id: string; name: string }>;
      visual_layout: unknown;
    }>();
    expect(after.description).toBe('v1');
    expect(after.stages.map((stage) => stage.name)).toEqual(['totals', 'again', 'sorted']);
    expect(after.stages[0]!.id).toBe(body.stages[0]!.id);
    expect(after.visual_layout).toEqual(layout);
    const invalid = await call('PUT', `/v1/pipelines/${body.pipeline_id}`, {
      stages: [
        { name: 'a', agent_id: tableAgent, input_mapping: { data: '$.stages.b.rows' } },
        { name: 'b', agent_id: tableAgent },
      ],
    });
    expect(invalid.json<ErrorJson>().error.param).toBe('stages[0].input_mapping.data');
    const deleted = await call('DELETE', `/v1/pipelines/${body.pipeline_id}`);
    expect(deleted.json()).toEqual({
      success: true,
      message: expect.any(String),
      id: body.pipeline_id,
    });
    expect((await call('GET', `/v1/pipelines/${body.pipeline_id}`)).statusCode).toBe(404);
    const list = (await call('GET', '/v1/pipelines')).json<{ pipelines: Array<{ id: string }> }>();
    expect(list.pipelines.map((entry) => entry.id)).not.toContain(body.pipeline_id);
  });
});
