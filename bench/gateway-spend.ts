// The gateway benchmark's spend section (issue 31): the CPU time per request of the platform with
// the usage ledger and a budget on the calling key, against the same build with metering switched
// off (USAGE_LEDGER=false), both started here over the same fake upstream and called in turns, so
// drift on a shared machine hits both alike. Target: at most +10 %.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { Agent } from 'node:http';
import { startGatewayPlatform } from './gateway-platform.js';
import { cpuMs, machine, postJson, stopProcess, writeResults } from './support.js';

export const rounds = Number(process.env.BENCH_SPEND_ROUNDS ?? 20);
export const requestsPerRound = Number(process.env.BENCH_SPEND_REQUESTS_PER_ROUND ?? 300);
export const pairs = Number(process.env.BENCH_SPEND_PAIRS ?? 4);
const warmUpRounds = Number(process.env.BENCH_SPEND_WARM_UP_ROUNDS ?? 8);
export const spendTarget = 1.1;

export interface Platform {
  pid: number;
  base: string;
  key: string;
}

/** A started platform process and what calls it. */
export interface Started {
  platform: Platform;
  server: ChildProcess;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** Closes the benchmark client's connections (at the end of a section). */
export function closeClient(): void {
  agent.destroy();
}

export async function json(
  url: string,
  key: string,
  body: unknown,
): Promise<Record<string, unknown>> {
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

async function run(platform: Platform, stream: boolean): Promise<void> {
  const payload = body(stream);
  for (let index = 0; index < requestsPerRound; index += 1) {
    const status = await postJson(
      `${platform.base}/chat/completions`,
      { authorization: `Bearer ${platform.key}` },
      payload,
      agent,
    );
    if (status !== 200) throw new Error(`the platform answered ${status}`);
  }
}

/**
 * A platform's CPU time, each reading charged to the segment of requests before it: from the
 * start of one segment to the start of its next, so that what the platform does after its
 * requests — the ledger's flush up to 250 ms later, while the other platform is called — is
 * counted with them.
 */
export class CpuAccount {
  private last: number;
  private pending: 'plain' | 'streamed' | null = null;
  readonly ms = { plain: 0, streamed: 0 };

  constructor(private readonly platform: Platform) {
    this.last = cpuMs(platform.pid);
  }

  /** Charges what was used since the last reading to the segment before it. */
  read(): void {
    const now = cpuMs(this.platform.pid);
    if (this.pending !== null) this.ms[this.pending] += now - this.last;
    this.last = now;
  }

  async segment(stream: boolean, counted: boolean): Promise<void> {
    this.read();
    this.pending = counted ? (stream ? 'streamed' : 'plain') : null;
    await run(this.platform, stream);
  }
}

export interface SpendResult {
  pairs: number;
  requests_each: number;
  unmetered_plain_ms: number;
  metered_plain_ms: number;
  unmetered_streamed_ms: number;
  metered_streamed_ms: number;
  plain_ratio: number;
  streamed_ratio: number;
  /** Each pair of processes' own ratios, to show the spread between runs. */
  pair_ratios: Array<{ plain: number; streamed: number }>;
}

const round3 = (value: number) => Math.round(value * 1000) / 1000;

/**
 * On a machine of several cores, the two platforms run on the same core and everything else (this
 * client, the upstream) elsewhere: a process the scheduler moves between cores, or that shares
 * one with the client at times, varies by several per cent between runs of the same build.
 */
const serverCore = cpus().length - 1;
export function pin(pid: number, core: number): void {
  if (cpus().length < 2) return;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
  } catch {
    // No taskset: the processes run where the scheduler puts them.
  }
}

/** Everything but the platforms: on the cores they do not run on. */
export function pinOthers(pid: number): void {
  pin(pid, 0);
}

/** CPU ms of two platforms over the same requests, plain and streamed. */
export interface TwoTotals {
  a: { plain: number; streamed: number };
  b: { plain: number; streamed: number };
}

/**
 * Starts two platforms (`b` first when `bFirst`), measures them in turns on one core, and stops
 * them: a warm-up, then `rounds` rounds of plain and streamed segments, alternating which goes first.
 */
export async function measureTwo(
  startA: () => Promise<Started>,
  startB: () => Promise<Started>,
  bFirst: boolean,
): Promise<TwoTotals> {
  // Which starts first alternates from pair to pair: of two processes of the same build (both
  // unmetered), the one started second used 1-4 % more CPU per request in three runs here.
  const first = await (bFirst ? startB : startA)();
  const second = await (bFirst ? startA : startB)();
  const [a, b] = bFirst ? [second, first] : [first, second];
  const servers = [a, b];
  for (const { server } of servers) pin(server.pid!, serverCore);
  try {
    const accounts = new Map(servers.map(({ platform }) => [platform, new CpuAccount(platform)]));
    // Warm-up: JIT (a process's CPU per request still falls over its first few thousand
    // requests), connections, the key and budget caches.
    for (let round = 0; round < warmUpRounds; round += 1) {
      for (const account of accounts.values()) {
        await account.segment(false, false);
        await account.segment(true, false);
      }
    }
    for (let round = 0; round < rounds; round += 1) {
      // Which goes first alternates, so that neither always follows the other's garbage.
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const { platform } of order) {
        const account = accounts.get(platform)!;
        await account.segment(false, true);
        await account.segment(true, true);
      }
    }
    // The last segments' flushes.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const account of accounts.values()) account.read();
    return { a: accounts.get(a.platform)!.ms, b: accounts.get(b.platform)!.ms };
  } finally {
    for (const { server } of servers) await stopProcess(server);
  }
}

/** Two configurations over the same requests: ms of CPU per request of each, and their ratios. */
export interface Paired {
  requests_each: number;
  a_plain_ms: number;
  b_plain_ms: number;
  a_streamed_ms: number;
  b_streamed_ms: number;
  /** b ÷ a over every pair. */
  plain_ratio: number;
  streamed_ratio: number;
  /** Each pair of processes' own ratios, to show the spread between runs. */
  pair_ratios: Array<{ plain: number; streamed: number }>;
}

/**
 * Measures `pairs` pairs of processes (configuration a, then b, started by `start(pair)`) one
 * after the other: two processes of one build differ by a few per cent from JIT and
 * garbage-collection timing alone, so one pair says little. Which starts first alternates.
 */
export async function measurePairs(
  startA: (pair: number) => Promise<Started>,
  startB: (pair: number) => Promise<Started>,
): Promise<Paired> {
  const sums = { ap: 0, bp: 0, as: 0, bs: 0 };
  const pairRatios: Paired['pair_ratios'] = [];
  for (let pair = 0; pair < pairs; pair += 1) {
    const { a, b } = await measureTwo(
      () => startA(pair),
      () => startB(pair),
      pair % 2 === 1,
    );
    pairRatios.push({
      plain: round3(b.plain / a.plain),
      streamed: round3(b.streamed / a.streamed),
    });
    sums.ap += a.plain;
    sums.bp += b.plain;
    sums.as += a.streamed;
    sums.bs += b.streamed;
  }
  const requests = pairs * rounds * requestsPerRound;
  return {
    requests_each: requests,
    a_plain_ms: round3(sums.ap / requests),
    b_plain_ms: round3(sums.bp / requests),
    a_streamed_ms: round3(sums.as / requests),
    b_streamed_ms: round3(sums.bs / requests),
    plain_ratio: round3(sums.bp / sums.ap),
    streamed_ratio: round3(sums.bs / sums.as),
    pair_ratios: pairRatios,
  };
}

/** Unmetered (a) against metered (b) processes of the same build. */
export async function measureSpendOverhead(
  directory: string,
  upstreamUrl: string,
  adminKey: string,
): Promise<SpendResult> {
  const start = (metered: boolean) => (pair: number) =>
    startPlatform(
      directory,
      `spend${pair}-${metered ? 'on' : 'off'}`,
      upstreamUrl,
      adminKey,
      metered,
    );
  let paired: Paired;
  try {
    paired = await measurePairs(start(false), start(true));
  } finally {
    closeClient();
  }
  return {
    pairs,
    requests_each: paired.requests_each,
    unmetered_plain_ms: paired.a_plain_ms,
    metered_plain_ms: paired.b_plain_ms,
    unmetered_streamed_ms: paired.a_streamed_ms,
    metered_streamed_ms: paired.b_streamed_ms,
    plain_ratio: paired.plain_ratio,
    streamed_ratio: paired.streamed_ratio,
    pair_ratios: paired.pair_ratios,
  };
}

export function spendMarkdown(spend: SpendResult): string {
  return `## The ledger and a budget on the key

The platform with metering on (a usage record per call, a month budget on the calling key,
SQLite, no Redis) against the same build with \`USAGE_LEDGER=false\`, each its own process over
the same upstream, called in turns (after a warm-up): ${spend.requests_each} sequential requests of
each kind on each, over ${spend.pairs} pairs of processes started one after the other (each
pair's ratios: ${spend.pair_ratios.map((pair) => `${pair.plain} / ${pair.streamed}`).join(', ')}).

| | metering off | ledger + key budget | ratio | target |
|---|---:|---:|---:|---:|
| plain | ${spend.unmetered_plain_ms} | ${spend.metered_plain_ms} | **${spend.plain_ratio}** | ≤ ${spendTarget} |
| streamed | ${spend.unmetered_streamed_ms} | ${spend.metered_streamed_ms} | **${spend.streamed_ratio}** | ≤ ${spendTarget} |

(ms of the server process's user + system CPU time per request, what it did after a segment of
requests — the ledger's flush — counted with them)
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
