// The embedded default: SQLite through better-sqlite3, in WAL mode with foreign keys enforced.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type SqliteDialectConfig,
} from 'kysely';
import { LRUCache } from 'lru-cache';
import * as sqliteVec from 'sqlite-vec';
import type { DatabaseSchema } from '../schema.js';
import type { DialectAdapter } from './dialect.js';
import { checkpointThresholdBytes, startCheckpointer } from './sqlite-checkpointer.js';

/**
 * Transactions start with BEGIN IMMEDIATE: the write lock is taken up front, so two processes
 * sharing the file serialise their transactions (the migration run included) instead of both
 * reading an old state and failing when they write.
 */
class ImmediateTransactionSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/**
 * SQLite's DDL is transactional, but Kysely's adapter says otherwise, which makes its migrator run
 * without a transaction and without a lock. Saying so makes each migration run one `BEGIN
 * IMMEDIATE` transaction: a second process waits for the first, then finds nothing pending.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class ImmediateTransactionSqliteDialect extends SqliteDialect {
  constructor(private readonly dialectConfig: SqliteDialectConfig) {
    super(dialectConfig);
  }

  override createDriver() {
    return new ImmediateTransactionSqliteDriver(this.dialectConfig);
  }

  override createAdapter() {
    return new TransactionalDdlSqliteAdapter();
  }
}

/**
 * Kysely prepares every query afresh; SQLite's prepare (parse and plan) costs about as much as
 * running a small query. The same few hundred statements recur, so prepared statements are kept
 * by their SQL text, bounded in bytes. Safe because Kysely runs one query at a time on this
 * connection and the service never streams from SQLite (an iterating statement would be busy).
 */
function withStatementCache(
  database: SqliteDatabase.Database,
  onClose: () => void,
): SqliteDialectConfig['database'] {
  const statements = new LRUCache<string, SqliteDatabase.Statement>({
    maxSize: 8 * 1024 * 1024,
    // The SQL text plus the compiled program, which is a few kilobytes for a typical query.
    sizeCalculation: (_statement, sql) => 4096 + 2 * sql.length,
  });
  return {
    close: () => {
      onClose();
      database.close();
    },
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = database.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

/**
 * Switches a database file to WAL once. When another process is switching the same new file at
 * that moment, SQLite answers SQLITE_BUSY without waiting (to avoid a deadlock), so retry briefly.
 */
function useWriteAheadLog(database: SqliteDatabase.Database): void {
  for (let attempt = 1; ; attempt += 1) {
    try {
      if (database.pragma('journal_mode', { simple: true }) === 'wal') return;
      database.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      const busy = (error as { code?: unknown }).code === 'SQLITE_BUSY';
      if (!busy || attempt === 50) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
}

export function createSqliteAdapter(filePath: string): DialectAdapter {
  if (filePath !== ':memory:') mkdirSync(path.dirname(filePath), { recursive: true });
  const database = new SqliteDatabase(filePath, { timeout: 5000 });
  useWriteAheadLog(database);
  database.pragma('foreign_keys = ON');
  database.pragma('synchronous = NORMAL');
  // vec_distance_cosine and friends, for knowledge-base vector search (sqlite-knowledge.ts).
  sqliteVec.load(database);
  // Knowledge-base searches scan a knowledge base's vectors, far more pages than the 2 MB page
  // cache holds; read through a memory map, they are not copied in per query (halves the scan).
  database.pragma('mmap_size = 268435456');
  // Checkpoints happen in a thread of their own (sqlite-checkpointer.ts), not in a commit.
  let stopCheckpointer = () => undefined as void;
  if (filePath !== ':memory:') {
    database.pragma('wal_autocheckpoint = 0');
    // A log checkpointed whole shrinks to this when next written, so its size says when the
    // checkpointing thread is needed again.
    database.pragma(`journal_size_limit = ${checkpointThresholdBytes / 4}`);
    const checkpointer = startCheckpointer(filePath);
    stopCheckpointer = () => checkpointer.stop();
  }
  const db = new Kysely<DatabaseSchema>({
    dialect: new ImmediateTransactionSqliteDialect({
      database: withStatementCache(database, stopCheckpointer),
    }),
  });
  return {
    kind: 'sqlite',
    columnTypes: { timestamp: 'text', json: 'text', boolean: 'integer', real: 'real' },
    db,
    description: `sqlite:${filePath}`,
    isUniqueViolation(error) {
      const code = (error as { code?: unknown } | null)?.code;
      return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
    },
  };
}
