// API key records. Only the key's hash is stored; the key itself never reaches this module.
import type { Kysely } from 'kysely';
import type { Scope } from '../../auth/scopes.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import { pageOf } from '../../storage/repositories/paging.js';
import type { ApiKeyRecord, CredentialRecord, KeyState } from './api-key.js';

function toRecord(row: DatabaseSchema['api_keys']): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    keyHash: row.key_hash,
    displayKey: row.display_key,
    scopes: JSON.parse(row.scopes) as Scope[],
    tier: row.tier,
    allowedIps: JSON.parse(row.allowed_ips) as string[],
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

export class ApiKeysRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insert(record: ApiKeyRecord, db: Kysely<DatabaseSchema> = this.db): Promise<void> {
    await db
      .insertInto('api_keys')
      .values({
        id: record.id,
        account_id: record.accountId,
        name: record.name,
        key_hash: record.keyHash,
        display_key: record.displayKey,
        scopes: JSON.stringify(record.scopes),
        tier: record.tier,
        allowed_ips: JSON.stringify(record.allowedIps),
        expires_at: record.expiresAt,
        last_used_at: record.lastUsedAt,
        created_at: record.createdAt,
        revoked_at: record.revokedAt,
      })
      .execute();
  }

  async findCredentialByHash(keyHash: string): Promise<CredentialRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .selectAll('api_keys')
      .select(['accounts.kind as account_kind', 'accounts.tier as account_tier'])
      .where('api_keys.key_hash', '=', keyHash)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const { account_kind: accountKind, account_tier: accountTier, ...keyRow } = row;
    return { ...toRecord(keyRow), accountKind, accountTier };
  }

  async findInAccount(accountId: string, id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toRecord(row);
  }

  async listInAccount(
    accountId: string,
    page: { limit: number; offset: number },
  ): Promise<{ keys: ApiKeyRecord[]; total: number }> {
    const { rows, total } = await pageOf(
      this.db.selectFrom('api_keys').where('account_id', '=', accountId),
      page,
      (query) => query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
    );
    return { keys: rows.map(toRecord), total };
  }

  /** Sets `revoked_at` once; a key already revoked keeps its first revocation time. */
  async revoke(accountId: string, id: string, at: string): Promise<ApiKeyRecord | undefined> {
    await this.db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .execute();
    return this.findInAccount(accountId, id);
  }

  async touchLastUsed(id: string, at: string): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  /** Revocation, expiry and tier of the given keys (missing keys are left out). */
  async keyStates(keyIds: readonly string[]): Promise<KeyState[]> {
    if (keyIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .select([
        'api_keys.id as id',
        'api_keys.tier as tier',
        'api_keys.revoked_at as revoked_at',
        'api_keys.expires_at as expires_at',
        'accounts.tier as account_tier',
      ])
      .where('api_keys.id', 'in', keyIds)
      .execute();
    return rows.map((row) => ({
      keyId: row.id,
      tier: row.tier,
      accountTier: row.account_tier,
      revoked: row.revoked_at !== null,
      expiresAtMs: row.expires_at === null ? null : Date.parse(row.expires_at),
    }));
  }
}
