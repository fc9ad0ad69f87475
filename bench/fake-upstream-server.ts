// The fake OpenAI-compatible upstream as a process of its own, for benchmarks: prints its base URL.
//   tsx bench/fake-upstream-server.ts PORT [--call-offered-tools]
import { startFakeUpstream } from '../test/support/fake-upstream.js';

const upstream = await startFakeUpstream({
  port: Number(process.argv[2] ?? 0),
  recordRequests: false,
  obfuscation: false,
  // `--call-offered-tools`: a request offering tools gets a call to the first (the soak's ToolAgent
  // calls its MCP server's tool, then answers from the result).
  callOfferedTools: process.argv.includes('--call-offered-tools'),
});
process.stdout.write(`ready ${upstream.baseUrl}\n`);
process.on('SIGTERM', () => {
  void upstream.close().then(() => process.exit(0));
});
