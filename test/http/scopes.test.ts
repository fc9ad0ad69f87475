// Walks the OpenAPI document and proves that no operation is reachable without its declared scope.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopes, type Scope } from '../../src/auth/scopes.js';
import { allDialects } from '../support/dialects.js';
import {
  bearer,
  createAccount,
  createKey,
  startTestApp,
  type TestApp,
} from '../support/test-app.js';

interface Operation {
  method: string;
  path: string;
  requiredScopes: Scope[] | null;
  ownerOnly: boolean;
}

describe.each(allDialects)('access rules on $name', (dialect) => {
  let harness: TestApp;
  let operations: Operation[];
  const keysWithout = new Map<string, string>();
  let memberAdminKey: string;

  beforeAll(async () => {
    harness = await startTestApp({
      dialect,
      overrides: {
        rate_limits: {
          default_tier: 'unlimited',
          tiers: { unlimited: { per_minute: 100000, per_day: 1000000 } },
        },
      },
    });
    const document = (await harness.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<
        string,
        Record<
          string,
          { security?: unknown; 'x-required-scopes'?: Scope[]; 'x-owner-account-only'?: boolean }
        >
      >;
    }>();
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        requiredScopes:
          operation.security === undefined ? null : (operation['x-required-scopes'] ?? []),
        ownerOnly: operation['x-owner-account-only'] === true,
      })),
    );
    // For every scope, a key holding every other scope (admin excluded, as it holds them all).
    for (const scope of scopes) {
      const others = scopes.filter((candidate) => candidate !== scope && candidate !== 'admin');
      keysWithout.set(
        scope,
        (await createKey(harness.app, harness.adminKey, { scopes: others })).key,
      );
    }
    memberAdminKey = (await createAccount(harness.app, harness.adminKey, 'member')).admin_key;
  });

  afterAll(async () => {
    await harness.close();
  });

  function concrete(path: string): string {
    return path.replace(/\{[^}]+\}/g, 'does_not_exist');
  }

  function call(operation: Operation, headers: Record<string, string>) {
    return harness.app.inject({
      method: operation.method as 'GET',
      url: concrete(operation.path),
      headers,
      ...(['POST', 'PUT', 'PATCH'].includes(operation.method) ? { payload: {} } : {}),
    });
  }

  describe('scope enforcement on every documented operation', () => {
    it('documents a non-trivial set of operations, each with its access rule', () => {
      expect(operations.length).toBeGreaterThanOrEqual(8);
      expect(
        operations.filter((operation) => operation.requiredScopes === null).map((o) => o.path),
      ).toEqual([
        '/v1/health',
        '/v1/auth/login',
        // Single sign-on: whether it is on, its start and the provider's way back.
        '/v1/auth/oidc',
        '/v1/auth/oidc/login',
        '/v1/auth/oidc/callback',
      ]);
    });

    it('refuses every protected operation without a key (401 missing_api_key)', async () => {
      for (const operation of operations.filter((o) => o.requiredScopes !== null)) {
        const response = await call(operation, {});
        expect(response.statusCode, `${operation.method} ${operation.path}`).toBe(401);
        expect(response.json<{ error: { code: string } }>().error.code).toBe('missing_api_key');
      }
    });

    it('refuses every protected operation to a key lacking one of its scopes (403 naming it)', async () => {
      let checked = 0;
      for (const operation of operations) {
        for (const scope of operation.requiredScopes ?? []) {
          const response = await call(operation, bearer(keysWithout.get(scope)!));
          expect(
            response.statusCode,
            `${operation.method} ${operation.path} without ${scope}`,
          ).toBe(403);
          expect(
            response.json<{ error: { code: string; required_scope: string } }>().error,
          ).toMatchObject({
            code: 'insufficient_permissions',
            required_scope: scope,
          });
          checked += 1;
        }
      }
      expect(checked).toBeGreaterThanOrEqual(
        operations.filter((operation) => (operation.requiredScopes?.length ?? 0) > 0).length,
      );
    });

    it('lets a key holding exactly the required scopes through', async () => {
      for (const operation of operations.filter((o) => o.requiredScopes !== null && !o.ownerOnly)) {
        const key = (
          await createKey(harness.app, harness.adminKey, { scopes: operation.requiredScopes! })
        ).key;
        const response = await call(operation, bearer(key));
        expect([401, 403], `${operation.method} ${operation.path}: ${response.body}`).not.toContain(
          response.statusCode,
        );
      }
    });

    it('keeps owner-only operations from admin keys of other accounts', async () => {
      const ownerOnly = operations.filter((operation) => operation.ownerOnly);
      expect(ownerOnly.map((operation) => `${operation.method} ${operation.path}`).sort()).toEqual([
        // Metrics cover every account (docs/operations.md, "Metrics").
        'GET /metrics',
        'GET /v1/accounts',
        'POST /v1/accounts',
      ]);
      for (const operation of ownerOnly) {
        expect((await call(operation, bearer(memberAdminKey))).statusCode).toBe(403);
        expect([401, 403]).not.toContain(
          (await call(operation, bearer(harness.adminKey))).statusCode,
        );
      }
    });
  });
});
