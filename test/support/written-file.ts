// A file another process of the run writes when its step ends (the image build's outcome from the
// containers project's global setup, the dashboard bundle's from scripts/test.mjs): the tests that
// need that step wait for the file to appear.
import { existsSync } from 'node:fs';

export async function untilWritten(file: string): Promise<void> {
  while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 200));
}
