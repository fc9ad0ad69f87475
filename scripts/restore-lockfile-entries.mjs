// Puts back the lockfile entries of node-llama-cpp's and msgpackr-extract's (BullMQ's) platform
// packages that a plain `npm install` on a machine whose registry lacks them drops (see
// docs/decisions.md), copied from git's HEAD and placed where HEAD had them. Usage, after any `npm install`: node scripts/restore-lockfile-entries.mjs
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const head = JSON.parse(
  execFileSync('git', ['show', 'HEAD:package-lock.json'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  }),
);
const current = JSON.parse(readFileSync('package-lock.json', 'utf8'));
/** Platform-package folder → the package whose version they must have. */
const families = {
  'node_modules/@node-llama-cpp/': 'node_modules/node-llama-cpp',
  'node_modules/@msgpackr-extract/': 'node_modules/msgpackr-extract',
};
const entries = Object.entries(current.packages);
const headKeys = Object.keys(head.packages);
let restored = 0;
for (const [index, path] of headKeys.entries()) {
  const family = Object.keys(families).find((prefix) => path.startsWith(prefix));
  if (family === undefined) continue;
  if (current.packages[path] !== undefined) continue;
  const entry = head.packages[path];
  const wanted = current.packages[families[family]]?.version;
  if (wanted !== undefined && entry.version !== wanted) {
    console.error(
      `${path}: HEAD has ${entry.version} but ${families[family]} is ${wanted}; edit it by hand`,
    );
    continue;
  }
  // After the nearest entry that precedes it in HEAD and is still present.
  let after = -1;
  for (let back = index - 1; back >= 0 && after === -1; back -= 1) {
    after = entries.findIndex(([key]) => key === headKeys[back]);
  }
  entries.splice(after + 1, 0, [path, entry]);
  current.packages[path] = entry;
  restored += 1;
}
if (restored > 0) {
  current.packages = Object.fromEntries(entries);
  writeFileSync('package-lock.json', `${JSON.stringify(current, null, 2)}\n`);
}
console.log(`restored ${restored} platform-package lockfile entries`);
