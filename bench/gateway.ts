// Benchmark: what /chat/completions adds over calling the (fake) upstream directly — latency one
// request at a time (interleaved, per-request hrtime, p50/p99), streamed time to first token,
// throughput at several concurrencies as a ratio to direct — and turns stored per second by
// /v1/chat. Targets: added p50 ≤ 1.0 ms, throughput ≥ 0.4× direct at concurrency 50 (not
// streamed), streamed time-to-first-token added ≤ 1.0 ms.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { generateApiKey } from '../src/auth/api-key-format.js';
import { freePort, machine, startServer, stopProcess, writeResults } from './support.js';

const sequentialRounds = Number(process.env.BENCH_ROUNDS ?? 20);
const requestsPerRound = Number(process.env.BENCH_REQUESTS_PER_ROUND ?? 100);
const loadSeconds = Number(process.env.BENCH_DURATION ?? 5);
const concurrencies = [1, 10, 50, 100];

interface Target {
  url: string;
  headers: Record<string, string>;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One POST; resolves with ms to the first content delta (streams) and to the end. */
function timedPost(
  target: Target,
  body: string,
  stream: boolean,
): Promise<{ firstMs: number; totalMs: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    let firstMs = -1;
    let seen = '';
    const outgoing = request(
      target.url,
      {
        method: 'POST',
        agent,
        headers: {
          ...target.headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (incoming) => {
        if (incoming.statusCode !== 200) {
          reject(new Error(`${target.url} answered ${incoming.statusCode}`));
          incoming.resume();
          return;
        }
        incoming.setEncoding('utf8');
        incoming.on('data', (chunk: string) => {
          if (firstMs < 0 && stream) {
            seen += chunk;
            // The first chunk whose delta carries text.
            if (/"delta":\{[^}]*"content":"[^"]/.test(seen)) {
              firstMs = Number(process.hrtime.bigint() - started) / 1e6;
            }
          }
        });
        incoming.on('end', () => {
          const totalMs = Number(process.hrtime.bigint() - started) / 1e6;
          resolve({ firstMs: stream ? firstMs : totalMs, totalMs });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

const round3 = (value: number) => Math.round(value * 1000) / 1000;

async function sequential(direct: Target, platform: Target, stream: boolean) {
  const body = (model: string) =>
    JSON.stringify({
      model,
      messages: [{ role: 'user', content: 'Say hello to the benchmark in a few words.' }],
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    });
  const directBody = body('gpt-4o-mini');
  const platformBody = body('bench-upstream');
  // Warm-up: JIT, connections, the platform's caches.
  for (let index = 0; index < 200; index += 1) {
    await timedPost(direct, directBody, stream);
    await timedPost(platform, platformBody, stream);
  }
  const directTimes: number[] = [];
  const platformTimes: number[] = [];
  for (let round = 0; round < sequentialRounds; round += 1) {
    // Alternating within each round: drift on a shared machine hits both alike.
    for (let index = 0; index < requestsPerRound; index += 1) {
      directTimes.push((await timedPost(direct, directBody, stream)).firstMs);
      platformTimes.push((await timedPost(platform, platformBody, stream)).firstMs);
    }
  }
  const summary = (times: number[]) => ({
    p50_ms: round3(percentile(times, 0.5)),
    p99_ms: round3(percentile(times, 0.99)),
  });
  const directSummary = summary(directTimes);
  const platformSummary = summary(platformTimes);
  return {
    samples: directTimes.length,
    direct: directSummary,
    platform: platformSummary,
    added_p50_ms: round3(platformSummary.p50_ms - directSummary.p50_ms),
    added_p99_ms: round3(platformSummary.p99_ms - directSummary.p99_ms),
  };
}

function load(
  target: Target,
  body: string,
  connections: number,
): Promise<{
  requestsPerSecond: number;
  non2xx: number;
  errors: number;
  p50: number;
  p99: number;
}> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: target.url,
        method: 'POST',
        connections,
        duration: loadSeconds,
        headers: { ...target.headers, 'content-type': 'application/json' },
        body,
      },
      (error, result) => {
        if (error) reject(error instanceof Error ? error : new Error(String(error)));
        else {
          resolve({
            requestsPerSecond: result.requests.average,
            non2xx: result.non2xx,
            errors: result.errors,
            p50: result.latency.p50,
            p99: result.latency.p99,
          });
        }
      },
    );
  });
}

export async function runGatewayBenchmark(): Promise<void> {
  const directory = mkdtempSync(path.join(tmpdir(), 'bench-gateway-'));
  const adminKey = generateApiKey();
  const upstreamPort = await freePort();
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}/v1`;
  const servers = [];
  try {
    servers.push(
      await startServer(
        process.execPath,
        ['--import', 'tsx', 'bench/fake-upstream-server.ts', String(upstreamPort)],
        {},
        path.join(directory, 'upstream.log'),
        `${upstreamUrl}/models`,
      ),
    );
    const configFile = path.join(directory, 'platform.config.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        default_model: 'bench-upstream',
        models: [
          {
            name: 'bench-upstream',
            provider: 'openai-compatible',
            model: 'gpt-4o-mini',
            base_url: upstreamUrl,
            max_tokens: 1024,
            context_length: 8192,
          },
        ],
        rate_limits: {
          default_tier: 'bench',
          tiers: { bench: { per_minute: 1_000_000_000, per_day: 1_000_000_000 } },
        },
      }),
    );
    const platformPort = await freePort();
    servers.push(
      await startServer(
        process.execPath,
        ['dist/main.js'],
        {
          PORT: String(platformPort),
          DATABASE_URL: `sqlite:${path.join(directory, 'platform.db')}`,
          PLATFORM_ADMIN_KEY: adminKey,
          PLATFORM_CONFIG: configFile,
          MODEL_AUTO_PULL: 'false',
          LOG_LEVEL: 'info',
        },
        path.join(directory, 'platform.log'),
        `http://127.0.0.1:${platformPort}/v1/health`,
      ),
    );
    const auth = { authorization: `Bearer ${adminKey}` };
    const direct: Target = { url: `${upstreamUrl}/chat/completions`, headers: {} };
    const platform: Target = {
      url: `http://127.0.0.1:${platformPort}/chat/completions`,
      headers: auth,
    };

    process.stdout.write('sequential, not streamed…\n');
    const latency = await sequential(direct, platform, false);
    process.stdout.write(
      `${JSON.stringify(latency)}\nsequential, streamed (time to first token)…\n`,
    );
    const firstToken = await sequential(direct, platform, true);
    process.stdout.write(`${JSON.stringify(firstToken)}\n`);

    const throughput = [];
    for (const connections of concurrencies) {
      const directResult = await load(
        direct,
        JSON.stringify({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'Say hello.' }],
        }),
        connections,
      );
      const platformResult = await load(
        platform,
        JSON.stringify({
          model: 'bench-upstream',
          messages: [{ role: 'user', content: 'Say hello.' }],
        }),
        connections,
      );
      const row = {
        concurrency: connections,
        direct_rps: Math.round(directResult.requestsPerSecond),
        platform_rps: Math.round(platformResult.requestsPerSecond),
        ratio: round3(platformResult.requestsPerSecond / directResult.requestsPerSecond),
        platform_p50_ms: platformResult.p50,
        platform_p99_ms: platformResult.p99,
        platform_non_2xx: platformResult.non2xx + platformResult.errors,
      };
      throughput.push(row);
      process.stdout.write(`${JSON.stringify(row)}\n`);
    }

    const chatResult = await load(
      { url: `http://127.0.0.1:${platformPort}/v1/chat`, headers: auth },
      JSON.stringify({
        user_id: 'bench-user',
        messages: [{ role: 'user', content: 'Store this turn.' }],
      }),
      10,
    );
    const turns = {
      concurrency: 10,
      turns_per_second: Math.round(chatResult.requestsPerSecond),
      p50_ms: chatResult.p50,
      p99_ms: chatResult.p99,
      non_2xx: chatResult.non2xx + chatResult.errors,
    };
    process.stdout.write(`${JSON.stringify(turns)}\n`);
    report({ latency, firstToken, throughput, turns });
  } finally {
    agent.destroy();
    for (const server of servers.reverse()) await stopProcess(server);
    rmSync(directory, { recursive: true, force: true });
  }
}

function report(results: {
  latency: Awaited<ReturnType<typeof sequential>>;
  firstToken: Awaited<ReturnType<typeof sequential>>;
  throughput: Array<{
    concurrency: number;
    direct_rps: number;
    platform_rps: number;
    ratio: number;
    platform_p50_ms: number;
    platform_p99_ms: number;
    platform_non_2xx: number;
  }>;
  turns: { turns_per_second: number; p50_ms: number; p99_ms: number; non_2xx: number };
}): void {
  const at50 = results.throughput.find((row) => row.concurrency === 50)!;
  const checks = {
    added_p50_within_1ms: results.latency.added_p50_ms <= 1.0,
    throughput_at_50_at_least_0_4: at50.ratio >= 0.4,
    streamed_ttft_added_within_1ms: results.firstToken.added_p50_ms <= 1.0,
    no_errors:
      results.throughput.every((row) => row.platform_non_2xx === 0) && results.turns.non_2xx === 0,
  };
  const passed = Object.values(checks).every(Boolean);
  const when = new Date().toISOString();
  const info = machine();
  const json = {
    benchmark: 'gateway',
    when,
    machine: info,
    settings: {
      sequential_samples: results.latency.samples,
      load_seconds: loadSeconds,
      log_level: 'info',
      database: 'sqlite',
    },
    ...results,
    checks,
    passed,
  };
  const rows = results.throughput
    .map(
      (row) =>
        `| ${row.concurrency} | ${row.direct_rps} | ${row.platform_rps} | ${row.ratio} | ${row.platform_p50_ms} | ${row.platform_p99_ms} |`,
    )
    .join('\n');
  const markdown = `# Gateway benchmark — ${when}

\`npm run bench -- gateway\` · ${info.cpus} cores (${info.cpu_model}), Node ${info.node}. The fake
OpenAI-compatible upstream, the platform (\`dist/main.js\`, SQLite, request log on) and the load
generator each run in their own process.

## Overhead of \`POST /chat/completions\` over calling the upstream directly

One request at a time over a keep-alive connection, direct and platform alternating, ${results.latency.samples}
requests each, timed per request with \`process.hrtime\`.

| | direct p50 | platform p50 | added p50 | direct p99 | platform p99 | added p99 |
|---|---:|---:|---:|---:|---:|---:|
| not streamed (whole answer) | ${results.latency.direct.p50_ms} | ${results.latency.platform.p50_ms} | **${results.latency.added_p50_ms}** | ${results.latency.direct.p99_ms} | ${results.latency.platform.p99_ms} | ${results.latency.added_p99_ms} |
| streamed (first token) | ${results.firstToken.direct.p50_ms} | ${results.firstToken.platform.p50_ms} | **${results.firstToken.added_p50_ms}** | ${results.firstToken.direct.p99_ms} | ${results.firstToken.platform.p99_ms} | ${results.firstToken.added_p99_ms} |

(milliseconds; targets: added p50 ≤ 1.0 ms for both)

## Throughput, not streamed (autocannon, ${loadSeconds} s per run)

| concurrency | direct req/s | platform req/s | ratio | platform p50 ms | platform p99 ms |
|---:|---:|---:|---:|---:|---:|
${rows}

Target: ratio ≥ 0.4 at concurrency 50.

## \`POST /v1/chat\` with persistence

${results.turns.turns_per_second} turns stored per second at concurrency 10 (each a new conversation with
the user's and the assistant's message, in SQLite), p50 ${results.turns.p50_ms} ms, p99 ${results.turns.p99_ms} ms.

${passed ? 'All targets met.' : `Targets NOT all met: ${JSON.stringify(checks)}`}
`;
  const file = writeResults('gateway', json, markdown);
  process.stdout.write(`\n${markdown}\nwritten to ${file}\n`);
  if (!passed) process.exitCode = 1;
}
