// Authenticator directly, over real storage on every dialect: the contract's order of checks and
// their codes (missing, invalid, revoked, expired, address), the key cache aging by the injected
// clock (another instance's revocation is seen once the entry is older than the TTL), and
// `last_used_at` written at most once per interval.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../../../test/support/dialects.js';
import { appErrorOf } from '../../../test/support/unit/errors.js';
import { authStack, type AuthStack } from '../../../test/support/unit/auth.js';
import { TestClock } from '../../../test/support/unit/clock.js';
import {
  insertAccount,
  openUnitStorage,
  type UnitStorage,
} from '../../../test/support/unit/storage.js';
import type { Account } from './account.js';
import { platformOperator, type CreateApiKeyInput } from './api-key-service.js';
import { generateApiKey } from './api-key-format.js';

const cacheTtlMs = 500;
const lastUsedWriteIntervalMs = 60_000;

describe.each(allDialects)('Authenticator on $name', (dialect) => {
  let unit: UnitStorage;
  let account: Account;

  beforeAll(async () => {
    unit = await openUnitStorage(dialect, {
      env: { API_KEY_SECRET: 'unit-test-secret-for-key-hashing-0123456789' },
    });
    account = await insertAccount(unit.storage, 'basic');
  });
  afterAll(() => unit.close());

  const stack = (clock: TestClock, options: { cacheTtlMs?: number } = {}) =>
    authStack({ ...unit, clock, cacheTtlMs, lastUsedWriteIntervalMs, ...options });
  const createKey = (auth: AuthStack, input: Partial<CreateApiKeyInput> = {}) =>
    auth.apiKeys.create(account.id, { name: 'unit key', ...input }, platformOperator);

  it('refuses a request without a key: 401 missing_api_key', async () => {
    const { authenticator } = stack(new TestClock());
    for (const presented of [undefined, '']) {
      const error = await appErrorOf(authenticator.authenticate(presented, '127.0.0.1'));
      expect(error).toMatchObject({ code: 'missing_api_key', status: 401 });
    }
  });

  it('refuses malformed and unknown keys alike, and caches neither', async () => {
    const { authenticator } = stack(new TestClock());
    const unknown = generateApiKey();
    const badChecksum = `${unknown.slice(0, -1)}${unknown.endsWith('A') ? 'B' : 'A'}`;
    for (const presented of ['sk-short', 'not a key at all', badChecksum, unknown]) {
      const error = await appErrorOf(authenticator.authenticate(presented, '127.0.0.1'));
      expect(error).toMatchObject({ code: 'invalid_api_key', status: 401 });
    }
    expect(authenticator.cachedKeyCount).toBe(0);
  });

  it('admits a valid key as its principal, from the cache the second time', async () => {
    const auth = stack(new TestClock());
    const created = await createKey(auth, { scopes: ['chat:write', 'models:read'], tier: 'pro' });
    const principal = await auth.authenticator.authenticate(created.key, '127.0.0.1');
    expect(principal).toEqual({
      keyId: created.record.id,
      accountId: account.id,
      accountKind: 'member',
      scopes: ['chat:write', 'models:read'],
      tier: 'pro',
      accountTier: 'basic',
    });
    expect(Object.isFrozen(principal)).toBe(true);
    expect(auth.authenticator.cachedKeyCount).toBe(1);
    expect(await auth.authenticator.authenticate(created.key, '127.0.0.1')).toBe(principal);
  });

  it('refuses a key revoked on this instance at once: 401 revoked_api_key', async () => {
    const auth = stack(new TestClock());
    const created = await createKey(auth);
    await auth.authenticator.authenticate(created.key, '127.0.0.1');
    await auth.apiKeys.revoke(account.id, created.record.id);
    const error = await appErrorOf(auth.authenticator.authenticate(created.key, '127.0.0.1'));
    expect(error).toMatchObject({ code: 'revoked_api_key', status: 401 });
  });

  it("sees another instance's revocation once its cached entry outlives the TTL", async () => {
    const clock = new TestClock();
    const [here, elsewhere] = [stack(clock), stack(clock)];
    const created = await createKey(here);
    await here.authenticator.authenticate(created.key, '127.0.0.1');
    await elsewhere.apiKeys.revoke(account.id, created.record.id);
    await expect(here.authenticator.authenticate(created.key, '127.0.0.1')).resolves.toBeDefined();
    await clock.advance(cacheTtlMs / 2);
    await expect(here.authenticator.authenticate(created.key, '127.0.0.1')).resolves.toBeDefined();
    await clock.advance(cacheTtlMs / 2 + 1);
    const error = await appErrorOf(here.authenticator.authenticate(created.key, '127.0.0.1'));
    expect(error.code).toBe('revoked_api_key');
  });

  it("without a cache (TTL 0) sees another instance's revocation at once", async () => {
    const clock = new TestClock();
    const [here, elsewhere] = [stack(clock, { cacheTtlMs: 0 }), stack(clock)];
    const created = await createKey(here);
    await here.authenticator.authenticate(created.key, '127.0.0.1');
    expect(here.authenticator.cachedKeyCount).toBe(0);
    await elsewhere.apiKeys.revoke(account.id, created.record.id);
    const error = await appErrorOf(here.authenticator.authenticate(created.key, '127.0.0.1'));
    expect(error.code).toBe('revoked_api_key');
  });

  it('refuses a key from the instant it expires, by its clock: 401 expired_api_key', async () => {
    const clock = new TestClock();
    const auth = stack(clock);
    const expiresAt = new Date(clock.ms + 60_000).toISOString();
    const created = await createKey(auth, { expiresAt });
    await clock.advance(59_999);
    await expect(auth.authenticator.authenticate(created.key, '127.0.0.1')).resolves.toBeDefined();
    await clock.advance(1);
    const error = await appErrorOf(auth.authenticator.authenticate(created.key, '127.0.0.1'));
    expect(error).toMatchObject({ code: 'expired_api_key', status: 401 });
    expect(error.message).toBe(`This API key expired at ${expiresAt}.`);
  });

  it("refuses an address outside the key's allow-list, after revocation in the contract's order", async () => {
    const auth = stack(new TestClock());
    const created = await createKey(auth, { allowedIps: ['10.0.0.0/8'] });
    await expect(auth.authenticator.authenticate(created.key, '10.1.2.3')).resolves.toBeDefined();
    const outside = await appErrorOf(auth.authenticator.authenticate(created.key, '192.168.1.9'));
    expect(outside).toMatchObject({ code: 'ip_not_allowed', status: 403 });
    expect(outside.message).toContain('192.168.1.9');
    await auth.apiKeys.revoke(account.id, created.record.id);
    const revoked = await appErrorOf(auth.authenticator.authenticate(created.key, '192.168.1.9'));
    expect(revoked.code).toBe('revoked_api_key');
  });

  it('drops keys presented once when their time has passed, at the next lookup', async () => {
    const clock = new TestClock();
    const auth = stack(clock);
    const [first, second, third] = [
      await createKey(auth),
      await createKey(auth),
      await createKey(auth),
    ];
    await auth.authenticator.authenticate(first.key, '127.0.0.1');
    await auth.authenticator.authenticate(second.key, '127.0.0.1');
    expect(auth.authenticator.cachedKeyCount).toBe(2);
    await clock.advance(2_000);
    await auth.authenticator.authenticate(third.key, '127.0.0.1');
    expect(auth.authenticator.cachedKeyCount).toBe(1);
  });

  it('records last use at most once per interval, off the request path', async () => {
    const clock = new TestClock();
    const auth = stack(clock);
    const created = await createKey(auth);
    const lastUsed = async () =>
      (await auth.keys.findInAccount(account.id, created.record.id))?.lastUsedAt;
    const firstUse = clock.iso();
    await auth.authenticator.authenticate(created.key, '127.0.0.1');
    await expect.poll(lastUsed, { interval: 5 }).toBe(firstUse);
    await clock.advance(lastUsedWriteIntervalMs / 2);
    await auth.authenticator.authenticate(created.key, '127.0.0.1');
    expect(await lastUsed()).toBe(firstUse);
    await clock.advance(lastUsedWriteIntervalMs / 2);
    const laterUse = clock.iso();
    await auth.authenticator.authenticate(created.key, '127.0.0.1');
    await expect.poll(lastUsed, { interval: 5 }).toBe(laterUse);
    expect(auth.backgroundErrors).toEqual([]);
  });
});
