// Shared benchmark plumbing: child-process servers, free ports, result files.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request, type Agent } from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../', import.meta.url));

/** The catalog entry the benchmarks call: their fake upstream as an OpenAI-compatible model. */
export function benchUpstreamModel(upstreamUrl: string, maxTokens: number) {
  return {
    name: 'bench-upstream',
    provider: 'openai-compatible',
    model: 'gpt-4o-mini',
    base_url: upstreamUrl,
    max_tokens: maxTokens,
    context_length: 8192,
  };
}

/** `count` deployments of the bench's model, all over the same upstream (`d1`, `d2`, …). */
export function benchDeployments(upstreamUrl: string, count: number) {
  return Array.from({ length: count }, (_, index) => ({
    name: `d${index + 1}`,
    base_url: upstreamUrl,
  }));
}

/**
 * A JSON POST over `agent` (keep-alive), its answer read to the end and dropped: resolves with the
 * status. The benchmarks' own client for the requests they count.
 */
export function postJson(
  url: string,
  headers: Record<string, string>,
  body: string,
  agent: Agent,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
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

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        resolve(typeof address === 'object' && address !== null ? address.port : 0),
      );
    });
  });
}

/**
 * Starts a server process with its output in `logFile` (as a log collector would take it, so that
 * reading it costs the load generator nothing) and resolves once `readyUrl` answers.
 */
export async function startServer(
  command: string,
  args: string[],
  env: Record<string, string>,
  logFile: string,
  readyUrl: string,
  /** How long it may take to answer (a server under valgrind takes tens of seconds). */
  readyTimeoutMs = 60_000,
): Promise<ChildProcess> {
  const output = openSync(logFile, 'a');
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', output, output],
  });
  closeSync(output);
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`${args.join(' ')} exited with ${child.exitCode}; see ${logFile}`);
    }
    const ready = await fetch(readyUrl).then(
      () => true,
      () => false,
    );
    if (ready) return child;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${args.join(' ')} did not answer at ${readyUrl}; see ${logFile}`);
}

export function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export function machine() {
  return {
    node: process.version,
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model ?? 'unknown',
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()}`,
  };
}

/** Writes `<name>.json` and `<name>.md` under bench/results/. */
export function writeResults(name: string, json: unknown, markdown: string): string {
  const directory = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(directory, { recursive: true });
  writeFileSync(`${directory}${name}.json`, `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(`${directory}${name}.md`, markdown);
  return `${directory}${name}.md`;
}

/** Clock ticks per second of /proc's CPU times. */
export const clockTicks = (() => {
  const result = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const ticks = Number(result.stdout?.trim());
  return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
})();

/** User plus system CPU time, in ms, in a /proc `stat` file (a process's or one thread's). */
function statCpuMs(file: string): number {
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command: state is field 3, utime 14 and stime 15 (1-based, from the pid).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}

/** User plus system CPU time of a process so far, in ms (Linux /proc). */
export function cpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** A process's CPU time at one moment: `/proc`'s total and each live thread's own. */
export interface CpuReading {
  /** User plus system time from `/proc/<pid>/stat`, every thread's (10 ms steps). */
  readonly statMs: number;
  /** Each live thread's time on the CPU in ns, from its `schedstat` (exact). */
  readonly threads: ReadonlyMap<string, number>;
}

export function cpuReading(pid: number): CpuReading {
  const threads = new Map<string, number>();
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    try {
      threads.set(
        thread,
        Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[0]),
      );
    } catch {
      // The thread ended between the listing and the read: the fallback below covers it.
    }
  }
  return { statMs: cpuMs(pid), threads };
}

/**
 * CPU time (ms) spent between two readings: the threads' exact times when every thread of the
 * first reading still runs at the second (a thread started between them counts whole), else the
 * `/proc` total's difference, in 10 ms steps (a thread that ended took its time with it).
 */
export function cpuSpentMs(before: CpuReading, after: CpuReading): number {
  let ns = 0;
  for (const [thread, earlier] of before.threads) {
    const later = after.threads.get(thread);
    if (later === undefined || later < earlier) return after.statMs - before.statMs;
    ns += later - earlier;
  }
  for (const [thread, later] of after.threads) if (!before.threads.has(thread)) ns += later;
  return ns / 1e6;
}

/**
 * CPU time (ms) of a process's threads other than its main one so far: V8's helper threads (the
 * optimising compiler's, the collector's) and libuv's (Linux /proc).
 */
export function helperThreadsCpuMs(pid: number): number {
  return cpuMs(pid) - statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

/**
 * The built service (`dist/main.js`) on a SQLite file in `directory`, with a rate-limit tier
 * roomy enough that a benchmark never meets it, answering at the returned base URL.
 */
export async function startBuiltService(
  directory: string,
  adminKey: string,
): Promise<{ server: ChildProcess; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const configFile = path.join(directory, 'platform.config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      rate_limits: {
        default_tier: 'bench',
        tiers: { bench: { per_minute: 1_000_000, per_day: 10_000_000 } },
      },
    }),
  );
  const server = await startServer(
    process.execPath,
    ['dist/main.js'],
    {
      PORT: String(port),
      DATABASE_URL: `sqlite:${path.join(directory, 'platform.db')}`,
      PLATFORM_ADMIN_KEY: adminKey,
      PLATFORM_CONFIG: configFile,
      MODEL_AUTO_PULL: 'false',
      LOG_LEVEL: 'warn',
    },
    path.join(directory, 'service.log'),
    `${base}/v1/health`,
  );
  return { server, base };
}
