// Dashboard sessions: an API key is exchanged for an opaque token (kept by the browser in an HttpOnly
// cookie, stored here only as a hash) that carries the key's account, scopes, tier and limits, ends
// after an idle period or an absolute lifetime, and ends with the key (revocation or expiry).
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { AppError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type { CredentialRecord } from './api-key.js';
import type { SessionRecord, SessionsRepository } from './sessions.repository.js';
import {
  verifiableCredential,
  type Authenticator,
  type Principal,
  type VerifiableCredential,
} from './authenticator.js';

export interface SessionServiceOptions {
  sessions: SessionsRepository;
  authenticator: Authenticator;
  idleTimeoutMs: number;
  maxAgeMs: number;
  /** How long a looked-up session (and its key's state) is trusted: ≤ 1 s, like keys. */
  cacheTtlMs: number;
  logger: Logger;
  now?: () => number;
}

export interface OpenedSession {
  /** The cookie's value: shown to the browser once, stored only as a hash. */
  token: string;
  csrfToken: string;
  record: SessionRecord;
  principal: Principal;
}

export interface AuthenticatedSession {
  principal: Principal;
  record: SessionRecord;
  /** When the session ends if it is not used again. */
  idleExpiresAt: string;
}

interface CachedSession {
  record: SessionRecord;
  credential: VerifiableCredential;
  principal: Principal;
  lastSeenMs: number;
  lastWrittenMs: number;
}

/** Rough size of one cached session (ids, hashes, timestamps, the key's scopes and ranges). */
const cachedSessionBytes = 2048;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The CSRF token belongs to the session token and can be recomputed from it, so it is never stored:
 * only a holder of the (HttpOnly) cookie's value can derive it.
 */
export function csrfTokenFor(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('csrf').digest('base64url');
}

export function csrfTokenMatches(sessionToken: string, presented: string | undefined): boolean {
  if (presented === undefined || presented === '') return false;
  const expected = Buffer.from(csrfTokenFor(sessionToken));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function sessionEnded(message: string): AppError {
  return new AppError('invalid_session', message);
}

export class SessionService {
  private readonly cache: LRUCache<string, CachedSession> | null;
  private readonly now: () => number;
  /** last_seen_at is written at most this often per session (idle expiry is that coarse). */
  private readonly touchIntervalMs: number;

  constructor(private readonly options: SessionServiceOptions) {
    this.now = options.now ?? Date.now;
    this.touchIntervalMs = Math.min(60_000, Math.floor(options.idleTimeoutMs / 10));
    this.cache =
      options.cacheTtlMs > 0
        ? new LRUCache<string, CachedSession>({
            maxSize: 32 * 1024 * 1024,
            sizeCalculation: () => cachedSessionBytes,
            ttl: options.cacheTtlMs,
            // Entries age by the service's clock (a test's too), not a separate one, read at
            // each lookup (lru-cache otherwise reuses a reading for a millisecond: a revocation
            // seen through a moved clock could be missed).
            perf: { now: () => this.now() },
            ttlResolution: 0,
          })
        : null;
  }

  get idleTimeoutMs(): number {
    return this.options.idleTimeoutMs;
  }

  get maxAgeMs(): number {
    return this.options.maxAgeMs;
  }

  /** Exchanges a key for a session; the key is checked exactly as on any request. */
  async login(apiKey: string, clientAddress: string, userAgent: string): Promise<OpenedSession> {
    const principal = await this.options.authenticator.authenticate(apiKey, clientAddress);
    return this.open(principal, clientAddress, userAgent);
  }

  /**
   * Opens a session on a stored key without its secret (single sign-on: the key minted for the
   * person), checked as any key behind a session is (revoked, expired, address).
   */
  async loginWithCredential(
    credential: CredentialRecord,
    clientAddress: string,
    userAgent: string,
  ): Promise<OpenedSession> {
    const principal = this.options.authenticator.admit(
      verifiableCredential(credential),
      clientAddress,
    );
    return this.open(principal, clientAddress, userAgent);
  }

  private async open(
    principal: Principal,
    clientAddress: string,
    userAgent: string,
  ): Promise<OpenedSession> {
    const now = this.now();
    const token = randomBytes(32).toString('base64url');
    const record: SessionRecord = {
      id: newId('sess'),
      tokenHash: sha256(token),
      accountId: principal.accountId,
      apiKeyId: principal.keyId,
      clientAddress,
      userAgent: userAgent.slice(0, 300),
      createdAt: new Date(now).toISOString(),
      lastSeenAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.options.maxAgeMs).toISOString(),
    };
    await this.options.sessions.insert(record);
    // Ended sessions are removed as new ones begin, so the table holds only live ones (and a few).
    this.options.sessions
      .deleteEnded(
        new Date(now).toISOString(),
        new Date(now - this.options.idleTimeoutMs).toISOString(),
      )
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error }, 'could not remove ended sessions'),
      );
    return {
      token,
      csrfToken: csrfTokenFor(token),
      record,
      principal: Object.freeze({ ...principal, sessionId: record.id }),
    };
  }

  /**
   * The principal of a session token. Errors: an unknown or ended session → 401 invalid_session;
   * the key behind it revoked or expired → its own 401 (and the session ends); an address outside
   * the key's allow-list → 403 ip_not_allowed.
   */
  async authenticate(token: string, clientAddress: string): Promise<AuthenticatedSession> {
    const tokenHash = sha256(token);
    let cached = this.cache?.get(tokenHash);
    if (cached === undefined) {
      const found = await this.options.sessions.findByTokenHash(tokenHash);
      if (found === undefined) {
        throw sessionEnded('The session is unknown or has ended (logged out). Log in again.');
      }
      const credential = verifiableCredential(found.credential);
      const lastSeenMs = Date.parse(found.session.lastSeenAt);
      cached = {
        record: found.session,
        credential,
        principal: Object.freeze({ ...credential.principal, sessionId: found.session.id }),
        lastSeenMs,
        lastWrittenMs: lastSeenMs,
      };
      this.cache?.set(tokenHash, cached);
    }
    const now = this.now();
    if (now >= Date.parse(cached.record.expiresAt)) {
      await this.end(cached.record.id, tokenHash);
      throw sessionEnded(
        `The session reached its maximum age (${Math.round(this.options.maxAgeMs / 60_000)} minutes). Log in again.`,
      );
    }
    if (now - cached.lastSeenMs > this.options.idleTimeoutMs) {
      await this.end(cached.record.id, tokenHash);
      throw sessionEnded(
        `The session ended after ${Math.round(this.options.idleTimeoutMs / 60_000)} minutes without use. Log in again.`,
      );
    }
    // A key revoked or expired: the session answers that key's own code (401 revoked_api_key or
    // expired_api_key) on every request, as the key would, not invalid_session. Its row stays until
    // the session's own idle or absolute end removes it, so every instance keeps giving that answer.
    this.options.authenticator.admit(cached.credential, clientAddress);
    cached.lastSeenMs = now;
    if (now - cached.lastWrittenMs >= this.touchIntervalMs) {
      cached.lastWrittenMs = now;
      // Awaited (at most once per interval and session): a read that follows this request, here
      // or on another instance, must see the session as used.
      await this.options.sessions
        .touch(cached.record.id, new Date(now).toISOString())
        .catch((error: unknown) =>
          this.options.logger.warn({ err: error }, 'could not record session use'),
        );
    }
    return {
      principal: cached.principal,
      record: cached.record,
      idleExpiresAt: new Date(
        Math.min(now + this.options.idleTimeoutMs, Date.parse(cached.record.expiresAt)),
      ).toISOString(),
    };
  }

  /** Logout: the session ends at once on this instance, and within the cache TTL on every other. */
  async logout(token: string): Promise<void> {
    const tokenHash = sha256(token);
    const found = await this.options.sessions.findByTokenHash(tokenHash);
    this.cache?.delete(tokenHash);
    if (found !== undefined) await this.options.sessions.delete(found.session.id);
  }

  /**
   * Ends every session opened with a key, called when the key is revoked: their cached state is
   * dropped, so the next request reads the revocation and answers 401 revoked_api_key (other
   * instances within their cache TTL, ≤ 1 s).
   */
  async endForKey(apiKeyId: string): Promise<void> {
    const hashes = await this.options.sessions.tokenHashesForKey(apiKeyId);
    for (const hash of hashes) this.cache?.delete(hash);
  }

  private async end(id: string, tokenHash: string): Promise<void> {
    this.cache?.delete(tokenHash);
    await this.options.sessions.delete(id);
  }
}
