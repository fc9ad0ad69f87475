// ApiKeyService directly, over real storage on every dialect: what a new key's record holds (never
// the key), the 400s of its fields, the tier a tenant may grant, status by the injected clock, and
// revocation (404 for another account's key; the key's sessions end with it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../../../test/support/dialects.js';
import { authStack } from '../../../test/support/unit/auth.js';
import { TestClock } from '../../../test/support/unit/clock.js';
import { appErrorOf } from '../../../test/support/unit/errors.js';
import {
  insertAccount,
  openUnitStorage,
  type UnitStorage,
} from '../../../test/support/unit/storage.js';
import type { Account } from './account.js';
import { platformOperator } from './api-key-service.js';
import { isWellFormedApiKey } from './api-key-format.js';
import { KeyHasher } from './key-hasher.js';

describe.each(allDialects)('ApiKeyService on $name', (dialect) => {
  let unit: UnitStorage;
  let account: Account;
  let other: Account;

  beforeAll(async () => {
    unit = await openUnitStorage(dialect);
    account = await insertAccount(unit.storage, 'basic');
    other = await insertAccount(unit.storage, 'basic');
  });
  afterAll(() => unit.close());

  const stack = (clock = new TestClock()) => authStack({ ...unit, clock });

  it('stores only the hash of a new key, with its fields and the default tier', async () => {
    const clock = new TestClock();
    const { apiKeys, keys } = stack(clock);
    const created = await apiKeys.create(
      account.id,
      { name: 'reports', scopes: ['chat:read', 'chat:read', 'models:read'] },
      platformOperator,
    );
    expect(isWellFormedApiKey(created.key)).toBe(true);
    expect(created.record).toMatchObject({
      accountId: account.id,
      name: 'reports',
      keyHash: new KeyHasher(unit.config.auth.apiKeySecret).hash(created.key),
      displayKey: `sk-…${created.key.slice(-4)}`,
      scopes: ['chat:read', 'models:read'],
      tier: unit.config.rateLimits.defaultTier,
      allowedIps: [],
      expiresAt: null,
      lastUsedAt: null,
      createdAt: clock.iso(),
      revokedAt: null,
    });
    expect(await keys.findInAccount(account.id, created.record.id)).toEqual(created.record);
  });

  it('refuses unknown tiers, malformed expiry and addresses, naming the field', async () => {
    const clock = new TestClock();
    const { apiKeys } = stack(clock);
    const cases = [
      [{ tier: 'platinum' }, 'tier'],
      [{ tier: 'constructor' }, 'tier'],
      [{ expiresAt: 'next tuesday' }, 'expires_at'],
      [{ expiresAt: clock.iso() }, 'expires_at'],
      [{ allowedIps: ['10.0.0.0/8', '10.0.0.0/99'] }, 'allowed_ips[1]'],
    ] as const;
    const before = await apiKeys.list(account.id, { limit: 100, offset: 0 });
    for (const [input, param] of cases) {
      const error = await appErrorOf(() =>
        apiKeys.create(account.id, { name: 'bad', ...input }, platformOperator),
      );
      expect(error).toMatchObject({ code: 'invalid_parameter', status: 400, param });
    }
    expect((await apiKeys.list(account.id, { limit: 100, offset: 0 })).total).toBe(before.total);
  });

  it("lets a member key grant no tier above its own; the owner's keys grant any", async () => {
    const { apiKeys } = stack();
    const member = { accountKind: 'member', tier: 'basic' } as const;
    const error = await appErrorOf(
      apiKeys.create(other.id, { name: 'escalated', tier: 'pro' }, member),
    );
    expect(error).toMatchObject({
      code: 'insufficient_permissions',
      status: 403,
      param: 'tier',
      details: { required_scope: 'admin' },
    });
    const lower = await apiKeys.create(other.id, { name: 'lower', tier: 'free' }, member);
    expect(lower.record.tier).toBe('free');
    const owner = { accountKind: 'owner', tier: 'free' } as const;
    const granted = await apiKeys.create(other.id, { name: 'granted', tier: 'enterprise' }, owner);
    expect(granted.record.tier).toBe('enterprise');
  });

  it('lists the configured tiers with what each creator may grant, by the rule create() keeps', async () => {
    const { apiKeys } = stack();
    const member = { accountKind: 'member', tier: 'basic' } as const;
    const unknownOwn = { accountKind: 'member', tier: 'retired' } as const;
    const owner = { accountKind: 'owner', tier: 'free' } as const;
    const names = Object.keys(unit.config.rateLimits.tiers);
    expect(apiKeys.tiersFor(member).map((tier) => tier.name)).toEqual(names);
    expect(apiKeys.tiersFor(member)).toContainEqual({
      name: 'basic',
      perMinute: unit.config.rateLimits.tiers['basic']!.perMinute,
      perDay: unit.config.rateLimits.tiers['basic']!.perDay,
      grantable: true,
    });
    const grantable = (creator: Parameters<typeof apiKeys.tiersFor>[0]) =>
      apiKeys
        .tiersFor(creator)
        .filter((tier) => tier.grantable)
        .map((tier) => tier.name);
    expect(grantable(member)).toEqual(['free', 'basic']);
    expect(grantable(owner)).toEqual(names);
    // A key whose tier is no longer configured grants none: its own limits are unknown.
    expect(grantable(unknownOwn)).toEqual([]);
    // Each tier listed grantable is one create() accepts, and each other one it refuses.
    for (const tier of apiKeys.tiersFor(member)) {
      const attempt = apiKeys.create(
        other.id,
        { name: `on ${tier.name}`, tier: tier.name },
        member,
      );
      if (tier.grantable) await expect(attempt).resolves.toBeDefined();
      else expect(await appErrorOf(attempt)).toMatchObject({ code: 'insufficient_permissions' });
    }
    expect(apiKeys.mayGrant('constructor', owner)).toBe(false);
    expect(apiKeys.defaultTier).toBe(unit.config.rateLimits.defaultTier);
  });
  it('tells active, expired and revoked keys apart by its clock', async () => {
    const clock = new TestClock();
    const { apiKeys } = stack(clock);
    const expiring = await apiKeys.create(
      account.id,
      { name: 'expiring', expiresAt: new Date(clock.ms + 1_000).toISOString() },
      platformOperator,
    );
    expect(apiKeys.statusOf(expiring.record)).toBe('active');
    await clock.advance(1_000);
    expect(apiKeys.statusOf(expiring.record)).toBe('expired');
    const revoked = await apiKeys.revoke(account.id, expiring.record.id);
    expect(revoked.revokedAt).toBe(clock.iso());
    expect(apiKeys.statusOf(revoked)).toBe('revoked');
  });

  it("answers 404 for another account's key, to read or to revoke", async () => {
    const { apiKeys } = stack();
    const created = await apiKeys.create(other.id, { name: 'theirs' }, platformOperator);
    for (const attempt of [
      apiKeys.get(account.id, created.record.id),
      apiKeys.revoke(account.id, created.record.id),
    ]) {
      expect(await appErrorOf(attempt)).toMatchObject({ code: 'not_found', status: 404 });
    }
    expect(apiKeys.statusOf(await apiKeys.get(other.id, created.record.id))).toBe('active');
  });

  it('ends the sessions opened with a key when it is revoked', async () => {
    const { apiKeys, sessions } = stack();
    const created = await apiKeys.create(account.id, { name: 'dashboard' }, platformOperator);
    const opened = await sessions.login(created.key, '127.0.0.1', 'unit test');
    await sessions.authenticate(opened.token, '127.0.0.1');
    await apiKeys.revoke(account.id, created.record.id);
    const error = await appErrorOf(sessions.authenticate(opened.token, '127.0.0.1'));
    expect(error.code).toBe('revoked_api_key');
  });
});
