// Container tooling for the image and compose tests: podman as scripts/container/base-images.sh
// prepares it on a machine without a registry (rootful, its storage under CONTAINERS_DIR, default
// /tmp/containers, with the containers.conf it writes there), or a plain podman whose base image
// can be found. Without it the tests are skipped and say why and how to enable them; with
// TEST_CONTAINERS=required (as .ci/run sets after preparing podman) they fail instead.
//
// The image is built from a clean clone of HEAD (uncommitted files are not in it), once per process
// and one process at a time (a lock file): the second build is all cache hits. In a whole run the
// containers project's global setup starts it before the first test file, and it runs while the
// other files do; the container files, started later, wait for it.
// TEST_IMAGE_CONTEXT=worktree builds from the working tree instead, while developing.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { repositoryRoot, runCommand, type CommandResult } from './process.js';
import { untilWritten } from './written-file.js';

export const baseImage = 'docker.io/library/node:20-bookworm-slim';
export const imageTag = 'localhost/conversational-ai-platform:test';

export interface Podman {
  /** `podman <args…>`, with this machine's storage options. */
  run(args: string[], options?: { timeoutMs?: number }): Promise<CommandResult>;
  /** `podman <args…>`; throws with its output unless it exits 0. */
  ok(args: string[], options?: { timeoutMs?: number }): Promise<string>;
  /** The environment and command prefix, for tools that call podman themselves. */
  readonly env: NodeJS.ProcessEnv;
  readonly prefix: string[];
}

function podmanFor(env: NodeJS.ProcessEnv, prefix: string[]): Podman {
  const run = (args: string[], options: { timeoutMs?: number } = {}) =>
    runCommand('podman', [...prefix, ...args], { env, timeoutMs: options.timeoutMs });
  return {
    env,
    prefix,
    run,
    async ok(args, options) {
      const result = await run(args, options);
      if (result.code !== 0) {
        throw new Error(
          `podman ${args.join(' ')} exited ${result.code}:\n${result.stdout}\n${result.stderr}`,
        );
      }
      return result.stdout;
    },
  };
}

const howToEnable =
  'To run them: `bash scripts/container/base-images.sh` (installs podman with apt and builds the ' +
  'base images where no registry can be reached; needs root), or install podman and `podman pull ' +
  'node:20-bookworm-slim`.';

/** Podman as this machine runs it, or why the container tests cannot run here. */
export async function findPodman(): Promise<{ podman: Podman } | { reason: string }> {
  const directory = process.env.CONTAINERS_DIR ?? '/tmp/containers';
  const configured = existsSync(path.join(directory, 'containers.conf'));
  const env = configured
    ? { ...process.env, CONTAINERS_CONF: path.join(directory, 'containers.conf') }
    : process.env;
  const prefix = configured
    ? [
        '--root',
        path.join(directory, 'storage'),
        '--runroot',
        path.join(directory, 'run'),
        '--storage-driver=overlay',
      ]
    : [];
  const podman = podmanFor(env, prefix);
  const version = await podman.run(['version', '--format', '{{.Client.Version}}']);
  if (version.code !== 0) {
    return { reason: `podman does not run here (${version.stderr.trim().split('\n')[0]}).` };
  }
  const base = await podman.run(['image', 'exists', baseImage]);
  if (base.code !== 0) {
    return { reason: `podman runs, but the base image ${baseImage} is not in its storage.` };
  }
  return { podman };
}

/** Prints why `suite` is skipped (or throws, when TEST_CONTAINERS=required). */
export function containersMissing(suite: string, reason: string): void {
  const message = `[containers] ${reason} ${suite} SKIPPED. ${howToEnable}`;
  if (process.env.TEST_CONTAINERS === 'required') {
    throw new Error(`${message} (TEST_CONTAINERS=required: failing instead of skipping.)`);
  }
  process.stdout.write(`\n${message}\n`);
}

/** The build's context: a clone of HEAD, or the working tree; and how to remove it. */
async function buildContext(): Promise<{ directory: string; source: string; remove(): void }> {
  const worktree = { directory: repositoryRoot, source: 'the working tree', remove: () => {} };
  if (process.env.TEST_IMAGE_CONTEXT === 'worktree') return worktree;
  if (!existsSync(path.join(repositoryRoot, '.git'))) {
    process.stdout.write(
      '[containers] not a git checkout: the image is built from the files here\n',
    );
    return worktree;
  }
  const parent = mkdtempSync(path.join(tmpdir(), 'platform-image-clone-'));
  const directory = path.join(parent, 'clone');
  const cloned = await runCommand('git', ['clone', '--quiet', repositoryRoot, directory]);
  if (cloned.code !== 0) throw new Error(`git clone failed: ${cloned.stderr}`);
  const head = await runCommand('git', ['-C', directory, 'rev-parse', '--short', 'HEAD']);
  return {
    directory,
    source: `a clean clone of HEAD (${head.stdout.trim()})`,
    remove: () => rmSync(parent, { recursive: true, force: true }),
  };
}

export interface BuiltImage {
  tag: string;
  source: string;
  buildSeconds: number;
  sizeBytes: number;
}

let built: Promise<BuiltImage> | undefined;
let awaited: Promise<BuiltImage> | undefined;

/**
 * Where the run's background build (test/support/image-build-setup.ts) writes its outcome, set in
 * the environment the test workers inherit.
 */
const backgroundBuildFile = 'TEST_IMAGE_BUILD_FILE';

type BuildOutcome = { image: BuiltImage } | { error: string };

/**
 * The image this run's tests use: the one the run's global setup started building before the first
 * test file (awaited here), or, where none was started, one built here, once per process.
 */
export function buildImage(podman: Podman): Promise<BuiltImage> {
  const file = process.env[backgroundBuildFile];
  if (file === undefined) return buildImageNow(podman);
  awaited ??= (async () => {
    await untilWritten(file);
    const outcome = JSON.parse(readFileSync(file, 'utf8')) as BuildOutcome;
    if ('error' in outcome) throw new Error(outcome.error);
    return outcome.image;
  })();
  return awaited;
}

/**
 * Starts building the image in this process without waiting for it (the containers project's
 * global setup, so that the build runs while the other test files do); the returned function waits
 * for it to end. Without podman nothing starts: the tests say why when they run.
 */
export async function startBackgroundBuild(): Promise<() => Promise<void>> {
  const found = await findPodman();
  if ('reason' in found) return () => Promise.resolve();
  const directory = mkdtempSync(path.join(tmpdir(), 'platform-image-build-'));
  const file = path.join(directory, 'outcome.json');
  const building = buildImageNow(found.podman).then(
    (image): BuildOutcome => ({ image }),
    (error: unknown): BuildOutcome => ({
      error: error instanceof Error ? error.message : String(error),
    }),
  );
  const written = building.then((outcome) => {
    // Written whole under another name, then renamed: a reader never sees half of it.
    writeFileSync(`${file}.partial`, JSON.stringify(outcome));
    renameSync(`${file}.partial`, file);
  });
  process.env[backgroundBuildFile] = file;
  return async () => {
    await written;
    rmSync(directory, { recursive: true, force: true });
  };
}

/** Builds the image (once per process, one process at a time); its build log goes to `logFile`. */
function buildImageNow(podman: Podman): Promise<BuiltImage> {
  built ??= (async () => {
    const lockTarget = path.join(tmpdir(), 'platform-image-build');
    writeFileSync(lockTarget, '');
    const release = await lockfile.lock(lockTarget, {
      retries: { retries: 2000, minTimeout: 500, maxTimeout: 1000 },
    });
    const context = await buildContext();
    try {
      const started = performance.now();
      const logFile = path.join(tmpdir(), `platform-image-build-${process.pid}.log`);
      const result = await buildTo(podman, context.directory, logFile);
      if (result !== 0) {
        const log = (await runCommand('tail', ['-n', '60', logFile])).stdout;
        throw new Error(`podman build exited ${result} (whole log: ${logFile}):\n${log}`);
      }
      const buildSeconds = (performance.now() - started) / 1000;
      const size = await podman.ok(['image', 'inspect', '--format', '{{.Size}}', imageTag]);
      return {
        tag: imageTag,
        source: context.source,
        buildSeconds,
        sizeBytes: Number(size.trim()),
      };
    } finally {
      context.remove();
      await release();
    }
  })();
  return built;
}

function buildTo(podman: Podman, context: string, logFile: string): Promise<number> {
  return new Promise((resolve) => {
    const args = [
      ...podman.prefix,
      'build',
      '--pull=missing',
      '--network=host',
      // HEALTHCHECK is kept only in the Docker image format (OCI has no such field).
      '--format=docker',
      '-t',
      imageTag,
      context,
    ];
    const child = spawn('podman', args, { env: podman.env, stdio: ['ignore', 'pipe', 'pipe'] });
    // At a lower priority (its processes inherit it): in a whole run it builds beside the test
    // files, which come first; the container files, which wait for it, start minutes later.
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, 10);
      } catch {
        // Not allowed here: it builds at the same priority.
      }
    }
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.once('close', (code) => {
      writeFileSync(logFile, Buffer.concat(chunks));
      resolve(code ?? 1);
    });
  });
}

/** Polls `url` until it answers 2xx; resolves with the seconds that took from `since`. */
export async function waitForHealth(
  url: string,
  since: number,
  timeoutMs = 120_000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return (performance.now() - since) / 1000;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
