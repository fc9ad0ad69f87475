// Health (no key) and the features catalog, on every dialect.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { featureNames } from '../../src/modules/health/feature-catalog.js';
import { allDialects } from '../support/dialects.js';
import { bearer, startTestApp, type TestApp } from '../support/test-app.js';

const packageVersion = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

describe.each(allDialects)('health and catalog on $name', (dialect) => {
  let harness: TestApp;
  beforeAll(async () => {
    harness = await startTestApp({ dialect });
  });
  afterAll(async () => {
    await harness.close();
  });

  it('answers health without a key, with the package version', async () => {
    const response = await harness.app.inject({ method: 'GET', url: '/v1/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      status: 'ok',
      service: 'conversational-ai-platform',
      version: packageVersion,
      checks: { database: 'ok', redis: 'not_configured' },
    });
    expect(response.headers.ratelimit).toBeUndefined();
  });

  it('lists the seven features of the spec with ids and flags', async () => {
    const response = await harness.app.inject({
      method: 'GET',
      url: '/v1/features',
      headers: bearer(harness.adminKey),
    });
    expect(response.statusCode).toBe(200);
    const { features } = response.json<{
      features: Array<{ id: string; name: string; enabled: boolean }>;
    }>();
    expect(features.map((feature) => feature.name)).toEqual([...featureNames]);
    for (const feature of features) {
      expect(feature.id).toBe(feature.name);
      expect(typeof feature.enabled).toBe('boolean');
    }
  });

  it('serves the OpenAPI 3.1 document and the docs UI without a key', async () => {
    const document = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(document.statusCode).toBe(200);
    expect(document.json<{ openapi: string }>().openapi).toBe('3.1.0');
    const docs = await harness.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toContain('text/html');
  });
});
