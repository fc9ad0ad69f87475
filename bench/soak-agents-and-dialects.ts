// The soak's traffic through tools and the other client dialects (bench/soak.ts runs it with the
// rest): a ToolAgent whose tools come from a real MCP server (the fake upstream calls the server's
// tool, then answers from its result), the platform's own MCP server at /mcp (the handshake,
// tools/list, tools/call of an exposed agent and of an exposed pipeline, a small batch), OpenAI's
// Responses API (plain and streamed, stored and not, a stored chain read back and deleted) and
// Anthropic's Messages API (plain and streamed).
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

/** What the traffic needs of the soak's HTTP client. */
export interface SoakHttp {
  readonly base: string;
  readonly key: string;
  /** A request expected to answer `expected`; its JSON object (empty when it is not one). */
  expect(
    expected: number,
    method: string,
    route: string,
    body?: unknown,
  ): Promise<Record<string, unknown>>;
}

/** The soak's seeded draws, so that every run sends the same traffic. */
export interface SoakDraws {
  readonly random: () => number;
  readonly sentence: (length?: number) => string;
}

/** What the set-up made for this traffic. */
export interface ToolFixtures {
  toolAgentId: string;
  /** The MCP tool names of the exposed GenerationAgent and of the exposed pipeline. */
  agentTool: string;
  pipelineTool: string;
}

type Traffic = (client: SoakHttp, fixtures: ToolFixtures) => Promise<void>;

const rows = [
  { region: 'North', amount: 120 },
  { region: 'South', amount: 80 },
];

/**
 * The agents this traffic uses, in the account of `client`: a ToolAgent over the MCP server at
 * `mcpUrl` (its `echo` tool only), a GenerationAgent exposed as an MCP tool, and `pipelineId`
 * exposed as one too.
 */
export async function setUpToolTraffic(
  client: SoakHttp,
  mcpUrl: string,
  pipelineId: string,
): Promise<ToolFixtures> {
  const toolAgent = await client.expect(201, 'POST', '/v1/agents', {
    name: 'soak tools',
    agent_type: 'ToolAgent',
    configuration: {
      instructions: 'Repeat the question with the echo tool, then answer.',
      tools: [{ type: 'mcp', name: 'bench', url: mcpUrl, allowed_tools: ['echo'] }],
    },
  });
  await client.expect(201, 'POST', '/v1/agents', {
    name: 'soak writer',
    description: 'Writes a line about the query.',
    agent_type: 'GenerationAgent',
    configuration: {},
    expose_as_tool: true,
  });
  await client.expect(200, 'PATCH', `/v1/pipelines/${pipelineId}`, { expose_as_tool: true });
  return { toolAgentId: String(toolAgent.id), agentTool: 'soak_writer', pipelineTool: 'soak' };
}

/** POST /mcp with one JSON-RPC message or a batch; the answer's JSON (null for a 202). */
async function mcpPost(client: SoakHttp, body: unknown): Promise<unknown> {
  const response = await fetch(`${client.base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${client.key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  if (response.status === 202) return null;
  if (response.status !== 200) {
    throw new Error(`/mcp answered ${response.status}: ${text.slice(0, 200)}`);
  }
  return JSON.parse(text) as unknown;
}

interface RpcAnswer {
  id?: unknown;
  result?: { tools?: Array<{ name: string }>; isError?: boolean; content?: unknown };
  error?: unknown;
}

/** The result of one JSON-RPC answer, refused when it is an error or a failed tool call. */
function resultOf(answer: unknown, what: string): NonNullable<RpcAnswer['result']> {
  const { result, error } = (answer ?? {}) as RpcAnswer;
  if (result === undefined || error !== undefined || result.isError === true) {
    throw new Error(`${what}: ${JSON.stringify(answer).slice(0, 200)}`);
  }
  return result;
}

const toolCall = (id: number, name: string, args: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** A streamed answer read to its end: its text, refused unless it answered 200. */
async function streamed(client: SoakHttp, route: string, body: unknown): Promise<string> {
  const response = await fetch(`${client.base}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${client.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...(body as object), stream: true }),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  if (response.status !== 200) {
    throw new Error(`${route} stream answered ${response.status}: ${text.slice(0, 200)}`);
  }
  return text;
}

/** The JSON of the `data:` line of the event of `type` in an event stream, or undefined. */
function eventData(text: string, type: string): Record<string, unknown> | undefined {
  const line = text
    .split('\n')
    .find((candidate) => candidate.startsWith('data: ') && candidate.includes(`"type":"${type}"`));
  return line === undefined ? undefined : (JSON.parse(line.slice(6)) as Record<string, unknown>);
}

export function toolTraffic(draws: SoakDraws): Record<string, Traffic> {
  const { random, sentence } = draws;
  let rpcId = 0;
  return {
    async 'tool-agent'(client, { toolAgentId }) {
      const run = await client.expect(200, 'POST', `/v1/agents/${toolAgentId}/execute`, {
        query: sentence(),
      });
      if (run.success !== true) throw new Error(`run ${JSON.stringify(run).slice(0, 200)}`);
      // The MCP server's tool was called: a completed tool step in the execution.
      const detail = await client.expect(200, 'GET', `/v1/executions/${String(run.execution_id)}`);
      const steps = (detail.execution as { steps?: Array<{ kind: string; status: string }> }).steps;
      if (!(steps ?? []).some((step) => step.kind === 'tool' && step.status === 'completed')) {
        throw new Error(`no completed tool step: ${JSON.stringify(steps).slice(0, 200)}`);
      }
    },
    async mcp(client, { agentTool, pipelineTool }) {
      resultOf(
        await mcpPost(client, {
          jsonrpc: '2.0',
          id: (rpcId += 1),
          method: 'initialize',
          params: {
            protocolVersion: LATEST_PROTOCOL_VERSION,
            capabilities: {},
            clientInfo: { name: 'soak', version: '1.0.0' },
          },
        }),
        'initialize',
      );
      await mcpPost(client, { jsonrpc: '2.0', method: 'notifications/initialized' });
      const listed = resultOf(
        await mcpPost(client, { jsonrpc: '2.0', id: (rpcId += 1), method: 'tools/list' }),
        'tools/list',
      );
      const names = (listed.tools ?? []).map((tool) => tool.name);
      if (!names.includes(agentTool) || !names.includes(pipelineTool)) {
        throw new Error(`tools/list: ${names.join(', ')}`);
      }
      resultOf(
        await mcpPost(client, toolCall((rpcId += 1), agentTool, { query: sentence() })),
        'tools/call agent',
      );
      resultOf(
        await mcpPost(client, toolCall((rpcId += 1), pipelineTool, { rows })),
        'tools/call pipeline',
      );
    },
    async 'mcp-batch'(client, { agentTool }) {
      const answers = await mcpPost(client, [
        { jsonrpc: '2.0', id: (rpcId += 1), method: 'ping' },
        { jsonrpc: '2.0', id: (rpcId += 1), method: 'tools/list' },
        toolCall((rpcId += 1), agentTool, { query: sentence() }),
        toolCall((rpcId += 1), agentTool, { query: sentence() }),
      ]);
      if (!Array.isArray(answers) || answers.length !== 4) {
        throw new Error(`batch: ${JSON.stringify(answers).slice(0, 200)}`);
      }
      for (const answer of answers) resultOf(answer, 'batch');
    },
    async responses(client) {
      const answer = await client.expect(200, 'POST', '/v1/responses', {
        model: 'bench-upstream',
        input: sentence(),
        store: false,
      });
      if (answer.status !== 'completed') throw new Error(`status ${String(answer.status)}`);
    },
    async 'responses-stored'(client) {
      // A stored chain of two, read back, then its conversation deleted (its responses with it).
      const first = await client.expect(200, 'POST', '/v1/responses', {
        model: 'bench-upstream',
        instructions: 'Be brief.',
        input: sentence(),
      });
      const second = await client.expect(200, 'POST', '/v1/responses', {
        model: 'bench-upstream',
        previous_response_id: first.id,
        input: sentence(),
      });
      await client.expect(200, 'GET', `/v1/responses/${String(second.id)}`);
      const conversation = (first.conversation as { id?: string } | null)?.id;
      if (conversation === undefined) throw new Error('a stored response without a conversation');
      await client.expect(200, 'DELETE', `/v1/conversations/${conversation}`);
    },
    async 'responses-stream'(client) {
      const store = random() < 0.5;
      const text = await streamed(client, '/v1/responses', {
        model: 'bench-upstream',
        input: sentence(15),
        store,
      });
      const completed = eventData(text, 'response.completed')?.response as
        | { conversation?: { id: string } | null }
        | undefined;
      if (completed === undefined) throw new Error('stream without response.completed');
      if (!store) return;
      const conversation = completed.conversation?.id;
      if (conversation === undefined) throw new Error('a stored response without a conversation');
      await client.expect(200, 'DELETE', `/v1/conversations/${conversation}`);
    },
    async messages(client) {
      const message = await client.expect(200, 'POST', '/v1/messages', {
        model: 'bench-upstream',
        max_tokens: 128,
        system: 'Be brief.',
        messages: [{ role: 'user', content: sentence() }],
      });
      if (message.type !== 'message') throw new Error(`type ${String(message.type)}`);
    },
    async 'messages-stream'(client) {
      const text = await streamed(client, '/v1/messages', {
        model: 'bench-upstream',
        max_tokens: 128,
        messages: [{ role: 'user', content: sentence(15) }],
      });
      if (eventData(text, 'message_stop') === undefined) throw new Error('no message_stop');
    },
  };
}
