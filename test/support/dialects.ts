// The databases every storage suite runs against: SQLite always, PostgreSQL whenever one answers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import pg from 'pg';

export const postgresAdminUrl =
  process.env.TEST_POSTGRES_URL ?? `postgres://${userInfo().username}@127.0.0.1:5432/test`;
export const redisTestUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export interface DialectUnderTest {
  name: 'sqlite' | 'postgres';
  create(): Promise<TestDatabase>;
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

const sqlite: DialectUnderTest = {
  name: 'sqlite',
  create() {
    const directory = mkdtempSync(path.join(tmpdir(), 'platform-test-'));
    return Promise.resolve({
      url: `sqlite:${path.join(directory, 'platform.db')}`,
      drop: () => {
        rmSync(directory, { recursive: true, force: true });
        return Promise.resolve();
      },
    });
  },
};

/** Each PostgreSQL test database is a fresh schema, selected through the connection's search_path. */
const postgres: DialectUnderTest = {
  name: 'postgres',
  async create() {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const url = new URL(postgresAdminUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    return {
      url: url.toString(),
      async drop() {
        const cleaner = new pg.Client({ connectionString: postgresAdminUrl });
        await cleaner.connect();
        await cleaner.query(`drop schema if exists ${schema} cascade`);
        await cleaner.end();
      },
    };
  },
};

let cached: Promise<DialectUnderTest[]> | undefined;

/** SQLite, plus PostgreSQL when reachable; a skipped dialect is printed, never silent. */
export function dialectsUnderTest(): Promise<DialectUnderTest[]> {
  cached ??= postgresReachable().then((reachable) => {
    if (!reachable) {
      process.stdout.write(
        `\n[dialects] PostgreSQL at ${postgresAdminUrl} is not reachable: PostgreSQL suites are SKIPPED (set TEST_POSTGRES_URL).\n`,
      );
      return [sqlite];
    }
    return [sqlite, postgres];
  });
  return cached;
}

export const allDialects = await dialectsUnderTest();
