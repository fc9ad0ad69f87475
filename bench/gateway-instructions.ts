// The gateway benchmark's instruction count: the user-space instructions a plain chat completion
// costs the platform, the bare proxy and the Fastify floor (bench/fastify-proxy.ts: one route that
// parses and forwards the body), counted by valgrind's callgrind (a simulated CPU), so
// that the figure does not move with the machine's speed or its other load as CPU time does
// (the bare proxy's reads the same from run to run; the platform's has two modes, about 10 %
// apart, as V8 optimises Node's own `process.nextTick` one way or the other in each process:
// bench/results/gateway-profile.md).
// Each server runs under `valgrind --tool=callgrind --instr-atstart=no`, about 50 times slower
// than it runs alone; after a warm-up the count is switched on for a fixed number of requests
// with `callgrind_control`. What the kernel does (the sockets' system calls) is not counted, and
// work the service does on a timer (the ledger's batch every 250 ms) weighs more per request
// than at full speed. `BENCH_GATEWAY_PART=instructions npm run bench -- gateway` prints it.
import { execFileSync, spawnSync, type ChildProcess } from 'node:child_process';
import { Agent } from 'node:http';
import path from 'node:path';
import { startGatewayPlatform } from './gateway-platform.js';
import { freePort, postJson, startServer, stopProcess } from './support.js';

const warmUpRequests = Number(process.env.BENCH_INSTRUCTIONS_WARM_UP ?? 4000);
const countedRequests = Number(process.env.BENCH_INSTRUCTIONS_REQUESTS ?? 1000);
/**
 * How many platform processes are counted, one after another: the lowest main-thread count is
 * the one compared (the two modes above); every run's is listed. Without the baselines when
 * BENCH_INSTRUCTIONS_BASELINES=false, to compare two builds of the platform quickly.
 */
const platformRuns = Number(process.env.BENCH_INSTRUCTIONS_PLATFORM_RUNS ?? 1);
const countBaselines = process.env.BENCH_INSTRUCTIONS_BASELINES !== 'false';
/** Starting under valgrind takes tens of seconds. */
const readyTimeoutMs = 300_000;

const callgrind = (outFile: string) => [
  'valgrind',
  '--tool=callgrind',
  '--instr-atstart=no',
  // V8 writes and rewrites machine code in its heap.
  '--smc-check=all-non-file',
  `--callgrind-out-file=${outFile}`,
];

function requireValgrind(): void {
  const found = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
  if (found.status !== 0) {
    throw new Error(
      "BENCH_GATEWAY_PART=instructions needs valgrind (Debian: 'apt-get install valgrind').",
    );
  }
}

/** One counted request: a POST answered 200. */
async function post(url: string, headers: Record<string, string>, body: string, agent: Agent) {
  const status = await postJson(url, headers, body, agent);
  if (status !== 200) throw new Error(`${url} answered ${status}`);
}

/** Thousand instructions per request: the main thread's, and every thread's. */
interface Counted {
  main_thread: number;
  all_threads: number;
}

/** Warms `url` up, then counts the instructions of `countedRequests` more requests. */
async function countRequests(
  server: ChildProcess,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<Counted> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const control = (...args: string[]) =>
    execFileSync('callgrind_control', [...args, String(server.pid)], {
      encoding: 'utf8',
      // Its "sending command …" lines go to stderr.
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  try {
    for (let index = 0; index < warmUpRequests; index += 1) await post(url, headers, body, agent);
    control('--zero');
    control('--instr=on');
    for (let index = 0; index < countedRequests; index += 1) await post(url, headers, body, agent);
    // One line per thread: `Th <n>   <instructions>` (the first is the main thread).
    const events = control('-e');
    control('--instr=off');
    const threads = [...events.matchAll(/Th\s*(\d+)\s+([\d,]+)/g)].map((match) =>
      Number(match[2]!.replaceAll(',', '')),
    );
    if (threads.length === 0) throw new Error(`callgrind_control reported no counts:\n${events}`);
    const perRequest = (instructions: number) =>
      Math.round(instructions / countedRequests / 100) / 10;
    return {
      main_thread: perRequest(threads[0]!),
      all_threads: perRequest(threads.reduce((sum, count) => sum + count, 0)),
    };
  } finally {
    agent.destroy();
  }
}

const ratioOf = (counted: Counted, baseline: Counted) =>
  Math.round((counted.main_thread / baseline.main_thread) * 100) / 100;

/** A baseline server (a script of bench/ taking its port and the upstream's URL), counted. */
async function countScript(
  directory: string,
  name: string,
  script: string,
  upstreamUrl: string,
  body: string,
): Promise<Counted> {
  const port = await freePort();
  const [command, ...args] = [
    ...callgrind(path.join(directory, `${name}.callgrind`)),
    process.execPath,
    '--import',
    'tsx',
    script,
    String(port),
    upstreamUrl,
  ];
  const server = await startServer(
    command,
    args,
    {},
    path.join(directory, `${name}-valgrind.log`),
    `http://127.0.0.1:${port}/`,
    readyTimeoutMs,
  );
  try {
    return await countRequests(server, `http://127.0.0.1:${port}/chat/completions`, {}, body);
  } finally {
    await stopProcess(server);
  }
}

export async function measureInstructions(
  directory: string,
  upstreamUrl: string,
  adminKey: string,
  deployments: number,
) {
  requireValgrind();
  const body = (model: string) =>
    JSON.stringify({
      model,
      messages: [{ role: 'user', content: 'Say hello to the benchmark in a few words.' }],
    });
  // The servers are counted one after the other: valgrind runs a process's threads one at a
  // time, and the counts do not depend on what else runs.
  const bareCounted = countBaselines
    ? await countScript(
        directory,
        'bare-proxy',
        'bench/bare-proxy.ts',
        upstreamUrl,
        body('gpt-4o-mini'),
      )
    : undefined;
  const floorCounted = countBaselines
    ? await countScript(
        directory,
        'fastify-floor',
        'bench/fastify-proxy.ts',
        upstreamUrl,
        body('gpt-4o-mini'),
      )
    : undefined;
  const platformRunsCounted: Counted[] = [];
  for (let run = 0; run < platformRuns; run += 1) {
    const started = await startGatewayPlatform({
      directory,
      name: `platform-valgrind-${run}`,
      upstreamUrl,
      adminKey,
      deployments,
      launcher: callgrind(path.join(directory, `platform-${run}.callgrind`)),
      readyTimeoutMs,
    });
    try {
      platformRunsCounted.push(
        await countRequests(
          started.server,
          `${started.base}/v1/chat/completions`,
          { authorization: `Bearer ${adminKey}` },
          body('bench-upstream'),
        ),
      );
    } finally {
      await stopProcess(started.server);
    }
  }
  const platformCounted = platformRunsCounted.reduce((lowest, counted) =>
    counted.main_thread < lowest.main_thread ? counted : lowest,
  );
  return {
    warm_up_requests: warmUpRequests,
    counted_requests: countedRequests,
    deployments,
    bare_proxy_k_instructions: bareCounted,
    fastify_floor_k_instructions: floorCounted,
    platform_k_instructions: platformCounted,
    platform_runs_main_thread: platformRunsCounted.map((counted) => counted.main_thread),
    main_thread_ratio: bareCounted && ratioOf(platformCounted, bareCounted),
    main_thread_ratio_to_fastify_floor: floorCounted && ratioOf(platformCounted, floorCounted),
  };
}
