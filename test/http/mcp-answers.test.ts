// A ToolAgent calling an MCP server's tool whose answer is large, through the HTTP API on both
// databases, over the fake model upstream and real MCP servers (Streamable HTTP answering event
// streams, and JSON): a 30 MiB answer is read in the text threads (the loop's longest block stays
// within the budget of a small answer's run measured alongside), one past
// `tools.max_response_bytes` fails its call with the limit named and is not read on, and a 1 MiB
// answer reaches the model cut to `tools.max_result_chars`.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { allowedBlockMs, measureLoopBlock, remeasured } from '../support/loop-block.js';
import {
  prepareBigAnswer,
  startStreamableServer,
  type TestMcpServer,
} from '../support/mcp-test-servers.js';
import { bearer } from '../support/test-app.js';

const mebibyte = 1024 * 1024;
const maxResponseBytes = 32 * mebibyte;
const maxResultChars = 2000;

interface RunAnswer {
  success: boolean;
  status: string;
  execution_id: string;
}

interface Step {
  kind: string;
  name: string;
  status: string;
  output: { ok?: boolean; content?: string } | null;
}

const modes = [
  ['an event stream', false],
  ['JSON', true],
] as const;

describe.each(allDialects)('large answers of an MCP tool ($name)', remeasured, (dialect) => {
  let harness: ChatHarness;
  const servers = new Map<boolean, TestMcpServer>();
  const agents = new Map<boolean, string>();

  const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(harness.adminKey),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  beforeAll(async () => {
    for (const [, json] of modes) servers.set(json, await startStreamableServer({ json }));
    harness = await startChatHarness({
      dialect,
      overrides: {
        tools: {
          allowed_private_targets: ['127.0.0.1'],
          max_response_bytes: maxResponseBytes,
          max_result_chars: maxResultChars,
        },
      },
    });
    for (const [, json] of modes) {
      const created = await call('POST', '/v1/agents', {
        name: 'big reader',
        agent_type: 'ToolAgent',
        configuration: { tools: [{ type: 'mcp', name: 'data', url: servers.get(json)!.url }] },
      });
      expect(created.statusCode, created.body).toBe(201);
      agents.set(json, created.json<{ id: string }>().id);
    }
  });
  afterAll(async () => {
    await harness.close();
    for (const server of servers.values()) await server.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  /**
   * One run whose model calls `big` with `size` (bytes of small text items with `items`), then
   * answers; the tool message the model was given.
   */
  const run = async (json: boolean, size: number, items = false) => {
    harness.upstream.enqueueFor(
      'chat',
      {
        kind: 'reply',
        toolCalls: [{ id: 'b1', name: 'data__big', arguments: JSON.stringify({ size, items }) }],
      },
      { kind: 'reply', content: 'Read it.' },
    );
    const response = await call('POST', `/v1/agents/${agents.get(json)!}/execute`, {
      query: 'Read the data.',
    });
    const body = response.json<RunAnswer>();
    const chats = harness.upstream.requests.filter((request) => request.endpoint === 'chat');
    const last = chats.at(-1)!.body as { messages: Array<{ role: string; content: string }> };
    const told = last.messages.find((message) => message.role === 'tool')?.content ?? '';
    harness.upstream.reset();
    return { body, told, chats: chats.length };
  };

  const toolStep = async (executionId: string) => {
    const detail = await call('GET', `/v1/executions/${executionId}`);
    expect(detail.statusCode, detail.body).toBe(200);
    return detail
      .json<{ execution: { steps: Step[] } }>()
      .execution.steps.find((step) => step.kind === 'tool');
  };

  describe.each(modes)('answered as %s', (_name, json) => {
    it('reads a 30 MiB answer without holding the event loop, and tells the model', async () => {
      // Warm-up: the text threads start, and everything loads, on first use; the server's answer
      // is made ahead.
      await run(json, mebibyte);
      prepareBigAnswer(30 * mebibyte, true);
      const control = await measureLoopBlock(() => run(json, 1000));
      // 1.2 million small text items: parsed and checked by the SDK on the loop, 0.5–0.8 s.
      const hostile = await measureLoopBlock(() => run(json, 30 * mebibyte, true));
      console.log(`mcp 30 MiB (${_name})`, control.maxBlockMs, hostile.maxBlockMs, hostile.maxGcMs);
      expect(control.result.body.success).toBe(true);
      expect(hostile.result.body).toMatchObject({ success: true, status: 'completed' });
      expect(hostile.result.chats).toBe(2);
      expect(hostile.result.told.startsWith('x\nx\nx\n')).toBe(true);
      expect(hostile.result.told).toContain('[… cut: the answer had');
      expect(hostile.maxBlockMs).toBeLessThan(allowedBlockMs(control.maxBlockMs, hostile));
    });

    it('fails the call of an answer past tools.max_response_bytes, and stops reading it', async () => {
      const server = servers.get(json)!;
      const before = server.bigAnswers.length;
      const { body, told, chats } = await run(json, 48 * mebibyte);
      // The run goes on: the model is told, and answers.
      expect(body).toMatchObject({ success: true, status: 'completed' });
      expect(chats).toBe(2);
      expect(told).toContain(
        `answered more than ${maxResponseBytes} bytes when calling 'big'; the rest was not read (the limit is tools.max_response_bytes).`,
      );
      expect(await toolStep(body.execution_id)).toMatchObject({
        name: 'data__big',
        status: 'failed',
        output: { ok: false },
      });
      // The service closed the connection: the server could not write its whole answer.
      const answer = server.bigAnswers[before]!;
      await answer.ended;
      expect(answer.finished).toBe(false);
      expect(answer.written).toBeLessThan(answer.length);
    });

    it('gives the model a 1 MiB answer cut to tools.max_result_chars', async () => {
      const { body, told } = await run(json, mebibyte);
      expect(body).toMatchObject({ success: true, status: 'completed' });
      expect(told.startsWith('x'.repeat(maxResultChars - 100))).toBe(true);
      expect(told).toContain(`[… cut: the answer had ${mebibyte} characters, the first`);
      expect(told.length).toBeLessThanOrEqual(maxResultChars);
      expect(await toolStep(body.execution_id)).toMatchObject({
        status: 'completed',
        output: { ok: true },
      });
    });
  });
});
