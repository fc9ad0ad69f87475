// SessionService directly, over real storage on every dialect: a key exchanged for a session (the
// key checked as on any request, only the token's hash stored), idle and absolute ends by the
// injected clock, the key's own codes once it is revoked or expired, logout, and the CSRF token.
import { createHash } from 'node:crypto';
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
import { SessionsRepository } from './sessions.repository.js';
import { platformOperator, type CreateApiKeyInput } from './api-key-service.js';
import { csrfTokenFor, csrfTokenMatches } from './session-service.js';

const minute = 60_000;
const idleTimeoutMs = 10 * minute;
const maxAgeMs = 60 * minute;
const address = '127.0.0.1';

describe.each(allDialects)('SessionService on $name', (dialect) => {
  let unit: UnitStorage;
  let account: Account;

  beforeAll(async () => {
    unit = await openUnitStorage(dialect);
    account = await insertAccount(unit.storage, 'basic');
  });
  afterAll(() => unit.close());

  /** A fresh instance (no cached sessions) on `clock`, and a key to log in with. */
  async function loggedIn(clock: TestClock, input: Partial<CreateApiKeyInput> = {}) {
    const auth = authStack({ ...unit, clock, idleTimeoutMs, maxAgeMs });
    const created = await auth.apiKeys.create(
      account.id,
      { name: 'dashboard', ...input },
      platformOperator,
    );
    const opened = await auth.sessions.login(created.key, address, 'unit test browser');
    return { auth, created, opened };
  }

  it('opens a session for a valid key, storing only the hash of its token', async () => {
    const clock = new TestClock();
    const { auth, created, opened } = await loggedIn(clock, { scopes: ['chat:read'] });
    expect(opened.csrfToken).toBe(csrfTokenFor(opened.token));
    expect(opened.principal).toMatchObject({
      keyId: created.record.id,
      accountId: account.id,
      scopes: ['chat:read'],
      sessionId: opened.record.id,
    });
    expect(opened.record).toMatchObject({
      apiKeyId: created.record.id,
      clientAddress: address,
      createdAt: clock.iso(),
      expiresAt: new Date(clock.ms + maxAgeMs).toISOString(),
    });
    const stored = await new SessionsRepository(unit.storage.db).findByTokenHash(
      createHash('sha256').update(opened.token).digest('hex'),
    );
    expect(stored?.session.id).toBe(opened.record.id);
    expect(stored?.session.tokenHash).not.toBe(opened.token);
    const session = await auth.sessions.authenticate(opened.token, address);
    expect(session.principal).toEqual(opened.principal);
    expect(session.idleExpiresAt).toBe(new Date(clock.ms + idleTimeoutMs).toISOString());
  });

  it('checks the key at login as on any request', async () => {
    const auth = authStack({ ...unit, clock: new TestClock(), idleTimeoutMs, maxAgeMs });
    const error = await appErrorOf(auth.sessions.login('sk-nothing', address, 'browser'));
    expect(error.code).toBe('invalid_api_key');
  });

  it('stays open while used, on this instance and another, and ends when left idle', async () => {
    const clock = new TestClock();
    const { auth, opened } = await loggedIn(clock);
    await clock.advance(idleTimeoutMs - 1);
    await auth.sessions.authenticate(opened.token, address);
    await clock.advance(idleTimeoutMs - 1);
    // Another instance reads the use recorded above from the database.
    const elsewhere = authStack({ ...unit, clock, idleTimeoutMs, maxAgeMs });
    await elsewhere.sessions.authenticate(opened.token, address);
    await clock.advance(idleTimeoutMs + 1);
    const idle = await appErrorOf(auth.sessions.authenticate(opened.token, address));
    expect(idle).toMatchObject({ code: 'invalid_session', status: 401 });
    expect(idle.message).toBe('The session ended after 10 minutes without use. Log in again.');
    const gone = await appErrorOf(elsewhere.sessions.authenticate(opened.token, address));
    expect(gone.message).toBe('The session is unknown or has ended (logged out). Log in again.');
  });

  it('ends at its maximum age however often it is used', async () => {
    const clock = new TestClock();
    const { auth, opened } = await loggedIn(clock);
    for (let used = 0; used < 5; used += 1) {
      await clock.advance(maxAgeMs / 6);
      await auth.sessions.authenticate(opened.token, address);
    }
    const last = await auth.sessions.authenticate(opened.token, address);
    // Ten minutes before its end, the idle limit reaches past it: the end is the absolute one.
    expect(last.idleExpiresAt).toBe(opened.record.expiresAt);
    await clock.advance(maxAgeMs / 6);
    const error = await appErrorOf(auth.sessions.authenticate(opened.token, address));
    expect(error.message).toBe('The session reached its maximum age (60 minutes). Log in again.');
  });

  it("answers the key's own code once the key is revoked or expired", async () => {
    const clock = new TestClock();
    const revoked = await loggedIn(clock);
    await revoked.auth.apiKeys.revoke(account.id, revoked.created.record.id);
    const revokedError = await appErrorOf(
      revoked.auth.sessions.authenticate(revoked.opened.token, address),
    );
    expect(revokedError.code).toBe('revoked_api_key');
    const expiring = await loggedIn(clock, {
      expiresAt: new Date(clock.ms + minute).toISOString(),
    });
    await clock.advance(minute);
    const expiredError = await appErrorOf(
      expiring.auth.sessions.authenticate(expiring.opened.token, address),
    );
    expect(expiredError.code).toBe('expired_api_key');
    // The row stays, so every instance keeps giving that answer.
    const elsewhere = authStack({ ...unit, clock, idleTimeoutMs, maxAgeMs });
    const again = await appErrorOf(elsewhere.sessions.authenticate(expiring.opened.token, address));
    expect(again.code).toBe('expired_api_key');
  });

  it("refuses an address outside the key's allow-list: 403 ip_not_allowed", async () => {
    const clock = new TestClock();
    const auth = authStack({ ...unit, clock, idleTimeoutMs, maxAgeMs });
    const created = await auth.apiKeys.create(
      account.id,
      { name: 'office only', allowedIps: ['203.0.113.0/24'] },
      platformOperator,
    );
    const opened = await auth.sessions.login(created.key, '203.0.113.7', 'browser');
    const error = await appErrorOf(auth.sessions.authenticate(opened.token, '198.51.100.1'));
    expect(error).toMatchObject({ code: 'ip_not_allowed', status: 403 });
  });

  it('ends at logout, and an unknown token is no session', async () => {
    const { auth, opened } = await loggedIn(new TestClock());
    await auth.sessions.logout(opened.token);
    for (const token of [opened.token, 'not-a-session-token']) {
      const error = await appErrorOf(auth.sessions.authenticate(token, address));
      expect(error.code).toBe('invalid_session');
    }
  });
});

describe('csrfTokenMatches', () => {
  it('accepts only the token derived from the session token', () => {
    const token = 'session-token-value';
    expect(csrfTokenMatches(token, csrfTokenFor(token))).toBe(true);
    expect(csrfTokenMatches(token, csrfTokenFor('another-session'))).toBe(false);
    expect(csrfTokenMatches(token, `${csrfTokenFor(token)}x`)).toBe(false);
    expect(csrfTokenMatches(token, '')).toBe(false);
    expect(csrfTokenMatches(token, undefined)).toBe(false);
  });
});
