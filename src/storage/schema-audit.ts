// Table shapes of the audit log and its chains, as Kysely sees them (part of DatabaseSchema in
// schema.ts; its conventions hold here). Every column is stored as the text that was hashed.

/** One record of an account's chain (migration 022). */
export interface AuditRecordsTable {
  id: string;
  account_id: string;
  seq: number;
  at: string;
  actor_kind: string;
  actor_key_id: string | null;
  actor_session_id: string | null;
  actor_user: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  /** Canonical JSON text of `{before, after}`, or null. */
  changes: string | null;
  ip: string | null;
  prev_hash: string;
  hash: string;
}

/** An account's chain: its head (appends lock this row) and its base (moved by retention). */
export interface AuditChainsTable {
  account_id: string;
  last_seq: number;
  last_hash: string;
  base_seq: number;
  base_hash: string;
}
