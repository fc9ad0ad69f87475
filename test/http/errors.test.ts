// The contract's error body for every kind of failure the HTTP layer sees.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCodes } from '../../src/errors/catalog.js';
import { allDialects } from '../support/dialects.js';
import { bearer, startTestApp, type TestApp } from '../support/test-app.js';
import { readFileSync } from 'node:fs';

describe.each(allDialects)('the error contract on $name', (dialect) => {
  let harness: TestApp;
  beforeAll(async () => {
    harness = await startTestApp({ dialect, env: { BODY_LIMIT_BYTES: '2048' } });
  });
  afterAll(async () => {
    await harness.close();
  });

  const errorShape = (type: string, code: string, param: string | null = null) => ({
    error: { message: expect.any(String), type, code, param },
  });

  describe('error responses', () => {
    it('answers an unknown path with 404 not_found, key or not', async () => {
      for (const headers of [{}, bearer(harness.adminKey)]) {
        const response = await harness.app.inject({
          method: 'GET',
          url: '/v1/nothing-here',
          headers,
        });
        expect(response.statusCode).toBe(404);
        expect(response.json()).toEqual(errorShape('not_found_error', 'not_found'));
      }
    });

    it('answers a wrong method with 405 method_not_allowed and an Allow header', async () => {
      const response = await harness.app.inject({ method: 'PUT', url: '/v1/api-keys/key_x' });
      expect(response.statusCode).toBe(405);
      expect(response.headers.allow).toBe('DELETE, GET, HEAD');
      expect(response.json()).toEqual(errorShape('invalid_request_error', 'method_not_allowed'));
    });

    it('answers an over-long path parameter with 404 not_found', async () => {
      const response = await harness.app.inject({
        method: 'GET',
        url: `/v1/api-keys/key_${'x'.repeat(300)}`,
        headers: bearer(harness.adminKey),
      });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(errorShape('not_found_error', 'not_found'));
    });

    it('answers malformed JSON with 400 invalid_json', async () => {
      const response = await harness.app.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: { ...bearer(harness.adminKey), 'content-type': 'application/json' },
        payload: '{"name": ',
      });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(errorShape('invalid_request_error', 'invalid_json'));
    });

    it('answers a wrong content type with 415', async () => {
      for (const contentType of [
        'text/plain',
        'application/xml',
        'multipart/form-data; boundary=x',
      ]) {
        const response = await harness.app.inject({
          method: 'POST',
          url: '/v1/api-keys',
          headers: { ...bearer(harness.adminKey), 'content-type': contentType },
          payload: 'name=x',
        });
        expect(response.statusCode, contentType).toBe(415);
        expect(response.json()).toEqual(
          errorShape('invalid_request_error', 'unsupported_media_type'),
        );
      }
    });

    it('answers a body over the limit with 413', async () => {
      const response = await harness.app.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: { ...bearer(harness.adminKey), 'content-type': 'application/json' },
        payload: JSON.stringify({ name: 'x'.repeat(5000) }),
      });
      expect(response.statusCode).toBe(413);
      expect(response.json()).toEqual(errorShape('invalid_request_error', 'payload_too_large'));
      // One sentence that says the limit, not two that say "too large".
      expect(response.json<{ error: { message: string } }>().error.message).toBe(
        'The request body is larger than the 2048 bytes accepted (BODY_LIMIT_BYTES).',
      );
    });

    it('names the allowed values of an enumeration, whatever its schema form', async () => {
      const cases: Array<[string, string, object | undefined, string, RegExp]> = [
        [
          'GET',
          '/v1/conversations?user_id=u&status=bogus',
          undefined,
          'status',
          /"active", "archived", "all"/,
        ],
        ['GET', '/v1/conversations?user_id=u&order=up', undefined, 'order', /"desc", "asc"/],
        [
          'POST',
          '/v1/chat',
          { user_id: 'u', messages: [{ role: 'robot', content: 'x' }] },
          'messages[0].role',
          /"system", "user", "assistant"/,
        ],
        ['POST', '/v1/api-keys', { name: 'x', scopes: ['root'] }, 'scopes[0]', /"chat:read"/],
      ];
      for (const [method, url, payload, param, allowed] of cases) {
        const response = await harness.app.inject({
          method: method as 'GET' | 'POST',
          url,
          headers: bearer(harness.adminKey),
          ...(payload === undefined ? {} : { payload }),
        });
        const { error } = response.json<{ error: { message: string; param: string } }>();
        expect(error.param).toBe(param);
        expect(error.message).toMatch(/must be one of /);
        expect(error.message).toMatch(allowed);
        expect(error.message).not.toMatch(/constant/);
      }
    });

    it('names the parameter of a schema failure', async () => {
      const cases: Array<[unknown, string, string]> = [
        [{}, 'missing_parameter', 'name'],
        [{ name: 5 }, 'invalid_parameter', 'name'],
        [{ name: 'x', allowed_ips: ['10.0.0.0/8', 7] }, 'invalid_parameter', 'allowed_ips[1]'],
        [{ name: 'x', colour: 'red' }, 'invalid_parameter', 'colour'],
      ];
      for (const [payload, code, param] of cases) {
        const response = await harness.app.inject({
          method: 'POST',
          url: '/v1/api-keys',
          headers: bearer(harness.adminKey),
          payload: payload as object,
        });
        expect(response.statusCode, JSON.stringify(payload)).toBe(400);
        expect(response.json()).toEqual(errorShape('invalid_request_error', code, param));
      }
      const query = await harness.app.inject({
        method: 'GET',
        url: '/v1/api-keys?limit=0',
        headers: bearer(harness.adminKey),
      });
      expect(query.json()).toEqual(
        errorShape('invalid_request_error', 'invalid_parameter', 'limit'),
      );
    });

    it('carries a request id in every response, echoing a safe incoming one', async () => {
      const generated = await harness.app.inject({ method: 'GET', url: '/v1/health' });
      expect(generated.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
      const echoed = await harness.app.inject({
        method: 'GET',
        url: '/v1/health',
        headers: { 'x-request-id': 'trace-123' },
      });
      expect(echoed.headers['x-request-id']).toBe('trace-123');
      const unsafe = await harness.app.inject({
        method: 'GET',
        url: '/v1/health',
        headers: { 'x-request-id': 'a b<script>' },
      });
      expect(unsafe.headers['x-request-id']).toMatch(/^req_/);
    });

    it('documents every error code in the error catalog of docs/api.md', () => {
      const page = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
      const catalog = page.slice(page.indexOf('\n## Errors'));
      for (const code of errorCodes) expect(catalog, code).toContain(`\`${code}\``);
    });
  });

  describe('failures inside the service', () => {
    it('answers 500 internal_error without the internal message, and health turns degraded', async () => {
      const broken = await startTestApp({ dialect });
      try {
        await broken.services.storage.close();
        const response = await broken.app.inject({
          method: 'GET',
          url: '/v1/api-keys',
          headers: bearer(broken.adminKey),
        });
        expect(response.statusCode).toBe(500);
        expect(response.json()).toEqual(errorShape('api_error', 'internal_error'));
        expect(response.body).not.toMatch(/destroyed|kysely|sqlite|stack|at /i);
        expect(response.json<{ error: { message: string } }>().error.message).toContain(
          String(response.headers['x-request-id']),
        );
        const health = await broken.app.inject({ method: 'GET', url: '/v1/health' });
        expect(health.statusCode).toBe(503);
        expect(health.json()).toMatchObject({
          status: 'degraded',
          checks: { database: 'unavailable' },
        });
      } finally {
        await broken.app.close();
        await broken.database.drop();
      }
    });
  });
});
