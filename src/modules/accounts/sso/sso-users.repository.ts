// The people who signed in through single sign-on (with the state of the key their sessions are
// opened on), the sign-ins under way, and the scopes of those people's keys, which follow their
// claims at every sign-in.
import type { Kysely } from 'kysely';
import type { Scope } from '../../../auth/scopes.js';
import type { DatabaseSchema } from '../../../storage/schema.js';

export interface SsoUserRecord {
  id: string;
  issuer: string;
  subject: string;
  accountId: string;
  apiKeyId: string;
  email: string | null;
  name: string | null;
  roles: string[];
  createdAt: string;
  lastLoginAt: string;
}

/** A person with whether their key still works (an administrator may have revoked it). */
export interface SsoUserWithKey extends SsoUserRecord {
  keyRevoked: boolean;
}

export interface LoginStateRecord {
  /** SHA-256 of the browser cookie's value. */
  id: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
  returnTo: string;
  createdAt: string;
  expiresAt: string;
}

function toUser(row: DatabaseSchema['sso_users']): SsoUserRecord {
  return {
    id: row.id,
    issuer: row.issuer,
    subject: row.subject,
    accountId: row.account_id,
    apiKeyId: row.api_key_id,
    email: row.email,
    name: row.name,
    roles: JSON.parse(row.roles) as string[],
    createdAt: row.created_at,
    lastLoginAt: row.last_login_at,
  };
}

export class SsoUsersRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insertLoginState(record: LoginStateRecord): Promise<void> {
    await this.db
      .insertInto('sso_login_states')
      .values({
        id: record.id,
        state: record.state,
        nonce: record.nonce,
        code_verifier: record.codeVerifier,
        redirect_uri: record.redirectUri,
        return_to: record.returnTo,
        created_at: record.createdAt,
        expires_at: record.expiresAt,
      })
      .execute();
  }

  /** Removes the sign-in and returns it: of two callbacks with one cookie, one gets it. */
  async takeLoginState(id: string): Promise<LoginStateRecord | undefined> {
    const row = await this.db
      .deleteFrom('sso_login_states')
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (row === undefined) return undefined;
    return {
      id: row.id,
      state: row.state,
      nonce: row.nonce,
      codeVerifier: row.code_verifier,
      redirectUri: row.redirect_uri,
      returnTo: row.return_to,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
    };
  }

  /** Removes the sign-ins that were never finished. */
  async deleteExpiredLoginStates(now: string): Promise<void> {
    await this.db.deleteFrom('sso_login_states').where('expires_at', '<=', now).execute();
  }

  async findUser(issuer: string, subject: string): Promise<SsoUserWithKey | undefined> {
    const row = await this.db
      .selectFrom('sso_users')
      .innerJoin('api_keys', 'api_keys.id', 'sso_users.api_key_id')
      .selectAll('sso_users')
      .select('api_keys.revoked_at as key_revoked_at')
      .where('sso_users.issuer', '=', issuer)
      .where('sso_users.subject', '=', subject)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const { key_revoked_at: revokedAt, ...user } = row;
    return { ...toUser(user), keyRevoked: revokedAt !== null };
  }

  /** The person whose sessions a key opens (SSO keys are never handed out, so: whose session). */
  async findUserByKey(apiKeyId: string): Promise<SsoUserRecord | undefined> {
    const row = await this.db
      .selectFrom('sso_users')
      .selectAll()
      .where('api_key_id', '=', apiKeyId)
      .executeTakeFirst();
    return row === undefined ? undefined : toUser(row);
  }

  async insertUser(record: SsoUserRecord, db: Kysely<DatabaseSchema> = this.db): Promise<void> {
    await db
      .insertInto('sso_users')
      .values({
        id: record.id,
        issuer: record.issuer,
        subject: record.subject,
        account_id: record.accountId,
        api_key_id: record.apiKeyId,
        email: record.email,
        name: record.name,
        roles: JSON.stringify(record.roles),
        created_at: record.createdAt,
        last_login_at: record.lastLoginAt,
      })
      .execute();
  }

  /** What a sign-in learnt: the claims' profile and roles, and the account and key it maps to. */
  async updateUser(
    record: Pick<
      SsoUserRecord,
      'id' | 'accountId' | 'apiKeyId' | 'email' | 'name' | 'roles' | 'lastLoginAt'
    >,
    db: Kysely<DatabaseSchema> = this.db,
  ): Promise<void> {
    await db
      .updateTable('sso_users')
      .set({
        account_id: record.accountId,
        api_key_id: record.apiKeyId,
        email: record.email,
        name: record.name,
        roles: JSON.stringify(record.roles),
        last_login_at: record.lastLoginAt,
      })
      .where('id', '=', record.id)
      .execute();
  }

  /** The scopes of a person's key, as their claims map to now (their sessions see it within 1 s). */
  async setKeyScopes(apiKeyId: string, scopes: readonly Scope[]): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ scopes: JSON.stringify(scopes) })
      .where('id', '=', apiKeyId)
      .execute();
  }

  /** Runs `work` in one transaction (a new person and their key are stored together). */
  transaction<T>(work: (db: Kysely<DatabaseSchema>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }
}
