// The built dashboard served by the service, on every dialect: index.html with a strict CSP and a
// fresh nonce, hashed assets cached for a year (compressed when accepted), the app's routes falling
// back to index.html while API paths keep their JSON 404, and a clear error when the app is not built.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { webBundleBuilt } from '../support/web-bundle.js';

const built = await webBundleBuilt();
if (!built) {
  process.stdout.write(
    "\n[web-app] web/dist is not built: these tests are SKIPPED (run 'npm run build:web').\n",
  );
}

describe.skipIf(!built).each(allDialects)('the served web app on $name', (dialect) => {
  let harness: TestApp;
  beforeAll(async () => {
    harness = await startTestApp({ dialect });
  });
  afterAll(async () => {
    await harness.close();
  });

  const get = (url: string, headers: Record<string, string> = {}) =>
    harness.app.inject({ method: 'GET', url, headers });

  it('serves index.html at / with a strict CSP whose nonce is on every script and style tag', async () => {
    const first = await get('/', { accept: 'text/html' });
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toMatch(/^text\/html/);
    expect(first.headers['cache-control']).toBe('no-cache');
    const csp = String(first.headers['content-security-policy']);
    const nonce = /script-src 'self' 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(first.body).not.toContain('__CSP_NONCE__');
    const tags = first.body.match(/<(script|link|style|meta property="csp-nonce")[^>]*>/g) ?? [];
    expect(tags.length).toBeGreaterThan(1);
    for (const tag of tags.filter((item) => !item.includes('rel="icon"'))) {
      expect(tag, tag).toContain(`nonce="${nonce}"`);
    }
    const second = await get('/');
    expect(second.headers['content-security-policy']).not.toBe(csp);
  });

  it('serves hashed assets with a year of immutable caching, compressed when accepted', async () => {
    const assets = readdirSync(path.resolve('web/dist/assets'));
    const script = assets.find((name) => /^index-.*\.js$/.test(name));
    expect(script).toBeDefined();
    const plain = await get(`/assets/${script}`);
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toMatch(/javascript/);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const compressed = await get(`/assets/${script}`, { 'accept-encoding': 'br, gzip' });
    expect(compressed.headers['content-encoding']).toBe('br');
    expect(Number(compressed.headers['content-length'])).toBeLessThan(
      Number(plain.headers['content-length']),
    );
    const missing = await get('/assets/index-doesnotexist.js', { accept: 'text/html' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: { code: 'not_found' } });
    const icon = await get('/favicon.svg');
    expect(icon.statusCode).toBe(200);
  });

  it('answers the app’s own routes with index.html and API paths with their JSON 404', async () => {
    for (const route of ['/keys', '/pipelines/pipe_123', '/conversations/conv_1', '/usage']) {
      const response = await get(route, { accept: 'text/html,application/xhtml+xml' });
      expect(response.statusCode, route).toBe(200);
      expect(response.headers['content-type'], route).toMatch(/^text\/html/);
      expect(response.body).toContain('<div id="root">');
    }
    for (const route of ['/v1/nothing', '/v1', '/models/nope/extra', '/openapi.json/x']) {
      const response = await get(route, { accept: 'text/html' });
      expect(response.statusCode, route).toBe(404);
      expect(response.json(), route).toMatchObject({
        error: { code: 'not_found', type: 'not_found_error' },
      });
    }
    // A client that does not ask for HTML gets the API's answer.
    const json = await get('/keys', { accept: 'application/json' });
    expect(json.statusCode).toBe(404);
    const post = await harness.app.inject({
      method: 'POST',
      url: '/keys',
      headers: { accept: 'text/html' },
    });
    expect(post.statusCode).toBe(404);
  });

  it('says how to build the app when it is missing', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'no-web-'));
    const bare = await startTestApp({
      dialect,
      database: harness.database,
      adminKey: harness.adminKey,
      env: { WEB_APP_DIR: empty },
    });
    try {
      const response = await bare.app.inject({ method: 'GET', url: '/' });
      expect(response.statusCode).toBe(503);
      expect(response.json<{ error: { message: string } }>().error.message).toContain(
        'npm run build',
      );
    } finally {
      await bare.app.close();
      await bare.services.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
