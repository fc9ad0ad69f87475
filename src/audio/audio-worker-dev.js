// Development entry of the audio worker threads: loads the TypeScript source through tsx (Node 20
// does not apply `--import tsx` to a worker's modules). The built service loads audio-worker.js.
import { tsImport } from 'tsx/esm/api';

const worker = await tsImport('./audio-worker.ts', import.meta.url);

export const prepare = worker.prepare;
export const render = worker.render;
export const synthesize = worker.synthesize;
export const voices = worker.voices;
export const hasVoice = worker.hasVoice;
