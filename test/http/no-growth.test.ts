// Memory that must not grow with traffic (issue 17), over HTTP: keys presented once each (tenants'
// keys, keys since revoked) are not kept in the key cache once their cache time has passed —
// counted, not timed. (Each cached key also pinned an 8 KiB Buffer pool slab through its 32-byte
// digest; the soak benchmark's heap snapshots showed it. The in-memory rate limiter keeps each
// key's day window for the day, by design.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { bearer, createKey, startTestApp, type TestApp } from '../support/test-app.js';

describe.each(allDialects)('keys presented once leave nothing cached ($name)', (dialect) => {
  let harness: TestApp;
  const keys: string[] = [];

  beforeAll(async () => {
    harness = await startTestApp({ dialect });
    for (let index = 0; index < 200; index += 1) {
      keys.push((await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] })).key);
    }
  }, 120_000);
  afterAll(() => harness.close());

  const use = async (key: string) => {
    const response = await harness.app.inject({
      method: 'GET',
      url: '/v1/models',
      headers: bearer(key),
    });
    expect(response.statusCode).toBe(200);
  };

  it('drops keys past their cache time at the next lookup', async () => {
    for (const key of keys) await use(key);
    expect(harness.services.authenticator.cachedKeyCount).toBeGreaterThan(0);
    // Past the cache's time (500 ms by default) and the purge's interval (1 s), the next lookup
    // drops what went stale: before, stale keys stayed until 50,000 others pushed them out.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await use(harness.adminKey);
    expect(harness.services.authenticator.cachedKeyCount).toBeLessThanOrEqual(1);
  });
});
