// The databases every storage suite runs against: SQLite always, PostgreSQL whenever one answers
// (and always under CI, where a PostgreSQL that does not answer fails the run).
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import SqliteDatabase from 'better-sqlite3';
import { openStorage } from '../../src/storage/database.js';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import pg from 'pg';
import { runCommand } from './process.js';
import { serviceMissing } from './required-services.js';

export const postgresAdminUrl =
  process.env.TEST_POSTGRES_URL ?? `postgres://${userInfo().username}@127.0.0.1:5432/test`;
export const redisTestUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export interface DialectUnderTest {
  name: 'sqlite' | 'postgres';
  /**
   * A new empty database. `migrated`: with the migrations already applied, where that is cheaper
   * than applying them (SQLite: a copy of a file migrated once per process; PostgreSQL: a schema
   * migrated once per process, replayed from its dump).
   */
  create(options?: { migrated?: boolean }): Promise<TestDatabase>;
}

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({
    connectionString: postgresAdminUrl,
    connectionTimeoutMillis: 2000,
  });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

let sqliteTemplate: Promise<string> | undefined;

/**
 * A SQLite file with every migration applied, made once per process with the service's own
 * migration run and copied for each app that asks (applying them afresh was about a tenth of an
 * app's start). Its log is folded into the file first, so the copy holds everything.
 */
function migratedSqliteTemplate(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'platform-template-'));
    process.once('exit', () => rmSync(directory, { recursive: true, force: true }));
    const file = path.join(directory, 'template.db');
    const storage = await openStorage({ kind: 'sqlite', path: file });
    await storage.close();
    const database = new SqliteDatabase(file);
    database.pragma('wal_checkpoint(TRUNCATE)');
    database.close();
    return file;
  })();
  return sqliteTemplate;
}

const sqlite: DialectUnderTest = {
  name: 'sqlite',
  async create(options) {
    const directory = mkdtempSync(path.join(tmpdir(), 'platform-test-'));
    const file = path.join(directory, 'platform.db');
    if (options?.migrated === true) copyFileSync(await migratedSqliteTemplate(), file);
    return {
      url: `sqlite:${file}`,
      drop: () => {
        rmSync(directory, { recursive: true, force: true });
        return Promise.resolve();
      },
    };
  },
};

let postgresTemplate: Promise<string | undefined> | undefined;

/** The placeholder for the schema's name in the template's SQL. */
const schemaPlaceholder = '__platform_test_schema__';

/**
 * The SQL of a schema with every migration applied, made once per process: the service's own
 * migration run in a schema of the run's database, dumped by pg_dump (tables, indexes, constraints
 * and the migrator's bookkeeping rows, as INSERTs) with the schema's name left as a placeholder.
 * Replaying it as one query costs the server about a third of the CPU the migration run does (75
 * against 203 ms of the machine's CPU per schema, 2026-11-29), and the suite makes over a hundred.
 * Undefined, and each app migrates its own schema as before, where that cannot be done: no
 * database of the run's own (the template would outlive it), or no pg_dump of the server's version.
 */
function migratedPostgresTemplate(runUrl: string | undefined): Promise<string | undefined> {
  postgresTemplate ??= (async () => {
    if (runUrl === undefined) return undefined;
    const schema = `t_template_${randomBytes(6).toString('hex')}`;
    const url = await createPostgresSchema(runUrl, schema);
    const storage = await openStorage({ kind: 'postgres', url });
    await storage.close();
    const dumped = await runCommand('pg_dump', [
      '--schema',
      schema,
      '--inserts',
      '--no-owner',
      '--no-privileges',
      '--dbname',
      runUrl,
    ]);
    if (dumped.code !== 0) return undefined;
    return (
      dumped.stdout
        .split('\n')
        // psql's own commands (`\restrict`): not SQL.
        .filter((line) => !line.startsWith('\\'))
        .join('\n')
        .replaceAll(schema, schemaPlaceholder)
    );
  })();
  return postgresTemplate;
}

/** Creates the schema, or replays the template's SQL under its name; the URL selecting it. */
async function createPostgresSchema(
  databaseUrl: string,
  schema: string,
  template?: string,
): Promise<string> {
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(
      template === undefined
        ? `create schema ${schema}`
        : template.replaceAll(schemaPlaceholder, schema),
    );
  } finally {
    await admin.end();
  }
  const url = new URL(databaseUrl);
  // A commit need not wait for the disk: a test's data outlives no crash of the server.
  url.searchParams.set('options', `-c search_path=${schema} -c synchronous_commit=off`);
  return url.toString();
}

/**
 * Each PostgreSQL test database is a fresh schema, selected through the connection's search_path,
 * inside the run's own database when global-setup.ts made one (then the schema stays until the
 * run's database is dropped, so no schema disappears under another file's migrations).
 */
const postgres: DialectUnderTest = {
  name: 'postgres',
  async create(options) {
    const runUrl = process.env.TEST_POSTGRES_RUN_URL;
    const databaseUrl = runUrl ?? postgresAdminUrl;
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const template =
      options?.migrated === true ? await migratedPostgresTemplate(runUrl) : undefined;
    // A pg_dump newer than the server can write settings the server does not know: the replay
    // then fails whole (one query, one transaction), and the app migrates its schema itself.
    const url = await createPostgresSchema(databaseUrl, schema, template).catch(() => {
      postgresTemplate = Promise.resolve(undefined);
      return createPostgresSchema(databaseUrl, schema);
    });
    return {
      url,
      async drop() {
        if (runUrl !== undefined) return;
        const cleaner = new pg.Client({ connectionString: postgresAdminUrl });
        await cleaner.connect();
        await cleaner.query(`drop schema if exists ${schema} cascade`);
        await cleaner.end();
      },
    };
  },
};

let cached: Promise<DialectUnderTest[]> | undefined;

/** SQLite, plus PostgreSQL when reachable; a skipped dialect is printed, and under CI it throws. */
export function dialectsUnderTest(): Promise<DialectUnderTest[]> {
  cached ??= postgresReachable().then((reachable) => {
    if (reachable) return [sqlite, postgres];
    serviceMissing(
      'PostgreSQL',
      postgresAdminUrl,
      'every PostgreSQL suite',
      'Start it (database `test`, trust auth) or set TEST_POSTGRES_URL.',
    );
    return [sqlite];
  });
  return cached;
}

export const allDialects = await dialectsUnderTest();
