// Development entry of the text worker threads: loads the TypeScript source through tsx (Node 20
// does not apply `--import tsx` to a worker's modules). The built service loads text-worker.js.
//
// Under the test suite, which builds this checkout's service once per run (test/support/
// global-setup.ts names the bundle in TEST_BUILT_SERVICE_DIR), a thread loads that bundle's worker
// instead: compiling the sources through tsx cost each new thread about 1.3 s of CPU, and the
// suite starts a thread in every app that parses text and after every deadline.
import path from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const bundle = process.env.TEST_BUILT_SERVICE_DIR;
const worker =
  bundle === undefined || bundle === ''
    ? await tsImport('./text-worker.ts', import.meta.url)
    : await import(pathToFileURL(path.join(bundle, 'text-pool', 'text-worker.js')).href);

export const layout = worker.layout;
export const chunk = worker.chunk;
export const page = worker.page;
export const structure = worker.structure;
export const entities = worker.entities;
export const reasoningText = worker.reasoningText;
export const extractiveSummary = worker.extractiveSummary;
export const json = worker.json;
export const mcpAnswer = worker.mcpAnswer;
