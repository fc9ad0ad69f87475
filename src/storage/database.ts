// Opens the configured database, runs the migrations (locked on PostgreSQL), and closes it again.
import { Migrator, sql } from 'kysely';
import type { DatabaseConfig } from '../config/config.js';
import type { DialectAdapter } from './dialects/dialect.js';
import { migrationProvider } from './migrations/index.js';

export interface Storage extends DialectAdapter {
  /** Answers when the database does; rejects after `timeoutMs` otherwise. */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Only the configured database's driver is loaded (pg and better-sqlite3 each weigh several MiB). */
export async function createDialectAdapter(config: DatabaseConfig): Promise<DialectAdapter> {
  if (config.kind === 'sqlite') {
    const { createSqliteAdapter } = await import('./dialects/sqlite.js');
    return createSqliteAdapter(config.path);
  }
  const { createPostgresAdapter } = await import('./dialects/postgres.js');
  return createPostgresAdapter(config.url);
}

/**
 * Applies pending migrations. Kysely's migrator takes a PostgreSQL advisory lock for the run, so
 * instances starting together apply each migration exactly once; on SQLite the run is one
 * transaction, serialised by SQLite's own write lock.
 */
export async function migrateToLatest(adapter: DialectAdapter): Promise<string[]> {
  // Kysely looks for its bookkeeping tables in every schema it can see unless told which: with
  // several schemas in one database (one per deployment or per test), another schema's tables
  // would be taken for this one's. On PostgreSQL they live in the connection's current schema.
  const schema =
    adapter.kind === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(adapter.db))
          .rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db: adapter.db,
    provider: migrationProvider(adapter.columnTypes),
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    throw new Error('Database migration failed', { cause: error });
  }
  return (results ?? [])
    .filter((result) => result.status === 'Success')
    .map((r) => r.migrationName);
}

export async function openStorage(config: DatabaseConfig): Promise<Storage> {
  const adapter = await createDialectAdapter(config);
  try {
    await migrateToLatest(adapter);
  } catch (error) {
    await adapter.db.destroy().catch(() => undefined);
    throw error;
  }
  let closed = false;
  return {
    ...adapter,
    async ping(timeoutMs = 2000) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('database ping timed out')), timeoutMs);
      });
      try {
        await Promise.race([sql`select 1`.execute(adapter.db), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await adapter.db.destroy();
    },
  };
}
