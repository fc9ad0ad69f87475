// The audit log (issue 33): one append-only record per administrative change (a key minted, a
// budget raised, a tool call approved, a login), hash-chained per account. `audit_records` holds
// the records: `seq` counts an account's records from 1 with no gap, `prev_hash` is the hash of the
// record before (or of the chain's base), `hash` the SHA-256 of the record's canonical form. A
// record's text columns hold exactly what was hashed (text, not timestamptz or jsonb, which would
// normalise it). `audit_chains` holds each account's chain head (the last seq and hash: appends
// lock this row, and a deleted tail shows against it) and its base (the seq and hash of the last
// record retention pruned; 0 and the genesis hash before any). Every string is bounded by a check.
import { sql, type Kysely, type Migration } from 'kysely';

/** The longest serialised `changes` a record may hold (bytes of JSON text). */
export const auditChangesMaxLength = 65_536;

export function auditLog(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('audit_records')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) => column.notNull())
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('at', 'text', (column) => column.notNull())
        .addColumn('actor_kind', 'text', (column) => column.notNull())
        .addColumn('actor_key_id', 'text')
        .addColumn('actor_session_id', 'text')
        .addColumn('actor_user', 'text')
        .addColumn('action', 'text', (column) => column.notNull())
        .addColumn('target_type', 'text', (column) => column.notNull())
        .addColumn('target_id', 'text')
        .addColumn('changes', 'text')
        .addColumn('ip', 'text')
        .addColumn('prev_hash', 'text', (column) => column.notNull())
        .addColumn('hash', 'text', (column) => column.notNull())
        .addUniqueConstraint('audit_records_chain', ['account_id', 'seq'])
        .addCheckConstraint('audit_records_id_length', sql`length(id) <= 64`)
        .addCheckConstraint('audit_records_account_length', sql`length(account_id) <= 64`)
        .addCheckConstraint('audit_records_seq', sql`seq >= 1`)
        .addCheckConstraint('audit_records_at_length', sql`length(at) <= 32`)
        .addCheckConstraint('audit_records_actor_kind_length', sql`length(actor_kind) <= 16`)
        .addCheckConstraint(
          'audit_records_actor_length',
          sql`(actor_key_id is null or length(actor_key_id) <= 64) and (actor_session_id is null or length(actor_session_id) <= 64) and (actor_user is null or length(actor_user) <= 256)`,
        )
        .addCheckConstraint('audit_records_action_length', sql`length(action) <= 64`)
        .addCheckConstraint(
          'audit_records_target_length',
          sql`length(target_type) <= 64 and (target_id is null or length(target_id) <= 128)`,
        )
        .addCheckConstraint(
          'audit_records_changes_length',
          sql`changes is null or length(changes) <= ${sql.lit(auditChangesMaxLength)}`,
        )
        .addCheckConstraint('audit_records_ip_length', sql`ip is null or length(ip) <= 64`)
        .addCheckConstraint(
          'audit_records_hash_length',
          sql`length(prev_hash) = 64 and length(hash) = 64`,
        )
        .execute();
      // An account's records newest first, filtered by time.
      await db.schema
        .createIndex('audit_records_by_account_time')
        .on('audit_records')
        .columns(['account_id', 'at'])
        .execute();
      // The owner's view across accounts, and retention's deletes by age.
      await db.schema
        .createIndex('audit_records_by_time')
        .on('audit_records')
        .column('at')
        .execute();
      await db.schema
        .createTable('audit_chains')
        .addColumn('account_id', 'text', (column) => column.primaryKey())
        .addColumn('last_seq', 'integer', (column) => column.notNull())
        .addColumn('last_hash', 'text', (column) => column.notNull())
        .addColumn('base_seq', 'integer', (column) => column.notNull())
        .addColumn('base_hash', 'text', (column) => column.notNull())
        .addCheckConstraint('audit_chains_account_length', sql`length(account_id) <= 64`)
        .addCheckConstraint(
          'audit_chains_hash_length',
          sql`length(last_hash) = 64 and length(base_hash) = 64`,
        )
        .addCheckConstraint('audit_chains_seq', sql`base_seq >= 0 and last_seq >= base_seq`)
        .execute();
    },
  };
}
