// Whether the dashboard's bundle (web/dist) is there, for the tests that serve or measure it. Under
// `npm test` the bundle is built while the suite starts (scripts/test.mjs): TEST_WEB_BUNDLE_OUTCOME
// names the file that step writes when it ends, and these tests wait for it before they look.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { untilWritten } from './written-file.js';

export async function webBundleBuilt(): Promise<boolean> {
  const outcome = process.env.TEST_WEB_BUNDLE_OUTCOME;
  if (outcome !== undefined) await untilWritten(outcome);
  return existsSync(path.resolve('web/dist/index.html'));
}
