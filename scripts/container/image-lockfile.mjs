// Trims package-lock.json, inside an image build, to the native packages an x64 Linux server loads,
// so that `npm ci` neither downloads nor keeps the rest. node-llama-cpp lists every prebuilt binary
// of llama.cpp as an optional dependency (669 MB for Linux alone: CUDA, Vulkan, ARM); npm installs
// all those whose `os` and `cpu` match, and the ARM ones claim x64 too. A missing optional
// dependency is no error to npm (`npm ci` installs the lockfile as it is), and node-llama-cpp picks
// among the binaries present at run time (`gpu: false` needs only `linux-x64`).
//
//   node scripts/container/image-lockfile.mjs [none|cuda|vulkan|all]   (default: none)
import { readFileSync, writeFileSync } from 'node:fs';

const variants = {
  none: [],
  cuda: ['linux-x64-cuda', 'linux-x64-cuda-ext'],
  vulkan: ['linux-x64-vulkan'],
  all: ['linux-x64-cuda', 'linux-x64-cuda-ext', 'linux-x64-vulkan'],
};
const gpu = process.argv[2] || 'none';
if (!(gpu in variants)) {
  process.stderr.write(`image-lockfile: LLAMA_GPU must be one of ${Object.keys(variants)}\n`);
  process.exit(2);
}
const kept = new Set(['linux-x64', ...variants[gpu]].map((name) => `@node-llama-cpp/${name}`));

const file = 'package-lock.json';
const lock = JSON.parse(readFileSync(file, 'utf8'));
const dropped = [];
for (const key of Object.keys(lock.packages)) {
  const name = key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
  const entry = lock.packages[key];
  const foreign =
    entry.optional === true &&
    ((entry.os !== undefined && !entry.os.includes('linux')) ||
      (entry.cpu !== undefined && !entry.cpu.includes('x64')));
  if ((name.startsWith('@node-llama-cpp/') && !kept.has(name)) || foreign) {
    delete lock.packages[key];
    dropped.push(name);
  }
}
if (!dropped.includes('@node-llama-cpp/linux-x64-cuda') && gpu === 'none') {
  process.stderr.write('image-lockfile: node-llama-cpp lists no linux-x64-cuda any more; check\n');
  process.exit(1);
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(
  `image-lockfile: llama.cpp binaries kept: ${[...kept].join(', ')}; dropped ${dropped.length} packages\n`,
);
