// Run in the image build on the production node_modules (after `npm prune --omit=dev`): removes
// what Node never loads there, so that the image stays small (docs/deployment.md#the-image). Each
// removal checks the packaging it relies on and fails the build if that changed, rather than
// removing something a newer version loads.
//
//   node scripts/container/trim-node-modules.mjs [node_modules]
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? 'node_modules');
let freed = 0;

function sizeOf(target) {
  const stat = statSync(target, { throwIfNoEntry: false });
  if (stat === undefined) return 0;
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(target).reduce((sum, name) => sum + sizeOf(path.join(target, name)), 0);
}
function remove(relative) {
  const target = path.join(root, relative);
  freed += sizeOf(target);
  rmSync(target, { recursive: true, force: true });
}
const manifest = (name) => JSON.parse(readFileSync(path.join(root, name, 'package.json'), 'utf8'));
function fail(message) {
  process.stderr.write(`trim-node-modules: ${message}\n`);
  process.exit(1);
}

// 1. Files no runtime reads: TypeScript sources and typings, source maps (the service runs without
//    --enable-source-maps), Markdown, and C/C++ sources and objects of native addons.
const unread = /\.(d\.[cm]?ts|[cm]?ts|map|md|c|cc|cpp|h|hpp|o|a)$/;
(function walk(directory) {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (entry.isFile() && unread.test(entry.name)) {
      freed += statSync(full).size;
      rmSync(full);
    }
  }
})(root);

// 2. TypeScript: only an optional peer of node-llama-cpp (for its typings).
remove('typescript');

// 3. llama.cpp's source bundle, for building it from source: the service never builds
//    (getLlama({ build: 'never' })); the prebuilt binaries are in @node-llama-cpp/linux-x64.
remove('node-llama-cpp/llama/gitRelease.bundle');

// 4. better-sqlite3: its addon is build/Release/better_sqlite3.node; SQLite's sources and the
//    compiler's intermediate files are not loaded.
const addon = 'better-sqlite3/build/Release/better_sqlite3.node';
if (!existsSync(path.join(root, addon))) fail(`${addon} is missing`);
remove('better-sqlite3/deps');
remove('better-sqlite3/src');
for (const name of readdirSync(path.join(root, 'better-sqlite3/build'))) {
  if (name !== 'Release') remove(`better-sqlite3/build/${name}`);
}
for (const name of readdirSync(path.join(root, 'better-sqlite3/build/Release'))) {
  if (name !== 'better_sqlite3.node') remove(`better-sqlite3/build/Release/${name}`);
}

// 5. gpt-tokenizer: the service imports its ES modules (`import`), never the CommonJS copy, the
//    sources or the raw rank files.
const tokenizer = manifest('gpt-tokenizer').exports;
if (tokenizer?.['./*']?.import !== './esm/*.js') fail('gpt-tokenizer no longer exports esm/*');
for (const name of ['cjs', 'src', 'data']) remove(`gpt-tokenizer/${name}`);

// 6. OpenTelemetry: Node loads build/src (`main`, or the `default` export); build/esm and
//    build/esnext are for bundlers (`module`, `esnext` conditions).
for (const name of readdirSync(path.join(root, '@opentelemetry'))) {
  const pkg = manifest(`@opentelemetry/${name}`);
  const mapped = JSON.stringify(pkg.exports ?? {});
  const nodeLoadsBuildSrc =
    (pkg.main ?? '').replace(/^\.\//, '').startsWith('build/src/') &&
    !/"(import|node|require|default)":"\.\/build\/(esm|esnext)\//.test(mapped);
  if (!nodeLoadsBuildSrc) continue;
  remove(`@opentelemetry/${name}/build/esm`);
  remove(`@opentelemetry/${name}/build/esnext`);
}

// 7. The wasm-audio-decoders family: Node loads index.js and src/; dist/ holds browser bundles.
for (const name of ['ogg-opus-decoder', 'opus-decoder', 'mpg123-decoder', '@wasm-audio-decoders']) {
  const packages = name.startsWith('@')
    ? readdirSync(path.join(root, name)).map((inner) => `${name}/${inner}`)
    : [name];
  for (const found of packages.filter((candidate) => existsSync(path.join(root, candidate)))) {
    const pkg = manifest(found);
    const entry = (file) => (file ?? 'index.js').replace(/^\.\//, '');
    if (entry(pkg.main) !== 'index.js' || entry(pkg.exports?.default) !== 'index.js') {
      fail(`${found} no longer loads ./index.js`);
    }
    remove(`${found}/dist`);
  }
}

// 8. Packages scripts/build-server.mjs bundles into dist/ (its `bundled` list), when no package
//    left outside the bundle depends on them (npm's record of the tree: node_modules/.package-lock.json).
const buildScript = readFileSync(path.resolve(root, '../scripts/build-server.mjs'), 'utf8');
const bundled = JSON.parse(
  (/const bundled = (\[[^\]]*\])/.exec(buildScript)?.[1] ?? fail('no bundled list')).replaceAll(
    "'",
    '"',
  ),
);
const tree = JSON.parse(readFileSync(path.join(root, '.package-lock.json'), 'utf8')).packages;
for (const name of bundled) {
  const dependents = Object.entries(tree)
    .filter(([, entry]) =>
      [entry.dependencies, entry.peerDependencies, entry.optionalDependencies].some(
        (deps) => deps !== undefined && name in deps,
      ),
    )
    .map(([key]) => key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length));
  if (dependents.every((dependent) => bundled.includes(dependent))) remove(name);
}

// 9. Tests, examples, benchmarks and docs at the top of a package, when its entry points (main,
//    module, exports, bin) name none of them.
const extras = [
  'test',
  'tests',
  '__tests__',
  'example',
  'examples',
  'benchmark',
  'benchmarks',
  'docs',
];
for (const scope of readdirSync(root)) {
  if (scope.startsWith('.')) continue;
  const names = scope.startsWith('@')
    ? readdirSync(path.join(root, scope)).map((inner) => `${scope}/${inner}`)
    : [scope];
  for (const name of names) {
    if (!existsSync(path.join(root, name, 'package.json'))) continue;
    const pkg = manifest(name);
    const entries = JSON.stringify([pkg.main, pkg.module, pkg.exports, pkg.bin, pkg.browser]);
    for (const extra of extras) {
      if (!entries.includes(`${extra}/`) && existsSync(path.join(root, name, extra))) {
        remove(`${name}/${extra}`);
      }
    }
  }
}

process.stdout.write(`trim-node-modules: ${(freed / 1e6).toFixed(1)} MB removed from ${root}\n`);
