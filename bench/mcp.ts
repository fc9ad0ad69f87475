// Benchmark: what the platform's MCP server costs per request, as CPU time of the service process
// (read from /proc before and after a fixed number of sequential requests), against the REST
// routes that do the same work, in the same run: `tools/list` against GET /v1/agents (both read
// the account's agents), `tools/call knowledge_search` against POST /v1/knowledge-bases/{id}/search
// (both search one knowledge base). The MCP server is stateless: a new SDK server and transport per
// request, its tools read from the database each time; the ratio says what that design costs.
// Rounds alternate between the four kinds so that a change in the machine's speed hits them alike.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { cpuMs, machine, startBuiltService, stopProcess, writeResults } from './support.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
const requestsPerRound = Number(process.env.BENCH_REQUESTS_PER_ROUND ?? 300);

const round3 = (value: number) => Math.round(value * 1000) / 1000;

export async function runMcpBenchmark(): Promise<void> {
  if (process.platform !== 'linux') throw new Error('the MCP benchmark reads /proc (Linux)');
  const directory = mkdtempSync(path.join(tmpdir(), 'bench-mcp-'));
  const adminKey = generateApiKey();
  const { server, base } = await startBuiltService(directory, adminKey);
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const mcpHeaders = { ...headers, accept: 'application/json, text/event-stream' };
  try {
    const post = async (url: string, body: unknown, extra = headers) => {
      const response = await fetch(`${base}${url}`, {
        method: 'POST',
        headers: extra,
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${url} answered ${response.status}: ${text}`);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const kb = await post('/v1/knowledge-bases', { name: 'Handbook' });
    await post(`/v1/knowledge-bases/${String(kb.id)}/documents`, {
      title: 'Refunds',
      content: 'Refunds are paid within 14 days of the return reaching the warehouse.',
    });
    for (let index = 0; index < 5; index += 1) {
      await post('/v1/agents', {
        name: `agent ${index}`,
        agent_type: 'StructureAgent',
        configuration: {},
        expose_as_tool: true,
      });
    }
    let rpcId = 0;
    const kinds: Record<string, () => Promise<void>> = {
      'GET /v1/agents': async () => {
        const response = await fetch(`${base}/v1/agents`, { headers });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`agents: ${response.status}`);
      },
      'MCP tools/list': async () => {
        rpcId += 1;
        const answer = await post(
          '/mcp',
          { jsonrpc: '2.0', id: rpcId, method: 'tools/list', params: {} },
          mcpHeaders,
        );
        if (answer.result === undefined) throw new Error(`tools/list: ${JSON.stringify(answer)}`);
      },
      'POST …/search': async () => {
        await post(`/v1/knowledge-bases/${String(kb.id)}/search`, { query: 'refund days' });
      },
      'MCP tools/call knowledge_search': async () => {
        rpcId += 1;
        const answer = await post(
          '/mcp',
          {
            jsonrpc: '2.0',
            id: rpcId,
            method: 'tools/call',
            params: { name: 'knowledge_search', arguments: { query: 'refund days' } },
          },
          mcpHeaders,
        );
        const result = answer.result as { isError?: boolean } | undefined;
        if (result === undefined || result.isError === true) {
          throw new Error(`tools/call: ${JSON.stringify(answer)}`);
        }
      },
    };
    const pid = server.pid!;
    const spent = new Map<string, number>(Object.keys(kinds).map((name) => [name, 0]));
    // Warm-up: every path compiled and cached before counting.
    for (const run of Object.values(kinds)) for (let index = 0; index < 50; index += 1) await run();
    for (let round = 0; round < rounds; round += 1) {
      for (const [name, run] of Object.entries(kinds)) {
        const before = cpuMs(pid);
        for (let index = 0; index < requestsPerRound; index += 1) await run();
        spent.set(name, spent.get(name)! + (cpuMs(pid) - before));
      }
    }
    const perRequest = (name: string) => spent.get(name)! / (rounds * requestsPerRound);
    const rows = Object.keys(kinds).map((name) => ({ name, cpu_ms: round3(perRequest(name)) }));
    const listRatio = perRequest('MCP tools/list') / perRequest('GET /v1/agents');
    const callRatio = perRequest('MCP tools/call knowledge_search') / perRequest('POST …/search');
    const when = new Date().toISOString();
    const info = machine();
    const result = {
      benchmark: 'mcp',
      when,
      machine: info,
      settings: {
        rounds,
        requests_per_round: requestsPerRound,
        database: 'sqlite',
        transport: 'HTTP, sequential',
      },
      cpu_ms_per_request: Object.fromEntries(rows.map((row) => [row.name, row.cpu_ms])),
      tools_list_vs_agents_list: round3(listRatio),
      tools_call_vs_search: round3(callRatio),
    };
    const markdown = `# MCP server benchmark — ${when}

\`npm run bench -- mcp\` · ${info.cpus} cores (${info.cpu_model}), Node ${info.node}; the built
service (\`dist/main.js\`) on SQLite, one request at a time over HTTP, ${rounds} rounds of
${requestsPerRound} requests per kind, alternating; CPU time of the service process from /proc.
The account has 5 agents exposed as tools and one knowledge base with one document.

| request | service CPU per request (ms) |
|---|---:|
${rows.map((row) => `| ${row.name} | ${row.cpu_ms} |`).join('\n')}

\`tools/list\` costs **${result.tools_list_vs_agents_list}×** GET /v1/agents; \`tools/call
knowledge_search\` costs **${result.tools_call_vs_search}×** the REST search — the price of a new
MCP server and transport per request (the stateless design).
`;
    const file = writeResults('mcp', result, markdown);
    process.stdout.write(`${markdown}\nwritten to ${file}\n`);
  } finally {
    await stopProcess(server);
    rmSync(directory, { recursive: true, force: true });
  }
}
