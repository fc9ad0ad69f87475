// Benchmark: the resident memory of the built service (`node dist/main.js`) once it has started
// and settled, with the default configuration (a fresh data directory, SQLite, the built-in model
// catalog) and with everything configured (PostgreSQL, Redis, a local GGUF model, speech engines
// preloaded); then, in the second, after one use of each optional subsystem (a local chat answer,
// a synthesis, an intent with entities, an HTML document read), which shows what first use loads.
// Target: idle RSS ≤ 110 MiB with the default configuration.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { writeTinyLlamaGguf } from '../test/support/gguf/tiny-llama.js';
import {
  cpuReading,
  cpuSpentMs,
  freePort,
  machine,
  startServer,
  stopProcess,
  writeResults,
} from './support.js';

const targetMiB = 110;
/** How long the started service is left alone before sampling, and how often it is sampled. */
// Idle means idle to V8 too: its memory reducer shrinks the heap about 30–40 s after the last
// activity (here: 183 MiB at 10 s and 30 s after start, 124 MiB from 40 s on, for the default).
const settleMs = Number(process.env.BENCH_SETTLE_MS ?? 60_000);
const samples = Number(process.env.BENCH_SAMPLES ?? 5);
const sampleEveryMs = 1000;
const postgresUrl =
  process.env.BENCH_POSTGRES_URL ?? `postgres://${userInfo().username}@127.0.0.1:5432/test`;
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/** VmRSS and its anonymous part (heap, stacks) from /proc, in bytes. */
function residentOf(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024;
  return { rss: field('VmRSS'), anon: field('RssAnon') };
}

interface Sample {
  rss_mib: number;
  rss_anon_mib: number;
  /** CPU time the process used while sampled, per second (its timers, when nothing calls it). */
  cpu_ms_per_s: number;
}

async function sampleSettled(child: ChildProcess): Promise<Sample> {
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const taken: { rss: number; anon: number }[] = [];
  const cpuBefore = cpuReading(child.pid!);
  const started = Date.now();
  for (let index = 0; index < samples; index += 1) {
    taken.push(residentOf(child.pid!));
    await new Promise((resolve) => setTimeout(resolve, sampleEveryMs));
  }
  const cpuMsPerSecond =
    (cpuSpentMs(cpuBefore, cpuReading(child.pid!)) * 1000) / (Date.now() - started);
  // The median sample: a timer's allocation between two samples moves RSS by a few pages.
  const sorted = [...taken].sort((first, second) => first.rss - second.rss);
  const middle = sorted[Math.floor(sorted.length / 2)]!;
  return {
    rss_mib: mib(middle.rss),
    rss_anon_mib: mib(middle.anon),
    cpu_ms_per_s: Math.round(cpuMsPerSecond * 100) / 100,
  };
}

async function call(base: string, key: string, method: string, route: string, body?: unknown) {
  const response = await fetch(`${base}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** One use of each subsystem that is loaded on first use. */
async function useEverything(base: string, key: string): Promise<string[]> {
  const used: string[] = [];
  await call(base, key, 'POST', '/v1/chat', {
    model: 'tiny-local',
    user_id: 'bench',
    max_tokens: 4,
    messages: [{ role: 'user', content: 'Hello' }],
  });
  used.push('local chat (node-llama-cpp)');
  await call(base, key, 'POST', '/v1/speech/synthesize', {
    text: 'Hello from the platform.',
    model: 'espeak-ng',
    format: 'mp3',
  });
  used.push('speech synthesis (audio threads, eSpeak NG, MP3 encoder)');
  await call(base, key, 'POST', '/v1/routing/intent', {
    message: 'Book a table in Paris for Anna next Friday at 7pm, budget $200',
  });
  used.push('intent with entities (compromise, chrono-node, linkify-it)');
  const knowledgeBase = await call(base, key, 'POST', '/v1/knowledge-bases', { name: 'bench' });
  await call(base, key, 'POST', `/v1/knowledge-bases/${String(knowledgeBase.id)}/documents`, {
    title: 'page',
    content_type: 'text/html',
    content: '<html><body><main><h1>Title</h1><p>Some text to index.</p></main></body></html>',
  });
  used.push('HTML document (linkedom)');
  return used;
}

/** The floor: Node answering HTTP and nothing else. */
const bareServer = `require('node:http').createServer((q, s) => s.end('{"status":"ok"}')).listen(Number(process.env.PORT), '127.0.0.1')`;

interface Scenario {
  name: 'bare' | 'default' | 'everything';
  label: string;
  idle: Sample;
  afterUse: (Sample & { used: string[] }) | null;
}

export async function runMemoryBenchmark(): Promise<void> {
  const directory = mkdtempSync(path.join(tmpdir(), 'bench-memory-'));
  const adminKey = generateApiKey();
  const scenarios: Scenario[] = [];
  let child: ChildProcess | undefined;
  const schema = `bench_memory_${randomBytes(4).toString('hex')}`;
  let schemaCreated = false;
  try {
    // 0. For scale: a bare Node HTTP server.
    {
      const port = await freePort();
      child = await startServer(
        process.execPath,
        ['-e', bareServer],
        { PORT: String(port) },
        path.join(directory, 'bare.log'),
        `http://127.0.0.1:${port}/`,
      );
      scenarios.push({
        name: 'bare',
        label: 'for scale: a bare Node HTTP server (node:http, nothing else)',
        idle: await sampleSettled(child),
        afterUse: null,
      });
      await stopProcess(child);
      child = undefined;
    }

    // 1. The default configuration: nothing but a fresh data directory.
    {
      const data = path.join(directory, 'default');
      const port = await freePort();
      child = await startServer(
        process.execPath,
        ['dist/main.js'],
        {
          PORT: String(port),
          DATABASE_URL: `sqlite:${path.join(data, 'platform.db')}`,
          MODELS_DIR: path.join(data, 'models'),
          PLATFORM_ADMIN_KEY: adminKey,
        },
        path.join(directory, 'default.log'),
        `http://127.0.0.1:${port}/v1/health`,
      );
      scenarios.push({
        name: 'default',
        label: 'default configuration (SQLite, built-in catalog)',
        idle: await sampleSettled(child),
        afterUse: null,
      });
      await stopProcess(child);
      child = undefined;
    }

    // 2. Everything configured.
    {
      const admin = new pg.Client({ connectionString: postgresUrl });
      await admin.connect();
      await admin.query(`create schema ${schema}`);
      await admin.end();
      schemaCreated = true;
      const databaseUrl = new URL(postgresUrl);
      databaseUrl.searchParams.set('options', `-c search_path=${schema}`);
      const modelFile = path.join(directory, 'tiny-llama.gguf');
      await writeTinyLlamaGguf(modelFile);
      const configFile = path.join(directory, 'everything.config.json');
      writeFileSync(
        configFile,
        JSON.stringify({
          default_model: 'tiny-local',
          models: [
            {
              name: 'tiny-local',
              provider: 'local',
              file: modelFile,
              max_tokens: 64,
              context_length: 512,
              threads: 1,
              parallel: 1,
            },
            { name: 'gpt-4o-mini', provider: 'openai', model: 'gpt-4o-mini' },
            { name: 'claude-3-5-haiku', provider: 'anthropic', model: 'claude-3-5-haiku-latest' },
            {
              name: 'espeak-ng',
              provider: 'espeak-ng',
              model: 'espeak-ng',
              type: 'speech',
              default_voice: 'en-us',
            },
            {
              name: 'pocketsphinx-en-us',
              provider: 'pocketsphinx',
              model: 'en-us',
              type: 'transcription',
            },
          ],
          speech: { preload: true },
          rate_limits: {
            default_tier: 'bench',
            tiers: { bench: { per_minute: 1_000_000, per_day: 1_000_000 } },
          },
        }),
      );
      const port = await freePort();
      child = await startServer(
        process.execPath,
        ['dist/main.js'],
        {
          PORT: String(port),
          DATABASE_URL: databaseUrl.toString(),
          REDIS_URL: redisUrl,
          MODELS_DIR: path.join(directory, 'models'),
          PLATFORM_ADMIN_KEY: adminKey,
          PLATFORM_CONFIG: configFile,
        },
        path.join(directory, 'everything.log'),
        `http://127.0.0.1:${port}/v1/health`,
      );
      const idle = await sampleSettled(child);
      const used = await useEverything(`http://127.0.0.1:${port}`, adminKey);
      const afterUse = { ...(await sampleSettled(child)), used };
      scenarios.push({
        name: 'everything',
        label: 'everything configured (PostgreSQL, Redis, local GGUF model, speech preloaded)',
        idle,
        afterUse,
      });
      await stopProcess(child);
      child = undefined;
    }
  } finally {
    if (child !== undefined) await stopProcess(child);
    if (schemaCreated) {
      const cleaner = new pg.Client({ connectionString: postgresUrl });
      await cleaner.connect();
      await cleaner.query(`drop schema if exists ${schema} cascade`);
      await cleaner.end();
    }
    rmSync(directory, { recursive: true, force: true });
  }

  const defaultIdle = scenarios.find((scenario) => scenario.name === 'default')!.idle.rss_mib;
  const json = {
    machine: machine(),
    settle_ms: settleMs,
    samples,
    target_idle_rss_mib: targetMiB,
    meets_target: defaultIdle <= targetMiB,
    scenarios,
  };
  const rows = scenarios.flatMap((scenario) => [
    `| ${scenario.label}, idle | ${scenario.idle.rss_mib} | ${scenario.idle.rss_anon_mib} | ${scenario.idle.cpu_ms_per_s} |`,
    ...(scenario.afterUse === null
      ? []
      : [
          `| ${scenario.label}, after one use of: ${scenario.afterUse.used.join('; ')} | ${scenario.afterUse.rss_mib} | ${scenario.afterUse.rss_anon_mib} | ${scenario.afterUse.cpu_ms_per_s} |`,
        ]),
  ]);
  const markdown = `# Memory

\`npm run bench -- memory\`: \`node dist/main.js\` started, left alone ${settleMs / 1000} s after
\`/v1/health\` first answered, then RSS read from \`/proc/<pid>/status\` ${samples} times a second
apart (the median shown), and the CPU time it used meanwhile (every thread's, from \`/proc\`: what
its timers cost when nothing calls it). Node ${json.machine.node}, ${json.machine.cpus} CPUs. The wait lets V8's
memory reducer run: it shrinks the heap grown by start-up's garbage some 30–40 s after the last
activity (5 s after start the default configuration holds about 120 MiB).

| Configuration | RSS (MiB) | of it anonymous (MiB) | CPU while sampled (ms per s) |
| --- | --- | --- | --- |
${rows.join('\n')}

Target: idle RSS ≤ ${targetMiB} MiB with the default configuration — ${json.meets_target ? 'met' : 'not met'} (${defaultIdle} MiB).

`;
  const written = writeResults('memory', json, markdown);
  process.stdout.write(`${markdown}\n(${written})\n`);
}
