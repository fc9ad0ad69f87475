// Validators and serializers are compiled on a route's first use (src/http/validation.ts); this
// compiles every one the application registered, so that a schema that does not compile fails
// here rather than on the first request to its route in production.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilePendingSchemas } from '../../src/http/validation.js';
import { allDialects } from '../support/dialects.js';
import { bearer, startTestApp, type TestApp } from '../support/test-app.js';

const sqlite = allDialects.find((dialect) => dialect.name === 'sqlite')!;

describe("every route's schemas", () => {
  let harness: TestApp;
  beforeAll(async () => {
    harness = await startTestApp({ dialect: sqlite });
  });
  afterAll(async () => {
    await harness.close();
  });

  it('are not compiled at start, only on first use', async () => {
    const response = await harness.app.inject({
      method: 'GET',
      url: '/v1/models',
      headers: bearer(harness.adminKey),
    });
    expect(response.statusCode).toBe(200);
    // The first request compiled the validators and serializer of its own route alone.
    expect(compilePendingSchemas(harness.app)).toBeGreaterThan(200);
  });

  it('all compile, and none is left afterwards', async () => {
    expect(compilePendingSchemas(harness.app)).toBe(0);
    const refused = await harness.app.inject({
      method: 'POST',
      url: '/v1/chat',
      headers: bearer(harness.adminKey),
      payload: { user_id: 'u', messages: 'not a list' },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: { code: 'invalid_parameter' } });
  });
});
