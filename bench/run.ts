// Benchmark entry point: `npm run bench -- <name>`; results go to bench/results/<name>.{json,md}.
import { runAuthBenchmark } from './auth.js';
import { runGatewayBenchmark } from './gateway.js';
import { runPipelinesBenchmark } from './pipelines.js';
import { runKnowledgeBenchmark } from './knowledge.js';
import { runMemoryBenchmark } from './memory.js';
import { runWebBundleBenchmark } from './web-bundle.js';
import { runRoutingBenchmark } from './routing.js';
import { runSpeechBenchmark } from './speech.js';
import { runSoakBenchmark } from './soak.js';
import { runFirstRunBenchmark } from './first-run.js';
import { runMcpBenchmark } from './mcp.js';

const benchmarks: Record<string, () => Promise<void>> = {
  auth: runAuthBenchmark,
  gateway: runGatewayBenchmark,
  pipelines: runPipelinesBenchmark,
  knowledge: runKnowledgeBenchmark,
  memory: runMemoryBenchmark,
  'web-bundle': runWebBundleBenchmark,
  routing: runRoutingBenchmark,
  speech: runSpeechBenchmark,
  soak: runSoakBenchmark,
  'first-run': runFirstRunBenchmark,
  mcp: runMcpBenchmark,
};

const names = process.argv.slice(2);
if (names.length === 0 || names.some((name) => benchmarks[name] === undefined)) {
  process.stderr.write(`Usage: npm run bench -- <${Object.keys(benchmarks).join('|')}> [...]\n`);
  process.exit(2);
}
for (const name of names) await benchmarks[name]!();
