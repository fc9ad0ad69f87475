// Turns a presented key into a principal, checking in the contract's order: format, existence,
// revocation, expiry, client address. Validated lookups are cached for at most `keyCacheTtlMs`
// (≤ 1 s), so a key revoked by another instance is refused within a second.
import { LRUCache } from 'lru-cache';
import { AppError } from '../../errors/app-error.js';
import type { ApiKeysRepository } from './api-keys.repository.js';
import type { AccountKind } from './account.js';
import type { CredentialRecord } from './api-key.js';
import { hasKeyShape, isWellFormedApiKey } from './api-key-format.js';
import { IpAllowList } from './ip-rules.js';
import { KeyHasher } from './key-hasher.js';
import type { Scope } from '../../auth/scopes.js';

export interface Principal {
  readonly keyId: string;
  readonly accountId: string;
  readonly accountKind: AccountKind;
  readonly scopes: readonly Scope[];
  readonly tier: string;
  /** The tier of the account's rate-limit ceiling (null: none, the owner's account). */
  readonly accountTier: string | null;
  /** Set when the request came with a dashboard session (opened with this key) instead of the key. */
  readonly sessionId?: string;
}

/** A stored key record prepared for repeated checks (its allow-list parsed once). */
export interface VerifiableCredential {
  readonly record: CredentialRecord;
  readonly allowList: IpAllowList;
  readonly expiresAtMs: number | null;
  readonly principal: Principal;
}

interface CachedCredential extends VerifiableCredential {
  digest: Buffer;
}

/** The allow-list of every key without address rules (most): one, not a native list per key. */
const anyAddress = new IpAllowList([]);

export function verifiableCredential(record: CredentialRecord): VerifiableCredential {
  return {
    record,
    allowList: record.allowedIps.length === 0 ? anyAddress : new IpAllowList(record.allowedIps),
    expiresAtMs: record.expiresAt === null ? null : Date.parse(record.expiresAt),
    principal: Object.freeze({
      keyId: record.id,
      accountId: record.accountId,
      accountKind: record.accountKind,
      scopes: record.scopes,
      tier: record.tier,
      accountTier: record.accountTier,
    }),
  };
}

export interface AuthenticatorOptions {
  keys: ApiKeysRepository;
  hasher: KeyHasher;
  cacheTtlMs: number;
  lastUsedWriteIntervalMs: number;
  now?: () => number;
  onBackgroundError?: (error: unknown) => void;
}

export class Authenticator {
  private readonly cache: LRUCache<string, CachedCredential> | null;
  /*
   * Bounded by `maxSize` counting one per entry rather than by `max`: with `max`, lru-cache
   * allocates its arrays for every entry up front (about 4 MiB for these two), idle or not.
   */
  private readonly lastUsedWrites = new LRUCache<string, number>({
    maxSize: 100_000,
    sizeCalculation: () => 1,
  });
  private readonly now: () => number;
  /** When stale entries were last dropped (see `dropStale`). */
  private lastPurgeMs = 0;

  constructor(private readonly options: AuthenticatorOptions) {
    this.now = options.now ?? Date.now;
    this.cache =
      options.cacheTtlMs > 0
        ? new LRUCache<string, CachedCredential>({
            maxSize: 50_000,
            sizeCalculation: () => 1,
            ttl: options.cacheTtlMs,
            // Entries age by the service's clock (a test's too), not a separate one, read at
            // each lookup (lru-cache otherwise reuses a reading for a millisecond: a revocation
            // seen through a moved clock could be missed).
            perf: { now: () => this.now() },
            ttlResolution: 0,
            ttlAutopurge: false,
          })
        : null;
  }

  async authenticate(presented: string | undefined, clientAddress: string): Promise<Principal> {
    if (presented === undefined || presented === '') {
      throw new AppError(
        'missing_api_key',
        "No API key was provided. Send it as 'Authorization: Bearer <key>' or 'X-API-Key: <key>'.",
      );
    }
    const credential = hasKeyShape(presented) ? await this.lookup(presented) : undefined;
    if (credential === undefined) {
      throw new AppError('invalid_api_key', 'The API key is malformed or does not exist.');
    }
    return this.admit(credential, clientAddress);
  }

  /**
   * The checks after the key was found (revocation, expiry, client address), in the contract's
   * order; also used for the key behind a dashboard session.
   */
  admit(credential: VerifiableCredential, clientAddress: string): Principal {
    const { record } = credential;
    if (record.revokedAt !== null) {
      throw new AppError(
        'revoked_api_key',
        'This API key has been revoked and can no longer be used.',
      );
    }
    const now = this.now();
    if (credential.expiresAtMs !== null && now >= credential.expiresAtMs) {
      throw new AppError('expired_api_key', `This API key expired at ${record.expiresAt ?? ''}.`);
    }
    if (!credential.allowList.allows(clientAddress)) {
      throw new AppError(
        'ip_not_allowed',
        `Requests with this API key are not allowed from ${clientAddress}.`,
      );
    }
    this.recordUse(record.id, now);
    return credential.principal;
  }

  /**
   * The key and account a presented key names, whatever its state (revoked, expired, refused
   * address); undefined for a malformed or unknown key. The audit log records failed logins there.
   */
  async keyOwner(presented: string): Promise<{ keyId: string; accountId: string } | undefined> {
    const credential = hasKeyShape(presented) ? await this.lookup(presented) : undefined;
    return credential === undefined
      ? undefined
      : { keyId: credential.record.id, accountId: credential.record.accountId };
  }

  /** How many looked-up keys are cached now (tests: keys presented once do not stay). */
  get cachedKeyCount(): number {
    return this.cache?.size ?? 0;
  }

  /** Drops a cached key at once (called by the instance that revokes it). */
  forget(keyHash: string): void {
    this.cache?.delete(keyHash);
  }

  /**
   * The stored credential whose hash matches the presented key, compared in constant time. The
   * checksum is checked only on a cache miss, where it keeps a malformed key from costing a
   * database read: a cached digest was computed from a key that passed it.
   */
  private async lookup(presented: string): Promise<CachedCredential | undefined> {
    const digest = this.options.hasher.digest(presented);
    const keyHash = digest.toString('hex');
    let credential = this.cache?.get(keyHash);
    if (credential === undefined) {
      if (!isWellFormedApiKey(presented)) return undefined;
      const record = await this.options.keys.findCredentialByHash(keyHash);
      if (record === undefined) return undefined;
      // Its own 32 bytes: a small Buffer.from() is a slice of an 8 KiB pool slab, which a cached
      // digest would keep alive whole.
      const stored = Buffer.alloc(record.keyHash.length / 2);
      stored.write(record.keyHash, 'hex');
      credential = { ...verifiableCredential(record), digest: stored };
      this.dropStale();
      this.cache?.set(keyHash, credential);
    }
    return KeyHasher.sameDigest(digest, credential.digest) ? credential : undefined;
  }

  /**
   * Drops cached keys past their time and write times past their interval, at most once a second:
   * lru-cache only drops a stale entry when it is read again, so keys presented once (tenants'
   * keys, keys since revoked) would otherwise stay until tens of thousands of others pushed them
   * out.
   */
  private dropStale(): void {
    const now = this.now();
    if (now - this.lastPurgeMs < 1000) return;
    this.lastPurgeMs = now;
    this.cache?.purgeStale();
    const written = [...this.lastUsedWrites.entries()];
    for (const [keyId, writtenAt] of written) {
      if (now - writtenAt >= this.options.lastUsedWriteIntervalMs)
        this.lastUsedWrites.delete(keyId);
    }
  }

  /** `last_used_at` is written at most once per interval per key, off the request path. */
  private recordUse(keyId: string, now: number): void {
    const last = this.lastUsedWrites.get(keyId);
    if (last !== undefined && now - last < this.options.lastUsedWriteIntervalMs) return;
    this.dropStale();
    this.lastUsedWrites.set(keyId, now);
    this.options.keys
      .touchLastUsed(keyId, new Date(now).toISOString())
      .catch((error: unknown) => this.options.onBackgroundError?.(error));
  }
}
