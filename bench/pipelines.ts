// Benchmark: the pipeline engine's own cost per stage — pipelines of 1 and of 11 stages whose
// agents are instant (StructureAgent on a five-row table), run one at a time over HTTP against the
// built service on SQLite, every stage record written. Per-stage overhead = (t11 − t1) / 10, from
// the medians and from the 99th percentiles. Target: under 2 ms per stage at p50.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { machine, startBuiltService, stopProcess, writeResults } from './support.js';

const runsPerSize = Number(process.env.BENCH_RUNS ?? 300);
const longStages = 11;

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

const round3 = (value: number) => Math.round(value * 1000) / 1000;

export async function runPipelinesBenchmark(): Promise<void> {
  const directory = mkdtempSync(path.join(tmpdir(), 'bench-pipelines-'));
  const adminKey = generateApiKey();
  const { server, base } = await startBuiltService(directory, adminKey);
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  try {
    const post = async (url: string, body: unknown) => {
      const response = await fetch(`${base}${url}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
      if (response.status >= 300)
        throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
      return (await response.json()) as Record<string, unknown>;
    };
    const agent = await post('/v1/agents', {
      name: 'table',
      agent_type: 'StructureAgent',
      configuration: {},
    });
    const stages = (count: number) =>
      Array.from({ length: count }, (_, index) => ({
        name: `s${index}`,
        agent_id: agent.id,
        input_mapping: { data: index === 0 ? '$.input.rows' : `$.stages.s${index - 1}.rows` },
      }));
    const short = await post('/v1/pipelines', { name: 'one stage', stages: stages(1) });
    const long = await post('/v1/pipelines', {
      name: `${longStages} stages`,
      stages: stages(longStages),
    });
    const rows = [
      { region: 'North', amount: 120 },
      { region: 'South', amount: 80 },
      { region: 'North', amount: 150 },
      { region: 'East', amount: 40 },
      { region: 'West', amount: 65 },
    ];
    const time = async (pipelineId: unknown) => {
      const started = process.hrtime.bigint();
      const run = await post(`/v1/pipelines/${String(pipelineId)}/execute`, { rows });
      if (run.status !== 'completed') throw new Error(`run ${JSON.stringify(run)}`);
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    for (let index = 0; index < 30; index += 1) {
      await time(short.pipeline_id);
      await time(long.pipeline_id);
    }
    const shortTimes: number[] = [];
    const longTimes: number[] = [];
    for (let index = 0; index < runsPerSize; index += 1) {
      shortTimes.push(await time(short.pipeline_id));
      longTimes.push(await time(long.pipeline_id));
    }
    const perStageP50 =
      (percentile(longTimes, 0.5) - percentile(shortTimes, 0.5)) / (longStages - 1);
    const perStageP99 =
      (percentile(longTimes, 0.99) - percentile(shortTimes, 0.99)) / (longStages - 1);
    const passed = perStageP50 < 2;
    const when = new Date().toISOString();
    const info = machine();
    const result = {
      benchmark: 'pipelines',
      when,
      machine: info,
      settings: {
        runs_per_size: runsPerSize,
        stages: [1, longStages],
        database: 'sqlite',
        transport: 'HTTP, sequential',
      },
      one_stage: {
        p50_ms: round3(percentile(shortTimes, 0.5)),
        p99_ms: round3(percentile(shortTimes, 0.99)),
      },
      eleven_stages: {
        p50_ms: round3(percentile(longTimes, 0.5)),
        p99_ms: round3(percentile(longTimes, 0.99)),
      },
      per_stage_p50_ms: round3(perStageP50),
      per_stage_p99_ms: round3(perStageP99),
      target: 'per-stage p50 < 2 ms',
      passed,
    };
    const markdown = `# Pipelines benchmark — ${when}

\`npm run bench -- pipelines\` · ${info.cpus} cores (${info.cpu_model}), Node ${info.node}; the built
service (\`dist/main.js\`) on SQLite, one request at a time over HTTP, ${runsPerSize} runs per pipeline,
alternating. Stages are StructureAgent on a five-row table (the agent's own work is negligible);
each stage resolves its input path, runs the agent and writes its record (running, then completed).

| pipeline | p50 (ms) | p99 (ms) |
|---|---:|---:|
| 1 stage | ${result.one_stage.p50_ms} | ${result.one_stage.p99_ms} |
| ${longStages} stages | ${result.eleven_stages.p50_ms} | ${result.eleven_stages.p99_ms} |

Engine overhead per stage: **${result.per_stage_p50_ms} ms at p50**, ${result.per_stage_p99_ms} ms at p99
(target: under 2 ms at p50) — ${passed ? 'met' : 'NOT met'}.
`;
    const file = writeResults('pipelines', result, markdown);
    process.stdout.write(`${markdown}\nwritten to ${file}\n`);
    if (!passed) process.exitCode = 1;
  } finally {
    await stopProcess(server);
    rmSync(directory, { recursive: true, force: true });
  }
}
