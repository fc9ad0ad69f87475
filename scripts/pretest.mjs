// What `npm test` runs before the tests: the dashboard build and the checks (`npm run bundle -w
// web` and `npm run check`), as many at a time as their order allows instead of one after another.
// The web app's API types are generated first, since both its bundle and the lint (whose type
// check reads web/src) need them; the format check needs nothing and starts at once. The lint is
// oxlint with its type-aware rules and TypeScript's own type check of both projects (`--type-check`,
// so the web bundle skips its `tsc`). Each step's output is printed whole when it ends, under its
// name; any step that fails fails the whole (after every step has ended), as the sequential scripts
// did.
//
//   node scripts/pretest.mjs
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = 'npm';
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

/** Runs one step with its output captured; resolves with whether it passed. */
function run(name, command, args, { background = false } = {}) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, FORCE_COLOR: '0' } });
    if (background && child.pid !== undefined) {
      try {
        setPriority(child.pid, 10);
      } catch {
        // Not allowed here: it runs at the same priority, only slower.
      }
    }
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    const finish = (passed, note = '') => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const text = Buffer.concat(output).toString('utf8').trimEnd();
      process.stdout.write(
        `\n── ${name}: ${passed ? 'passed' : 'FAILED'} in ${seconds} s${note}\n` +
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

const started = Date.now();
const apiTypesThenDependents = run('web API types', bin('tsx'), [
  'web/scripts/generate-api-types.ts',
]).then(async (generated) => {
  if (!generated) return [false];
  return Promise.all([
    run('web bundle', npm, ['run', 'bundle', '-w', 'web'], { background: true }),
    run('lint and type check', bin('oxlint'), ['--type-aware', '--type-check']),
  ]);
});
const results = (
  await Promise.all([
    apiTypesThenDependents,
    run('format check', bin('prettier'), ['--check', '.']),
  ])
).flat();
const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (results.every(Boolean)) {
  process.stdout.write(`\npretest: the web build and the checks passed in ${seconds} s.\n`);
} else {
  process.stderr.write(`\npretest: a step failed (see above), after ${seconds} s.\n`);
  process.exitCode = 1;
}
