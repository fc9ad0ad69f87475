// What differs between the two databases, in one place: column types, driver set-up, error shapes.
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../schema.js';

export interface ColumnTypes {
  /** ISO 8601 timestamps: `text` on SQLite, `timestamptz` on PostgreSQL. */
  readonly timestamp: 'text' | 'timestamptz';
  /** JSON documents: `text` on SQLite, `jsonb` on PostgreSQL. */
  readonly json: 'text' | 'jsonb';
  readonly boolean: 'integer' | 'boolean';
  /** Floating-point numbers: `real` on SQLite, `double precision` on PostgreSQL. */
  readonly real: 'real' | 'double precision';
}

export interface DialectAdapter {
  readonly kind: 'sqlite' | 'postgres';
  readonly columnTypes: ColumnTypes;
  readonly db: Kysely<DatabaseSchema>;
  isUniqueViolation(error: unknown): boolean;
  /** Human-readable location for logs, without credentials. */
  readonly description: string;
}
