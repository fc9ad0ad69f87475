// The gateway benchmark's spend section (issue 31): the CPU time per request of the platform with
// the usage ledger and a budget on the calling key, against the same build with metering switched
// off (USAGE_LEDGER=false), both started here over the same fake upstream and called in turns, so
// drift on a shared machine hits both alike. Target: at most +10 %.
import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { startGatewayPlatform } from './gateway-platform.js';
import { cpuMs, machine, stopProcess, writeResults } from './support.js';

const rounds = Number(process.env.BENCH_SPEND_ROUNDS ?? 6);
const requestsPerRound = Number(process.env.BENCH_SPEND_REQUESTS_PER_ROUND ?? 500);
export const spendTarget = 1.1;

interface Platform {
  pid: number;
  base: string;
  key: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function post(url: string, key: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (incoming) => {
        incoming.resume();
        incoming.on('end', () => resolve(incoming.statusCode ?? 0));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

async function json(url: string, key: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (!response.ok)
    throw new Error(`${url} answered ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

/** A platform process over `upstreamUrl`, with a key of its own (and a budget on it, if asked). */
async function startPlatform(
  directory: string,
  name: string,
  upstreamUrl: string,
  adminKey: string,
  metered: boolean,
): Promise<{ platform: Platform; server: ChildProcess }> {
  const { server, base } = await startGatewayPlatform({
    directory,
    name,
    upstreamUrl,
    adminKey,
    pricing: { input_per_mtok: 0.15, cached_input_per_mtok: 0.075, output_per_mtok: 0.6 },
    env: { USAGE_LEDGER: String(metered) },
    // To profile the two: BENCH_SPEND_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'.
    nodeArgs: (process.env.BENCH_SPEND_NODE_ARGS ?? '').split(' ').filter(Boolean),
  });
  const created = await json(`${base}/v1/api-keys`, adminKey, {
    name: 'bench',
    scopes: ['chat:write', 'models:read'],
  });
  const key = String(created.key);
  if (metered) {
    await json(`${base}/v1/budgets`, adminKey, {
      scope: 'key',
      key_id: created.id,
      limit_usd: 1_000_000,
      period: 'month',
    });
  }
  return { platform: { pid: server.pid!, base, key }, server };
}

const body = (stream: boolean) =>
  JSON.stringify({
    model: 'bench-upstream',
    messages: [{ role: 'user', content: 'Say hello to the benchmark in a few words.' }],
    ...(stream ? { stream: true } : {}),
  });

async function cpuOf(platform: Platform, stream: boolean): Promise<number> {
  const payload = body(stream);
  const before = cpuMs(platform.pid);
  for (let index = 0; index < requestsPerRound; index += 1) {
    const status = await post(`${platform.base}/chat/completions`, platform.key, payload);
    if (status !== 200) throw new Error(`the platform answered ${status}`);
  }
  return cpuMs(platform.pid) - before;
}

export interface SpendResult {
  requests_each: number;
  unmetered_plain_ms: number;
  metered_plain_ms: number;
  unmetered_streamed_ms: number;
  metered_streamed_ms: number;
  plain_ratio: number;
  streamed_ratio: number;
}

const round3 = (value: number) => Math.round(value * 1000) / 1000;

/** Starts the two platforms, measures them in turns, and stops them. */
export async function measureSpendOverhead(
  directory: string,
  upstreamUrl: string,
  adminKey: string,
): Promise<SpendResult> {
  const unmetered = await startPlatform(directory, 'unmetered', upstreamUrl, adminKey, false);
  const metered = await startPlatform(directory, 'metered', upstreamUrl, adminKey, true);
  const servers = [unmetered, metered];
  try {
    const totals = { up: 0, mp: 0, us: 0, ms: 0 };
    // Warm-up: JIT, connections, the key and budget caches.
    for (const { platform } of servers) {
      await cpuOf(platform, false);
      await cpuOf(platform, true);
    }
    for (let round = 0; round < rounds; round += 1) {
      // Which goes first alternates, so that neither always follows the other's garbage.
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const { platform } of order) {
        const plain = await cpuOf(platform, false);
        const streamed = await cpuOf(platform, true);
        if (platform === metered.platform) {
          totals.mp += plain;
          totals.ms += streamed;
        } else {
          totals.up += plain;
          totals.us += streamed;
        }
      }
    }
    const requests = rounds * requestsPerRound;
    return {
      requests_each: requests,
      unmetered_plain_ms: round3(totals.up / requests),
      metered_plain_ms: round3(totals.mp / requests),
      unmetered_streamed_ms: round3(totals.us / requests),
      metered_streamed_ms: round3(totals.ms / requests),
      plain_ratio: round3(totals.mp / totals.up),
      streamed_ratio: round3(totals.ms / totals.us),
    };
  } finally {
    agent.destroy();
    for (const { server } of servers) await stopProcess(server);
  }
}

export function spendMarkdown(spend: SpendResult): string {
  return `## The ledger and a budget on the key

The platform with metering on (a usage record per call, a month budget on the calling key,
SQLite, no Redis) against the same build with \`USAGE_LEDGER=false\`, each its own process over
the same upstream, called in turns: ${spend.requests_each} sequential requests of each kind on each.

| | metering off | ledger + key budget | ratio | target |
|---|---:|---:|---:|---:|
| plain | ${spend.unmetered_plain_ms} | ${spend.metered_plain_ms} | **${spend.plain_ratio}** | ≤ ${spendTarget} |
| streamed | ${spend.unmetered_streamed_ms} | ${spend.metered_streamed_ms} | **${spend.streamed_ratio}** | ≤ ${spendTarget} |

(ms of the server process's user + system CPU time per request)
`;
}

/** `BENCH_GATEWAY_PART=spend npm run bench -- gateway`: this section alone, in its own files. */
export function reportSpend(spend: SpendResult): void {
  const passed = spend.plain_ratio <= spendTarget && spend.streamed_ratio <= spendTarget;
  const when = new Date().toISOString();
  const info = machine();
  const command = 'BENCH_GATEWAY_PART=spend npm run bench -- gateway';
  const markdown = `# Gateway benchmark, spend section — ${when}

\`${command}\` · ${info.cpus} cores (${info.cpu_model}), Node ${info.node}.

${spendMarkdown(spend)}
${passed ? 'Target met.' : 'Target NOT met.'}
`;
  const file = writeResults(
    'gateway-spend',
    { benchmark: 'gateway-spend', when, command, machine: info, spend, passed },
    markdown,
  );
  process.stdout.write(`\n${markdown}\nwritten to ${file}\n`);
  if (!passed) process.exitCode = 1;
}
