// Development entry of the text worker threads: loads the TypeScript source through tsx (Node 20
// does not apply `--import tsx` to a worker's modules). The built service loads text-worker.js.
import { tsImport } from 'tsx/esm/api';

const worker = await tsImport('./text-worker.ts', import.meta.url);

export const layout = worker.layout;
export const chunk = worker.chunk;
export const page = worker.page;
export const structure = worker.structure;
export const entities = worker.entities;
export const reasoningText = worker.reasoningText;
export const extractiveSummary = worker.extractiveSummary;
export const json = worker.json;
export const mcpAnswer = worker.mcpAnswer;
