// The fake OpenAI-compatible upstream as a process of its own, for benchmarks: prints its base URL.
import { startFakeUpstream } from '../test/support/fake-upstream.js';

const upstream = await startFakeUpstream({
  port: Number(process.argv[2] ?? 0),
  recordRequests: false,
  obfuscation: false,
});
process.stdout.write(`ready ${upstream.baseUrl}\n`);
process.on('SIGTERM', () => {
  void upstream.close().then(() => process.exit(0));
});
