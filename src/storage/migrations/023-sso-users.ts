// Single sign-on (issue 33): `sso_users`, the people who signed in to the dashboard through the
// OpenID Connect provider, one per (issuer, subject), each with the account their claims map to and
// the key their sessions are opened on; `sso_login_states`, the sign-ins under way (the PKCE
// verifier, state and nonce of each, found by the hash of the browser's cookie and taken once).
// Every string is bounded by a check, alike on both databases.
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function ssoUsers(types: ColumnTypes): Migration {
  const timestamp = sql.raw(types.timestamp);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('sso_users')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('issuer', 'text', (column) => column.notNull())
        .addColumn('subject', 'text', (column) => column.notNull())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('api_key_id', 'text', (column) =>
          column.notNull().references('api_keys.id').onDelete('cascade'),
        )
        .addColumn('email', 'text')
        .addColumn('name', 'text')
        .addColumn('roles', sql.raw(types.json), (column) => column.notNull())
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .addColumn('last_login_at', timestamp, (column) => column.notNull())
        .addUniqueConstraint('sso_users_identity', ['issuer', 'subject'])
        .addCheckConstraint('sso_users_id_length', sql`length(id) <= 64`)
        .addCheckConstraint('sso_users_issuer_length', sql`length(issuer) <= 2048`)
        .addCheckConstraint('sso_users_subject_length', sql`length(subject) <= 255`)
        .addCheckConstraint('sso_users_email_length', sql`email is null or length(email) <= 320`)
        .addCheckConstraint('sso_users_name_length', sql`name is null or length(name) <= 200`)
        .execute();
      await db.schema
        .createIndex('sso_users_by_key')
        .on('sso_users')
        .column('api_key_id')
        .execute();

      await db.schema
        .createTable('sso_login_states')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('state', 'text', (column) => column.notNull())
        .addColumn('nonce', 'text', (column) => column.notNull())
        .addColumn('code_verifier', 'text', (column) => column.notNull())
        .addColumn('redirect_uri', 'text', (column) => column.notNull())
        .addColumn('return_to', 'text', (column) => column.notNull())
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .addColumn('expires_at', timestamp, (column) => column.notNull())
        .addCheckConstraint(
          'sso_login_states_lengths',
          sql`length(id) <= 64 and length(state) <= 128 and length(nonce) <= 128 and length(code_verifier) <= 128 and length(redirect_uri) <= 2048 and length(return_to) <= 2048`,
        )
        .execute();
      await db.schema
        .createIndex('sso_login_states_by_expiry')
        .on('sso_login_states')
        .column('expires_at')
        .execute();
    },
  };
}
