// Imported first by main.ts. While the service starts (modules loaded, routes compiled), V8 sizes
// its heap for memory rather than speed: without this, the garbage of starting up grows the young
// generation to its 32 MiB maximum and the old one far past what stays live, and an idle process
// keeps both (about 45 MiB). A few seconds after the service listens (main.ts), the usual
// heuristics return for serving.
import v8 from 'node:v8';

const chosenOnCommandLine = process.execArgv.some((flag) => flag.includes('optimize-for-size'));

if (!chosenOnCommandLine) v8.setFlagsFromString('--optimize-for-size');

/** Back to V8's defaults (unless `node --optimize-for-size` asked for it throughout). */
export function endStartupMemoryMode(): void {
  if (!chosenOnCommandLine) v8.setFlagsFromString('--no-optimize-for-size');
}
