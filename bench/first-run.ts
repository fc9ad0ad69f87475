// A newcomer's first hour, timed: `npm ci` on a fresh clone (with an empty npm cache, as on a new
// machine, unless BENCH_FIRST_RUN_WARM_CACHE=1), the size of node_modules, the first `npm start`
// until /v1/health answers, a second `npm start` (nothing changed: nothing rebuilt), and the first
// chat after health answers, through a config file that points the platform at an
// OpenAI-compatible server (the fake upstream). Results: bench/results/first-run.{json,md}.
//
//   npm run bench -- first-run
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { freePort, machine, root, startServer, stopProcess, writeResults } from './support.js';

function seconds(from: number): number {
  return Math.round((performance.now() - from) / 100) / 10;
}

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const started = performance.now();
  execFileSync(command, args, { cwd, env: { ...process.env, ...env }, stdio: 'ignore' });
  return seconds(started);
}

/** `npm start` in `cwd` until health answers; the process group, to stop npm and node together. */
async function npmStart(cwd: string, env: Record<string, string>, port: number) {
  const started = performance.now();
  const child: ChildProcess = spawn('npm', ['start'], {
    cwd,
    env: { ...process.env, ...env },
    stdio: 'ignore',
    detached: true,
  });
  const health = `http://127.0.0.1:${port}/v1/health`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}`);
    if (
      await fetch(health).then(
        (response) => response.ok,
        () => false,
      )
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, seconds: seconds(started) };
}

function stopGroup(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    process.kill(-child.pid!, 'SIGTERM');
  });
}

export async function runFirstRunBenchmark(): Promise<void> {
  const directory = mkdtempSync(path.join(tmpdir(), 'bench-first-run-'));
  const clone = path.join(directory, 'platform');
  const warmCache = process.env.BENCH_FIRST_RUN_WARM_CACHE === '1';
  try {
    execFileSync('git', ['clone', '-q', root, clone]);
    const cacheEnv: Record<string, string> = warmCache
      ? {}
      : { npm_config_cache: path.join(directory, 'npm-cache') };
    process.stdout.write(`npm ci (${warmCache ? 'warm' : 'empty'} npm cache)…\n`);
    const npmCiSeconds = run('npm', ['ci'], clone, cacheEnv);
    const nodeModulesMiB = Math.round(
      Number(
        execFileSync('du', ['-sm', path.join(clone, 'node_modules')])
          .toString()
          .split('\t')[0],
      ),
    );

    const upstreamPort = await freePort();
    const upstreamUrl = `http://127.0.0.1:${upstreamPort}/v1`;
    const upstream = await startServer(
      process.execPath,
      ['--import', 'tsx', 'bench/fake-upstream-server.ts', String(upstreamPort)],
      {},
      path.join(directory, 'upstream.log'),
      `${upstreamUrl}/models`,
    );
    const configFile = path.join(directory, 'platform.config.json');
    // The README's "point it at your model", as a user would write it.
    writeFileSync(
      configFile,
      JSON.stringify({
        default_model: 'my-model',
        models: [
          {
            name: 'my-model',
            provider: 'openai-compatible',
            model: 'gpt-4o-mini',
            base_url: upstreamUrl,
          },
        ],
      }),
    );
    const adminKey = generateApiKey();
    const port = await freePort();
    const env = {
      PORT: String(port),
      DATABASE_URL: `sqlite:${path.join(directory, 'platform.db')}`,
      PLATFORM_ADMIN_KEY: adminKey,
      PLATFORM_CONFIG: configFile,
      OPENAI_API_KEY: 'unused',
    };
    try {
      process.stdout.write('first npm start…\n');
      const first = await npmStart(clone, env, port);
      const chatStarted = performance.now();
      const chat = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'my-model', messages: [{ role: 'user', content: 'Hello' }] }),
      });
      await chat.arrayBuffer();
      const firstChatMs = Math.round(performance.now() - chatStarted);
      if (!chat.ok) throw new Error(`the first chat answered ${chat.status}`);
      await stopGroup(first.child);
      process.stdout.write('second npm start…\n');
      const second = await npmStart(clone, env, port);
      await stopGroup(second.child);

      const results = {
        machine: machine(),
        npm_cache: warmCache ? 'warm' : 'empty',
        npm_ci_seconds: npmCiSeconds,
        node_modules_mib: nodeModulesMiB,
        first_start_to_health_seconds: first.seconds,
        first_chat_after_health_ms: firstChatMs,
        second_start_to_health_seconds: second.seconds,
      };
      const markdown = `# First run

\`npm run bench -- first-run\`: a fresh \`git clone\` of the checkout, then what a newcomer runs.
Node ${results.machine.node}, ${results.machine.cpus} CPUs; npm cache ${results.npm_cache}.

| Step | Result |
| --- | --- |
| \`npm ci\` | ${npmCiSeconds} s |
| \`node_modules\` | ${nodeModulesMiB} MiB |
| first \`npm start\` until /v1/health answers (builds the service and the dashboard) | ${first.seconds} s |
| first chat (\`/v1/chat/completions\`, OpenAI-compatible model) right after health | ${firstChatMs} ms |
| second \`npm start\` until health (nothing changed, nothing rebuilt) | ${second.seconds} s |
`;
      process.stdout.write(markdown);
      writeResults('first-run', results, markdown);
    } finally {
      await stopProcess(upstream);
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
