// An agent input of the wrong kind (an object, a number where `query` takes text) is the client's
// 400 or a stage failed with `invalid_parameter`, never an agent crashing on it: on the agent
// route, on a pipeline run whose input feeds a stage (refused at the start, naming the input and
// the mapping, nothing recorded), on a stage fed by an earlier stage's output, and through the
// platform's MCP server; nothing is logged as an unexpected failure. On both dialects.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer } from '../support/test-app.js';

interface ErrorJson {
  error: { code: string; type: string; param: string | null; message: string };
}

interface RunJson {
  execution_id: string;
  status: string;
  error?: string;
}

interface StageJson {
  name: string;
  status: string;
  error?: string;
  error_detail?: { code: string; param?: string; path?: string; message: string };
}

const sales = ['region,amount', 'North,120', 'South,80'].join('\n');

describe.each(allDialects)('agent inputs of the wrong kind on $name', (dialect) => {
  let harness: ChatHarness;
  let origin = '';
  /** What the service logged at level error or above, one JSON line each. */
  const logged: string[] = [];
  let summaryAgent = '';
  let tableAgent = '';

  const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(harness.adminKey),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  async function created(url: string, body: Record<string, unknown>): Promise<string> {
    const response = await call('POST', url, body);
    expect(response.statusCode, response.body).toBe(201);
    const json = response.json<{ id?: string; pipeline_id?: string }>();
    return json.pipeline_id ?? json.id ?? '';
  }

  async function executionsOf(pipelineId: string): Promise<number> {
    const listed = await call('GET', `/v1/pipelines/${pipelineId}/executions`);
    expect(listed.statusCode, listed.body).toBe(200);
    return listed.json<{ total: number }>().total;
  }

  function nothingLoggedAsUnexpected(): void {
    expect(logged.join('\n')).not.toMatch(/failed unexpectedly|is not a function/);
    expect(logged).toEqual([]);
  }

  beforeAll(async () => {
    const logger = pino({ level: 'error' }, { write: (line: string) => logged.push(line) });
    harness = await startChatHarness({ dialect, logger });
    await harness.app.listen({ host: '127.0.0.1', port: 0 });
    const address = harness.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    origin = `http://127.0.0.1:${address.port}`;
    summaryAgent = await created('/v1/agents', {
      name: 'summary',
      agent_type: 'SummarizationAgent',
      configuration: { method: 'extractive' },
    });
    tableAgent = await created('/v1/agents', {
      name: 'table',
      agent_type: 'StructureAgent',
      configuration: {},
    });
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    logged.length = 0;
  });

  it.each([
    [{ query: { a: 1 } }, 'query'],
    [{ query: 42 }, 'query'],
    [{ query: 'fine', urls: ['https://example.com', 7] }, 'urls/1'],
    [{ query: 'fine', parameters: ['x'] }, 'parameters'],
  ])('refuses agent execution input %j with a 400 naming the field', async (body, param) => {
    const response = await call('POST', `/v1/agents/${summaryAgent}/execute`, body);
    expect(response.statusCode, response.body).toBe(400);
    const error = response.json<ErrorJson>().error;
    expect(error.code).toBe('invalid_parameter');
    expect(error.param?.replace(/\[(\d+)\]/g, '/$1')).toBe(param);
    nothingLoggedAsUnexpected();
  });

  describe('a value straight from the run input', () => {
    let topicPipeline = '';
    let rowsPipeline = '';

    beforeAll(async () => {
      topicPipeline = await created('/v1/pipelines', {
        name: 'topic',
        stages: [
          { name: 'summarise', agent_id: summaryAgent, input_mapping: { query: '$.input.topic' } },
        ],
        expose_as_tool: true,
      });
      rowsPipeline = await created('/v1/pipelines', {
        name: 'rows',
        stages: [{ name: 'totals', agent_id: tableAgent, input_mapping: { data: '$.input.rows' } }],
      });
    });

    it('runs the pipeline with text (the control)', async () => {
      const run = await call('POST', `/v1/pipelines/${topicPipeline}/execute`, {
        topic: 'Quokkas live on Rottnest Island. They are small marsupials.',
      });
      expect(run.statusCode, run.body).toBe(200);
      expect(run.json<RunJson>().status).toBe('completed');
    });

    it.each([
      [{ a: 1 }, 'an object'],
      [42, 'a number'],
      [true, 'a boolean'],
      [null, 'null'],
      [['a'], 'a list'],
    ])(
      'refuses topic %j before anything is recorded, sync and async, naming the input and the mapping',
      async (topic, kind) => {
        const before = await executionsOf(topicPipeline);
        for (const extra of [{}, { async: true }]) {
          const response = await call('POST', `/v1/pipelines/${topicPipeline}/execute`, {
            topic,
            ...extra,
          });
          expect(response.statusCode, response.body).toBe(400);
          const error = response.json<ErrorJson>().error;
          expect(error).toMatchObject({ code: 'invalid_parameter', param: 'topic' });
          expect(error.message).toBe(
            `The input 'topic' does not fit stage 'summarise': input_mapping.query ← $.input.topic is ${kind}; the agent's 'query' takes text.`,
          );
        }
        expect(await executionsOf(topicPipeline)).toBe(before);
        nothingLoggedAsUnexpected();
      },
    );

    it("refuses data of a kind a StructureAgent does not read, naming the type's kind", async () => {
      const response = await call('POST', `/v1/pipelines/${rowsPipeline}/execute`, { rows: 5 });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json<ErrorJson>().error).toMatchObject({
        param: 'rows',
        message:
          "The input 'rows' does not fit stage 'totals': input_mapping.data ← $.input.rows is a number; the agent's 'data' takes CSV text or a list of objects.",
      });
      const control = await call('POST', `/v1/pipelines/${rowsPipeline}/execute`, { rows: sales });
      expect(control.json<RunJson>().status).toBe('completed');
    });

    it('answers an MCP tools/call of the pipeline as a tool error naming the input, recording nothing', async () => {
      const before = await executionsOf(topicPipeline);
      const client = new Client({ name: 'input-kinds-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
          requestInit: { headers: bearer(harness.adminKey) },
        }),
      );
      try {
        const result = await client.callTool({ name: 'topic', arguments: { topic: { a: 1 } } });
        expect(result.isError).toBe(true);
        const text = (result.content as Array<{ text: string }>)[0]!.text;
        expect(text).toContain(
          "input_mapping.query ← $.input.topic is an object; the agent's 'query' takes text",
        );
        expect(text).toContain("(argument 'topic')");
      } finally {
        await client.close();
      }
      expect(await executionsOf(topicPipeline)).toBe(before);
      nothingLoggedAsUnexpected();
    });
  });

  describe("a value from an earlier stage's output", () => {
    let chained = '';

    beforeAll(async () => {
      chained = await created('/v1/pipelines', {
        name: 'chained',
        expose_as_tool: true,
        stages: [
          { name: 'totals', agent_id: tableAgent, input_mapping: { data: '$.input.rows' } },
          {
            name: 'summarise',
            agent_id: summaryAgent,
            input_mapping: { query: '$.stages.totals.rows[0]' },
          },
        ],
      });
    });

    it('fails the stage with invalid_parameter naming the mapping, sync and async', async () => {
      const message =
        "input_mapping.query ← $.stages.totals.rows[0] is an object; the agent's 'query' takes text";
      const sync = await call('POST', `/v1/pipelines/${chained}/execute`, { rows: sales });
      expect(sync.statusCode, sync.body).toBe(200);
      const queued = await call('POST', `/v1/pipelines/${chained}/execute`, {
        rows: sales,
        async: true,
      });
      expect(queued.statusCode, queued.body).toBe(202);
      const queuedId = queued.json<RunJson>().execution_id;
      // The event stream ends when the run does.
      await call('GET', `/v1/executions/${queuedId}/events`);
      for (const executionId of [sync.json<RunJson>().execution_id, queuedId]) {
        const detail = (await call('GET', `/v1/executions/${executionId}`)).json<{
          execution: { status: string; error?: string; stages: StageJson[] };
        }>().execution;
        expect(detail.status).toBe('failed');
        expect(detail.error).toBe(`stage 'summarise' failed: ${message}`);
        expect(detail.stages.map((stage) => [stage.name, stage.status])).toEqual([
          ['totals', 'completed'],
          ['summarise', 'failed'],
        ]);
        expect(detail.stages[1]!.error_detail).toMatchObject({
          code: 'invalid_parameter',
          param: 'input_mapping.query',
          path: '$.stages.totals.rows[0]',
          message,
        });
        expect(JSON.stringify(detail)).not.toContain('internal_error');
      }
      nothingLoggedAsUnexpected();
    });

    it('answers an MCP tools/call of that pipeline as a failed run naming the mapping', async () => {
      const client = new Client({ name: 'input-kinds-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
          requestInit: { headers: bearer(harness.adminKey) },
        }),
      );
      try {
        const result = await client.callTool({ name: 'chained', arguments: { rows: sales } });
        expect(result.isError).toBe(true);
        const body = JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as {
          status: string;
          error: string;
        };
        expect(body.status).toBe('failed');
        expect(body.error).toContain('input_mapping.query ← $.stages.totals.rows[0] is an object');
      } finally {
        await client.close();
      }
      nothingLoggedAsUnexpected();
    });
  });
});
