// Creating, listing and revoking API keys within an account.
import type { Kysely } from 'kysely';
import { InvalidParameterError, NotFoundError } from '../errors/app-error.js';
import { newId } from '../ids.js';
import type {
  ApiKeyRecord,
  ApiKeysRepository,
} from '../storage/repositories/api-keys.repository.js';
import type { DatabaseSchema } from '../storage/schema.js';
import { displayFormOf, generateApiKey } from './api-key-format.js';
import type { Authenticator } from './authenticator.js';
import { validateAllowedIps } from './ip-rules.js';
import type { KeyHasher } from './key-hasher.js';
import type { Scope } from './scopes.js';

export interface CreateApiKeyInput {
  name: string;
  scopes?: readonly Scope[];
  tier?: string;
  allowedIps?: readonly string[];
  expiresAt?: string | null;
}

export interface CreatedApiKey {
  record: ApiKeyRecord;
  /** The full secret: returned once, never stored. */
  key: string;
}

export interface ApiKeyServiceOptions {
  keys: ApiKeysRepository;
  hasher: KeyHasher;
  authenticator: Authenticator;
  tiers: readonly string[];
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
    if (!this.options.tiers.includes(tier)) {
      throw new InvalidParameterError(
        'tier',
        `Unknown tier '${tier}'. Configured tiers: ${this.options.tiers.join(', ')}.`,
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

  async create(accountId: string, input: CreateApiKeyInput): Promise<CreatedApiKey> {
    const created = this.prepare(accountId, input);
    await this.store(created);
    return created;
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
    return record;
  }
}
