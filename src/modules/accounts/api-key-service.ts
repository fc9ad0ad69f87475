// Creating, listing and revoking API keys within an account.
import type { Kysely } from 'kysely';
import type { RateLimitTier } from '../../config/config.js';
import { AppError, InvalidParameterError, NotFoundError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type { ApiKeysRepository } from './api-keys.repository.js';
import type { ApiKeyRecord } from './api-key.js';
import type { AccountKind } from './account.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import { displayFormOf, generateApiKey } from './api-key-format.js';
import type { Authenticator } from './authenticator.js';
import { validateAllowedIps } from './ip-rules.js';
import type { KeyHasher } from './key-hasher.js';
import type { Scope } from '../../auth/scopes.js';

export interface CreateApiKeyInput {
  name: string;
  scopes?: readonly Scope[];
  tier?: string;
  allowedIps?: readonly string[];
  expiresAt?: string | null;
}

/** Who creates a key: a key of the platform owner's account may grant any tier, others no more than their own. */
export interface KeyCreator {
  readonly accountKind: AccountKind;
  readonly tier: string;
}

export type ApiKeyStatus = 'active' | 'expired' | 'revoked';

/** A configured rate-limit tier, as a key creator sees it. */
export interface GrantableTier {
  readonly name: string;
  readonly perMinute: number;
  readonly perDay: number;
  /** Whether this creator may give a new key this tier. */
  readonly grantable: boolean;
}

/** The command line acts with the authority of whoever can reach the database. */
export const platformOperator: KeyCreator = { accountKind: 'owner', tier: 'operator' };

export interface CreatedApiKey {
  record: ApiKeyRecord;
  /** The full secret: returned once, never stored. */
  key: string;
}

export interface ApiKeyServiceOptions {
  keys: ApiKeysRepository;
  hasher: KeyHasher;
  authenticator: Authenticator;
  /** Sessions opened with a key end when it is revoked. */
  sessions?: { endForKey(apiKeyId: string): Promise<void> };
  /** Called once a key is revoked (its open streams and sockets are ended). */
  onRevoked?: (keyId: string) => void;
  tiers: Readonly<Record<string, RateLimitTier>>;
  defaultTier: string;
  now?: () => number;
}

export class ApiKeyService {
  private readonly now: () => number;

  constructor(private readonly options: ApiKeyServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Builds a new key and its record without storing it (callers may store it in a transaction). */
  prepare(accountId: string, input: CreateApiKeyInput, presetKey?: string): CreatedApiKey {
    const tier = input.tier ?? this.options.defaultTier;
    // Own keys only: a tier named `constructor` or `toString` is not a configured tier.
    if (!Object.hasOwn(this.options.tiers, tier)) {
      throw new InvalidParameterError(
        'tier',
        `Unknown tier '${tier}'. Configured tiers: ${Object.keys(this.options.tiers).join(', ')}.`,
      );
    }
    const allowedIps = validateAllowedIps(input.allowedIps ?? []);
    let expiresAt: string | null = null;
    if (input.expiresAt !== undefined && input.expiresAt !== null) {
      const expiresMs = Date.parse(input.expiresAt);
      if (Number.isNaN(expiresMs)) {
        throw new InvalidParameterError(
          'expires_at',
          "'expires_at' must be an ISO 8601 timestamp.",
        );
      }
      if (expiresMs <= this.now()) {
        throw new InvalidParameterError('expires_at', "'expires_at' must be in the future.");
      }
      expiresAt = new Date(expiresMs).toISOString();
    }
    const key = presetKey ?? generateApiKey();
    const record: ApiKeyRecord = {
      id: newId('key'),
      accountId,
      name: input.name,
      keyHash: this.options.hasher.hash(key),
      displayKey: displayFormOf(key),
      scopes: [...new Set(input.scopes ?? [])],
      tier,
      allowedIps,
      expiresAt,
      lastUsedAt: null,
      createdAt: new Date(this.now()).toISOString(),
      revokedAt: null,
    };
    return { record, key };
  }

  async store(created: CreatedApiKey, db?: Kysely<DatabaseSchema>): Promise<void> {
    await this.options.keys.insert(created.record, db);
  }

  /** The tier of a key created without one. */
  get defaultTier(): string {
    return this.options.defaultTier;
  }

  /**
   * Whether `creator` may give a key `tier`. Tiers bind a tenant: only keys of the platform
   * owner's account may grant a tier whose limits exceed the creating key's own in either window.
   * An unknown tier is granted by no one.
   */
  mayGrant(tier: string, creator: KeyCreator): boolean {
    const { tiers } = this.options;
    // Own keys only: a tier named `constructor` or `toString` is not a configured tier.
    const granted = Object.hasOwn(tiers, tier) ? tiers[tier] : undefined;
    if (granted === undefined) return false;
    if (creator.accountKind === 'owner') return true;
    const own = Object.hasOwn(tiers, creator.tier) ? tiers[creator.tier] : undefined;
    return own !== undefined && granted.perMinute <= own.perMinute && granted.perDay <= own.perDay;
  }

  /** Every configured tier, in the configuration's order, and whether `creator` may grant it. */
  tiersFor(creator: KeyCreator): GrantableTier[] {
    return Object.entries(this.options.tiers).map(([name, limits]) => ({
      name,
      perMinute: limits.perMinute,
      perDay: limits.perDay,
      grantable: this.mayGrant(name, creator),
    }));
  }

  /** Creates a key for `creator`'s account, on a tier it may grant (see mayGrant). */
  async create(
    accountId: string,
    input: CreateApiKeyInput,
    creator: KeyCreator,
  ): Promise<CreatedApiKey> {
    const tier = input.tier ?? this.options.defaultTier;
    // An unknown tier is refused by prepare() as an invalid parameter, not as a permission.
    if (Object.hasOwn(this.options.tiers, tier) && !this.mayGrant(tier, creator)) {
      throw new AppError(
        'insufficient_permissions',
        `Tier '${tier}' allows more requests than this key's own tier '${creator.tier}'. Only admin keys of the platform owner's account may grant a higher tier.`,
        { param: 'tier', details: { required_scope: 'admin' } },
      );
    }
    const created = this.prepare(accountId, input);
    await this.store(created);
    return created;
  }

  /** Whether the key works now: revocation is permanent, expiry comes with time. */
  statusOf(record: ApiKeyRecord): ApiKeyStatus {
    if (record.revokedAt !== null) return 'revoked';
    if (record.expiresAt !== null && Date.parse(record.expiresAt) <= this.now()) return 'expired';
    return 'active';
  }

  list(accountId: string, page: { limit: number; offset: number }) {
    return this.options.keys.listInAccount(accountId, page);
  }

  async get(accountId: string, id: string): Promise<ApiKeyRecord> {
    const record = await this.options.keys.findInAccount(accountId, id);
    if (record === undefined) throw new NotFoundError('API key', id);
    return record;
  }

  /** Permanent: a revoked key is refused at once here and within a second on every instance. */
  async revoke(accountId: string, id: string): Promise<ApiKeyRecord> {
    const record = await this.options.keys.revoke(
      accountId,
      id,
      new Date(this.now()).toISOString(),
    );
    if (record === undefined) throw new NotFoundError('API key', id);
    this.options.authenticator.forget(record.keyHash);
    await this.options.sessions?.endForKey(record.id);
    this.options.onRevoked?.(record.id);
    return record;
  }
}
