// The auth benchmark compares GET /v1/features with a bare Fastify route serving the same body
// (bench/bare-server.ts); `npm run bench -- auth` refuses to run when the two bodies differ. The
// bare route once had a hand-copied schema without `reason`, and the benchmark crashed.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from './support/dialects.js';
import { freePort, repositoryRoot } from './support/process.js';
import { bearer, startTestApp, type TestApp } from './support/test-app.js';

async function bareServerBody(payload: string, logged: boolean): Promise<string> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'bench/bare-server.ts',
      String(port),
      payload,
      ...(logged ? ['--logged'] : []),
    ],
    { cwd: repositoryRoot, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    // Asked until it listens (or exits).
    for (;;) {
      if (child.exitCode !== null) throw new Error(`bare server exited: ${stderr}`);
      try {
        return await (await fetch(`http://127.0.0.1:${port}/v1/features`)).text();
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } finally {
    child.kill();
    await exited;
  }
}

describe.each(allDialects)('the auth benchmark on $name', (dialect) => {
  let harness: TestApp;
  beforeAll(async () => {
    harness = await startTestApp({ dialect });
  });
  afterAll(async () => {
    await harness.close();
  });

  it.each([false, true])(
    'its bare route serves the body of GET /v1/features byte for byte (logged: %s)',
    async (logged) => {
      const response = await harness.app.inject({
        method: 'GET',
        url: '/v1/features',
        headers: bearer(harness.adminKey),
      });
      expect(response.statusCode).toBe(200);
      expect(response.body).toContain('"reason"');
      expect(await bareServerBody(response.body, logged)).toBe(response.body);
    },
  );
});
