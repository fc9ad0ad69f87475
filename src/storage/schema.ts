// Table shapes as Kysely sees them. Timestamps are ISO 8601 strings and JSON columns hold JSON text
// on both dialects; the dialect modules normalise what each driver returns to these shapes.
import type { ColumnType, Generated as _Generated } from 'kysely';

/** Booleans are written as 1/0 (accepted by both dialects) and read back as number or boolean. */
export type BooleanColumn = ColumnType<number | boolean, number, number>;

export interface AccountsTable {
  id: string;
  name: string;
  kind: 'owner' | 'member';
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  key_hash: string;
  display_key: string;
  /** JSON array of scope names. */
  scopes: string;
  tier: string;
  /** JSON array of CIDR ranges; empty means every address. */
  allowed_ips: string;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  revoked_at: string | null;
}

export interface DatabaseSchema {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
}
