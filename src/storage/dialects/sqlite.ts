// The embedded default: SQLite through better-sqlite3, in WAL mode with foreign keys enforced.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { DatabaseSchema } from '../schema.js';
import type { DialectAdapter } from './dialect.js';

export function createSqliteAdapter(filePath: string): DialectAdapter {
  if (filePath !== ':memory:') mkdirSync(path.dirname(filePath), { recursive: true });
  const database = new SqliteDatabase(filePath);
  database.pragma('journal_mode = WAL');
  database.pragma('foreign_keys = ON');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  const db = new Kysely<DatabaseSchema>({ dialect: new SqliteDialect({ database }) });
  return {
    kind: 'sqlite',
    columnTypes: { timestamp: 'text', json: 'text', boolean: 'integer' },
    db,
    description: `sqlite:${filePath}`,
    isUniqueViolation(error) {
      const code = (error as { code?: unknown } | null)?.code;
      return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
    },
  };
}
