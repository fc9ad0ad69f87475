// The gateway benchmark's tracing section (issue 33): CPU per request of the platform
//  - with tracing off, against the build before OpenTelemetry came in (BENCH_BASELINE_DIST: that
//    commit's `dist/` directory, e.g. built in a `git worktree`), to show the off path unchanged;
//  - with tracing on (spans and metrics exported over OTLP/HTTP to a sink that answers at once),
//    against the same build with it off, to measure what tracing adds.
// Each pair of processes runs over the same fake upstream, called in turns (gateway-spend.ts), the
// ledger on in all. `BENCH_GATEWAY_PART=tracing npm run bench -- gateway`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startGatewayPlatform } from './gateway-platform.js';
import {
  closeClient,
  json,
  measurePairs,
  pairs,
  requestsPerRound,
  rounds,
  type Paired,
  type Started,
} from './gateway-spend.js';
import { machine, writeResults } from './support.js';

interface Variant {
  label: string;
  script?: string;
  env?: Record<string, string>;
}

type Comparison = Paired & { a: string; b: string };

async function startVariant(
  directory: string,
  name: string,
  upstreamUrl: string,
  adminKey: string,
  variant: Variant,
): Promise<Started> {
  const { server, base } = await startGatewayPlatform({
    directory,
    name,
    upstreamUrl,
    adminKey,
    deployments: 2,
    pricing: { input_per_mtok: 0.15, output_per_mtok: 0.6 },
    ...(variant.env === undefined ? {} : { env: variant.env }),
    ...(variant.script === undefined ? {} : { script: variant.script }),
  });
  const created = await json(`${base}/v1/api-keys`, adminKey, {
    name: 'bench',
    scopes: ['chat:write', 'models:read'],
  });
  return { platform: { pid: server.pid!, base, key: String(created.key) }, server };
}

async function compare(
  directory: string,
  upstreamUrl: string,
  adminKey: string,
  a: Variant,
  b: Variant,
): Promise<Comparison> {
  const start = (variant: Variant) => (pair: number) =>
    startVariant(directory, `${variant.label}-${pair}`, upstreamUrl, adminKey, variant);
  return { a: a.label, b: b.label, ...(await measurePairs(start(a), start(b))) };
}

/** An OTLP/HTTP endpoint that takes every export and answers at once (counting them). */
async function startSink(): Promise<{ server: Server; url: string; exports: () => number }> {
  let count = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      count += 1;
      response.writeHead(200, { 'content-type': 'application/x-protobuf' });
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, exports: () => count };
}

function row(comparison: Comparison): string {
  return [
    `| plain | ${comparison.a_plain_ms} | ${comparison.b_plain_ms} | **${comparison.plain_ratio}** |`,
    `| streamed | ${comparison.a_streamed_ms} | ${comparison.b_streamed_ms} | **${comparison.streamed_ratio}** |`,
  ].join('\n');
}

export async function measureTracing(
  directory: string,
  upstreamUrl: string,
  adminKey: string,
): Promise<void> {
  const sink = await startSink();
  const baselineDist = process.env.BENCH_BASELINE_DIST;
  const off: Variant = { label: 'tracing-off' };
  const on: Variant = {
    label: 'tracing-on',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'always_on' },
  };
  const results: Record<string, Comparison> = {};
  try {
    if (baselineDist !== undefined) {
      const baseline: Variant = {
        label: 'before-issue-33',
        script: path.join(path.resolve(baselineDist), 'main.js'),
      };
      results.off_vs_before = await compare(directory, upstreamUrl, adminKey, baseline, off);
    }
    results.on_vs_off = await compare(directory, upstreamUrl, adminKey, off, on);
  } finally {
    closeClient();
    sink.server.close();
  }
  const command = `BENCH_GATEWAY_PART=tracing${baselineDist === undefined ? '' : ' BENCH_BASELINE_DIST=<dist of the build before>'} npm run bench -- gateway`;
  const before = results.off_vs_before;
  const info = machine();
  const markdown = `# Gateway benchmark, tracing section — ${new Date().toISOString()}

Command: \`${command}\`. Machine: ${info.cpus} × ${info.cpu_model}, Node ${info.node}.

Each comparison: two platform processes (model of two deployments, ledger on, SQLite) over the same
fake upstream, called in turns after a warm-up, ${pairs} pairs of processes started one after the
other, ${pairs * rounds * requestsPerRound} sequential requests of each kind on each. ms of the
server's user + system CPU time per request; ratio = second ÷ first.

${
  before === undefined
    ? 'Tracing off against the build before it: not measured (BENCH_BASELINE_DIST unset).'
    : `## Tracing off, against the build before OpenTelemetry

| | before | tracing off | ratio |
|---|---:|---:|---:|
${row(before)}

(each pair's ratios: ${before.pair_ratios.map((pair) => `${pair.plain} / ${pair.streamed}`).join(', ')})`
}

## Tracing on (OTLP/HTTP protobuf to a local sink, every request sampled), against off

| | tracing off | tracing on | ratio |
|---|---:|---:|---:|
${row(results.on_vs_off)}

(each pair's ratios: ${results.on_vs_off.pair_ratios.map((pair) => `${pair.plain} / ${pair.streamed}`).join(', ')};
exports the sink received: ${sink.exports()})
`;
  writeResults('gateway-tracing', { when: new Date().toISOString(), ...results }, markdown);
}
