// Builds the service into dist/ with esbuild: one module for the server (`dist/main.js`), one per
// other entry (the audio and text worker threads, the command-line tools) and shared chunks for what is
// imported lazily. Node keeps a few tens of kilobytes per loaded ES module; the per-file output of
// tsc plus the ~1,000 files of typebox, kysely and zod cost about 20 MiB of idle memory that a
// bundle does not. Other packages stay external: native addons, packages that read files next to
// their own code, and CommonJS ones are loaded from node_modules as before. Type checking is
// `npm run typecheck` (tsc), not this step.
//
//   node scripts/build-server.mjs [--outdir DIR]
import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdirIndex = process.argv.indexOf('--outdir');
const outdir = path.resolve(root, outdirIndex > 0 ? process.argv[outdirIndex + 1] : 'dist');

/** Pure ES-module packages of many small files, bundled in; every other package is external. */
const bundled = ['typebox', '@fastify/type-provider-typebox', 'kysely', 'zod'];

const packageOf = (specifier) => {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
};

rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: [
    'src/main.ts',
    'src/audio/audio-worker.ts',
    'src/text-pool/text-worker.ts',
    'src/cli/keys.ts',
    'src/cli/audit.ts',
    'src/cli/models.ts',
  ],
  outbase: 'src',
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  // Not minified: stack traces and profiles stay readable (minifying saved about 1 MiB of RSS).
  // Names are not kept (`keepNames`): it wraps every named function and class, including the
  // closures made on each request, in a call that redefines its `name`, which cost a plain chat
  // completion 3-14 % of its CPU (bench/results/gateway-profile.md). Without it, a function whose
  // top-level name clashed with another module's is named with a suffix (`count2`), and a class
  // that refers to itself inside its body is named `_Name`; no error class is either, so logged
  // errors keep their class's name (pino's `type`), which test/built-service.test.ts checks.
  keepNames: false,
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
  plugins: [
    {
      name: 'external-packages',
      setup(builder) {
        builder.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith('node:')) return { path: args.path, external: true };
          return bundled.includes(packageOf(args.path))
            ? undefined
            : { path: args.path, external: true };
        });
      },
    },
  ],
});

// Data read at run time, next to the bundle (src/runtime-paths.ts: bundleDirectory).
cpSync(
  path.join(root, 'src/modules/routing/intents/intent-model.json'),
  path.join(outdir, 'data/intent-model.json'),
);
