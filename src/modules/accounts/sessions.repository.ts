// Dashboard session records, found by the hash of the cookie's token together with the key behind them.
import type { Kysely } from 'kysely';
import type { Scope } from '../../auth/scopes.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { CredentialRecord } from './api-key.js';

export interface SessionRecord {
  id: string;
  tokenHash: string;
  accountId: string;
  apiKeyId: string;
  clientAddress: string;
  userAgent: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
}

/** A session with the current state of the key that opened it. */
export interface SessionWithCredential {
  session: SessionRecord;
  credential: CredentialRecord;
}

function toSession(row: DatabaseSchema['sessions']): SessionRecord {
  return {
    id: row.id,
    tokenHash: row.token_hash,
    accountId: row.account_id,
    apiKeyId: row.api_key_id,
    clientAddress: row.client_address,
    userAgent: row.user_agent,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
  };
}

export class SessionsRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insert(session: SessionRecord): Promise<void> {
    await this.db
      .insertInto('sessions')
      .values({
        id: session.id,
        token_hash: session.tokenHash,
        account_id: session.accountId,
        api_key_id: session.apiKeyId,
        client_address: session.clientAddress,
        user_agent: session.userAgent,
        created_at: session.createdAt,
        last_seen_at: session.lastSeenAt,
        expires_at: session.expiresAt,
      })
      .execute();
  }

  async findByTokenHash(tokenHash: string): Promise<SessionWithCredential | undefined> {
    const row = await this.db
      .selectFrom('sessions')
      .innerJoin('api_keys', 'api_keys.id', 'sessions.api_key_id')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .selectAll('sessions')
      .select([
        'api_keys.name as key_name',
        'api_keys.key_hash as key_hash',
        'api_keys.display_key as key_display_key',
        'api_keys.scopes as key_scopes',
        'api_keys.tier as key_tier',
        'api_keys.allowed_ips as key_allowed_ips',
        'api_keys.expires_at as key_expires_at',
        'api_keys.last_used_at as key_last_used_at',
        'api_keys.created_at as key_created_at',
        'api_keys.revoked_at as key_revoked_at',
        'accounts.kind as account_kind',
        'accounts.tier as account_tier',
      ])
      .where('sessions.token_hash', '=', tokenHash)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    return {
      session: toSession(row),
      credential: {
        id: row.api_key_id,
        accountId: row.account_id,
        name: row.key_name,
        keyHash: row.key_hash,
        displayKey: row.key_display_key,
        scopes: JSON.parse(row.key_scopes) as Scope[],
        tier: row.key_tier,
        allowedIps: JSON.parse(row.key_allowed_ips) as string[],
        expiresAt: row.key_expires_at,
        lastUsedAt: row.key_last_used_at,
        createdAt: row.key_created_at,
        revokedAt: row.key_revoked_at,
        accountKind: row.account_kind,
        accountTier: row.account_tier,
      },
    };
  }

  async touch(id: string, at: string): Promise<void> {
    await this.db.updateTable('sessions').set({ last_seen_at: at }).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id', '=', id).execute();
  }

  /** The token hashes of the sessions opened with a key (to drop them from caches). */
  async tokenHashesForKey(apiKeyId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('sessions')
      .select('token_hash')
      .where('api_key_id', '=', apiKeyId)
      .execute();
    return rows.map((row) => row.token_hash);
  }

  /** Removes sessions past their absolute end or idle since before `idleBefore`. */
  async deleteEnded(now: string, idleBefore: string): Promise<number> {
    const result = await this.db
      .deleteFrom('sessions')
      .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<', idleBefore)]))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
