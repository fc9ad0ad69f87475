// Starting the service's real entry points as child processes, as users run them.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

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

export interface RunningService {
  child: ChildProcessWithoutNullStreams;
  port: number;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** The run's build of the service (test/support/global-setup.ts), when there is one. */
const builtService = process.env.TEST_BUILT_SERVICE_DIR;

/**
 * Runs `entry` (a built `main.js`; default: this run's build, else src/main.ts under tsx) and
 * resolves once it logs that it listens.
 */
export async function startService(
  env: Record<string, string>,
  entry: string | undefined = builtService === undefined
    ? undefined
    : path.join(builtService, 'main.js'),
): Promise<RunningService> {
  // The free port is found by listening and closing: another process of the run can take it before
  // the service listens (seen once in a loaded run with three workers). Then a new port is tried.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startServiceOnce(env, entry);
    } catch (error) {
      if (attempt >= 5 || !(error instanceof Error) || !error.message.includes('EADDRINUSE')) {
        throw error;
      }
    }
  }
}

async function startServiceOnce(
  env: Record<string, string>,
  entry: string | undefined,
): Promise<RunningService> {
  const port = await freePort();
  const args = entry === undefined ? ['--import', 'tsx', 'src/main.ts'] : [entry];
  const child = spawn(process.execPath, args, {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), ...env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`service did not start:\n${out}\n${err}`)),
      30_000,
    );
    const check = () => {
      if (out.includes('"msg":"listening on')) {
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve();
      }
    };
    child.stdout.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${out}\n${err}`));
    });
  });
  return {
    child,
    port,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Runs a command-line tool (`src/cli/<tool>.ts`, or `<builtDirectory>/cli/<tool>.js`) as
 * `npm run <tool>` would.
 */
export function runCli(
  args: string[],
  env: Record<string, string>,
  tool: 'keys' | 'models' | 'audit' = 'keys',
  builtDirectory: string | undefined = builtService,
): Promise<ProcessOutput> {
  const entry =
    builtDirectory === undefined
      ? ['--import', 'tsx', `src/cli/${tool}.ts`]
      : [`${builtDirectory}/cli/${tool}.js`];
  return runNode([...entry, ...args], env);
}

/** What a finished process printed, and its exit status (null when a signal ended it). */
export interface ProcessOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A command's output; its `code` is never null (a kill or time-out reads as 124, else 1). */
export interface CommandResult extends ProcessOutput {
  code: number;
}

/** Runs a command, collecting its output; never rejects. */
export function runCommand(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        env: options.env ?? process.env,
        cwd: options.cwd,
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code =
          error === null ? 0 : typeof error.code === 'number' ? error.code : error.killed ? 124 : 1;
        resolve({
          code,
          stdout,
          stderr: `${stderr}${error !== null && code !== 0 && stderr === '' ? error.message : ''}`,
        });
      },
    );
  });
}

/**
 * Runs an ES module script (`node --import tsx -e`) in a fresh process from the repository's root,
 * as a suite would load the modules it imports; `env` on top of PATH and HOME alone.
 */
export function runModuleScript(
  script: string,
  env: Record<string, string | undefined>,
): Promise<ProcessOutput> {
  return runNode(['--import', 'tsx', '--input-type=module', '-e', script], env);
}

/** `node <args…>` from the repository's root with `env` on top of PATH and HOME, its output read. */
function runNode(args: string[], env: Record<string, string | undefined>): Promise<ProcessOutput> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: repositoryRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // 'close', not 'exit': the output has been read whole by then.
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
