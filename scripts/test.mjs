// `npm test`: the dashboard's build, the checks and the suite, overlapping as far as their order
// allows, instead of one after another.
//
//   node scripts/test.mjs [vitest arguments…]
//
// The suite (`vitest run` with the arguments given, its output live) starts at once. Beside it the
// dashboard's API types are generated and the dashboard bundled (the lint's type check and the
// bundle read the types); the tests that serve or measure the bundle wait for that step's outcome,
// which it writes to the file TEST_WEB_BUNDLE_OUTCOME names (test/support/web-bundle.ts). The
// format check starts at once and the lint with its type check (oxlint's type-aware rules and
// TypeScript's own check of both projects, `--type-check`) after the types; both run at a lower
// priority, since the suite's test files spend part of their time waiting (on sockets, child
// processes, a browser) and leave a core idle. Each check's output is printed whole when it ends
// (at once if it fails), and any failing step fails the whole after every step has ended.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const started = Date.now();
const seconds = (since) => ((Date.now() - since) / 1000).toFixed(1);

/**
 * Runs one step with its output captured (or, `live`, passed through); resolves with whether it
 * passed. `background`: at a lower priority, so that the suite's processes come first.
 */
function run(name, command, args, { background = false, live = false } = {}) {
  const stepStarted = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: root,
      env: live ? process.env : { ...process.env, FORCE_COLOR: '0' },
      stdio: live ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    if (background && child.pid !== undefined) {
      try {
        setPriority(child.pid, 10);
      } catch {
        // Not allowed here: it runs at the same priority, only the suite a little slower.
      }
    }
    const output = [];
    child.stdout?.on('data', (chunk) => output.push(chunk));
    child.stderr?.on('data', (chunk) => output.push(chunk));
    const finish = (passed, note = '') => {
      const text = Buffer.concat(output).toString('utf8').trimEnd();
      const stream = passed ? process.stdout : process.stderr;
      stream.write(
        `\n── ${name}: ${passed ? 'passed' : 'FAILED'} in ${seconds(stepStarted)} s${note}\n` +
          (text === '' ? '' : `${text}\n`),
      );
      resolve(passed);
    };
    child.on('error', (error) => finish(false, ` (${error.message})`));
    child.on('close', (code, signal) =>
      finish(code === 0, code === 0 ? '' : ` (${signal ?? `exit status ${code}`})`),
    );
  });
}

const outcomeDirectory = mkdtempSync(path.join(tmpdir(), 'platform-test-'));
const bundleOutcome = path.join(outcomeDirectory, 'web-bundle.json');
process.env.TEST_WEB_BUNDLE_OUTCOME = bundleOutcome;

const suite = run('the suite', bin('vitest'), ['run', ...process.argv.slice(2)], { live: true });
const formatCheck = run('format check', bin('oxfmt'), ['--check'], { background: true });
const apiTypes = run('web API types', bin('tsx'), ['web/scripts/generate-api-types.ts']);
const lint = apiTypes.then((generated) =>
  generated
    ? run('lint and type check', bin('oxlint'), ['--type-aware', '--type-check'], {
        background: true,
      })
    : false,
);
const bundle = apiTypes
  .then((generated) => generated && run('web bundle', 'npm', ['run', 'bundle', '-w', 'web']))
  .then((built) => {
    writeFileSync(bundleOutcome, JSON.stringify({ built }));
    return built;
  });

const results = await Promise.all([suite, formatCheck, apiTypes, lint, bundle]);
rmSync(outcomeDirectory, { recursive: true, force: true });
if (results.every(Boolean)) {
  process.stdout.write(`\nnpm test: the checks and the suite passed in ${seconds(started)} s.\n`);
} else {
  process.stderr.write(`\nnpm test: a step failed (see above), after ${seconds(started)} s.\n`);
  process.exitCode = 1;
}
