// Development entry of the audio worker threads: loads the TypeScript source through tsx (Node 20
// does not apply `--import tsx` to a worker's modules). The built service loads audio-worker.js.
//
// Under the test suite, which builds this checkout's service once per run (test/support/
// global-setup.ts names the bundle in TEST_BUILT_SERVICE_DIR), a thread loads that bundle's worker
// instead of compiling the sources through tsx again in every new thread.
import path from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const bundle = process.env.TEST_BUILT_SERVICE_DIR;
const worker =
  bundle === undefined || bundle === ''
    ? await tsImport('./audio-worker.ts', import.meta.url)
    : await import(pathToFileURL(path.join(bundle, 'audio', 'audio-worker.js')).href);

export const prepare = worker.prepare;
export const render = worker.render;
export const synthesize = worker.synthesize;
export const voices = worker.voices;
export const hasVoice = worker.hasVoice;
export const warmUp = worker.warmUp;
