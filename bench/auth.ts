// Benchmark: GET /v1/features with a valid key (key check, scope check, both rate-limit windows,
// rate-limit headers) against a bare Fastify route serving the same JSON, compared like for like:
// both without request logging, and both logging one JSON line per request as the service does by
// default. Target: the authenticated route keeps ≥ 70% of the bare route's throughput.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { freePort, machine, startServer, stopProcess, writeResults } from './support.js';

type TargetName = 'bare' | 'platform' | 'bare_logged' | 'platform_logged';

interface Target {
  name: TargetName;
  label: string;
  url: string;
  headers: Record<string, string>;
}

interface Run {
  target: TargetName;
  round: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

const durationSeconds = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const targetRatio = 0.7;

function load(target: Target): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      { url: target.url, connections, duration: durationSeconds, headers: target.headers },
      (error, result) =>
        error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result),
    );
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export async function runAuthBenchmark(): Promise<void> {
  const directory = mkdtempSync(path.join(tmpdir(), 'bench-auth-'));
  const adminKey = generateApiKey();
  const configFile = path.join(directory, 'platform.config.json');
  // A tier generous enough that the benchmark measures the limiter's work, never its refusals.
  writeFileSync(
    configFile,
    JSON.stringify({
      rate_limits: {
        default_tier: 'bench',
        tiers: { bench: { per_minute: 1_000_000_000, per_day: 1_000_000_000 } },
      },
    }),
  );
  const headers = { authorization: `Bearer ${adminKey}` };
  const servers = [];
  const targets: Target[] = [];
  try {
    let payload = '';
    for (const logged of [false, true]) {
      const port = await freePort();
      const name = logged ? 'platform_logged' : 'platform';
      const url = `http://127.0.0.1:${port}/v1/features`;
      servers.push(
        await startServer(
          process.execPath,
          ['dist/main.js'],
          {
            PORT: String(port),
            DATABASE_URL: `sqlite:${path.join(directory, `${name}.db`)}`,
            PLATFORM_ADMIN_KEY: adminKey,
            PLATFORM_CONFIG: configFile,
            LOG_LEVEL: logged ? 'info' : 'warn',
          },
          path.join(directory, `${name}.log`),
          `http://127.0.0.1:${port}/v1/health`,
        ),
      );
      payload = await (await fetch(url, { headers })).text();
      targets.push({
        name,
        label: `\`GET /v1/features\` with a valid key${logged ? ', request log on' : ''}`,
        url,
        headers,
      });
    }
    for (const logged of [false, true]) {
      const port = await freePort();
      const name = logged ? 'bare_logged' : 'bare';
      const url = `http://127.0.0.1:${port}/v1/features`;
      servers.push(
        await startServer(
          process.execPath,
          [
            '--import',
            'tsx',
            'bench/bare-server.ts',
            String(port),
            payload,
            ...(logged ? ['--logged'] : []),
          ],
          {},
          path.join(directory, `${name}.log`),
          url,
        ),
      );
      if ((await (await fetch(url)).text()) !== payload) {
        throw new Error('the bare route does not serve the same body');
      }
      targets.push({
        name,
        label: `bare Fastify route${logged ? ', request log on' : ''}`,
        url,
        headers: {},
      });
    }

    const runs: Run[] = [];
    // Warm every server up (JIT, caches), then interleave rounds so that drift on a shared
    // machine hits every target alike.
    for (const target of targets) await load(target);
    for (let round = 1; round <= rounds; round += 1) {
      for (const target of targets) {
        const result = await load(target);
        runs.push({
          target: target.name,
          round,
          requestsPerSecond: result.requests.average,
          p50Ms: result.latency.p50,
          p99Ms: result.latency.p99,
          non2xx: result.non2xx,
          errors: result.errors,
        });
        process.stdout.write(
          `round ${round} ${target.name.padEnd(16)} ${result.requests.average.toFixed(0)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  non-2xx ${result.non2xx}\n`,
        );
      }
    }
    report(targets, runs);
  } finally {
    for (const server of servers) await stopProcess(server);
    rmSync(directory, { recursive: true, force: true });
  }
}

function report(targets: Target[], runs: Run[]): void {
  const summary = (name: TargetName) => {
    const own = runs.filter((run) => run.target === name);
    return {
      requests_per_second: Math.round(median(own.map((run) => run.requestsPerSecond))),
      p50_ms: median(own.map((run) => run.p50Ms)),
      p99_ms: median(own.map((run) => run.p99Ms)),
      non_2xx: own.reduce((sum, run) => sum + run.non2xx, 0),
      errors: own.reduce((sum, run) => sum + run.errors, 0),
    };
  };
  const summaries = Object.fromEntries(
    targets.map((target) => [target.name, summary(target.name)]),
  ) as Record<TargetName, ReturnType<typeof summary>>;
  const ratio = (platform: TargetName, bare: TargetName) =>
    Math.round(
      (summaries[platform].requests_per_second / summaries[bare].requests_per_second) * 1000,
    ) / 1000;
  const comparisons = {
    without_request_log: ratio('platform', 'bare'),
    with_request_log: ratio('platform_logged', 'bare_logged'),
  };
  const clean = Object.values(summaries).every(
    (entry) => entry.non_2xx === 0 && entry.errors === 0,
  );
  const passed = clean && Object.values(comparisons).every((value) => value >= targetRatio);
  const when = new Date().toISOString();
  const result = {
    benchmark: 'auth',
    when,
    machine: machine(),
    settings: { duration_seconds: durationSeconds, connections, rounds, database: 'sqlite' },
    summaries,
    throughput_ratios: comparisons,
    target: `platform throughput >= ${targetRatio} x bare, like for like`,
    passed,
    runs,
  };
  const rows = targets
    .map((target) => {
      const entry = summaries[target.name];
      return `| ${target.label} | ${entry.requests_per_second} | ${entry.p50_ms} | ${entry.p99_ms} | ${entry.non_2xx} |`;
    })
    .join('\n');
  const markdown = `# Auth benchmark — ${when}

\`npm run bench -- auth\` · ${result.machine.cpus} cores (${result.machine.cpu_model}), Node ${result.machine.node}
· autocannon, ${connections} connections, ${durationSeconds} s per run, ${rounds} interleaved rounds (medians shown)

| | req/s | p50 (ms) | p99 (ms) | non-2xx |
|---|---:|---:|---:|---:|
${rows}

Throughput ratio, platform / bare (target ≥ ${targetRatio}):
- without request logging: **${comparisons.without_request_log}**
- with one JSON log line per request on both: **${comparisons.with_request_log}**

${passed ? 'Target met.' : 'Target NOT met.'}

The platform runs include key shape check, hashing, the validated-key cache, the scope check, both
rate-limit windows (memory store) and the rate-limit headers. "Request log on" is the service's
default (\`LOG_LEVEL=info\`: one JSON line per request, written to a file); the bare server then logs
through the same logger and hook. Each server runs in its own process; the load generator runs in
another, on the same 2-core machine.
`;
  const file = writeResults('auth', result, markdown);
  process.stdout.write(`\n${markdown}\nwritten to ${file}\n`);
  if (!passed) process.exitCode = 1;
}
