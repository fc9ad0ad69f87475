// An MCP server as a process of its own, for benchmarks: the official SDK's McpServer over
// Streamable HTTP with sessions (each ended by its client's DELETE), the test suites' tools (`echo`
// among them), nothing recorded. Prints its URL.
//   tsx bench/fake-mcp-server.ts PORT
import { startStreamableServer } from '../test/support/mcp-test-servers.js';

const server = await startStreamableServer({
  port: Number(process.argv[2] ?? 0),
  recordRequests: false,
});
process.stdout.write(`ready ${server.url}\n`);
process.on('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
