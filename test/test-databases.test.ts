// The databases the suites run on are what the service's migrations make. A PostgreSQL app's
// schema is replayed from a dump of one migrated schema (test/support/dialects.ts); this holds the
// replay to a schema migrated afresh, and shows that a machine without pg_dump migrates instead.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openStorage } from '../src/storage/database.js';
import { allDialects } from './support/dialects.js';
import { runModuleScript } from './support/process.js';

const postgres = allDialects.find((dialect) => dialect.name === 'postgres');

/** Tables, columns, indexes, constraints and applied migrations of the URL's schema, as text. */
async function describeSchema(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const schema = (await client.query<{ s: string }>('select current_schema() as s')).rows[0]!.s;
    const rows = async (query: string) =>
      (await client.query<Record<string, unknown>>(query, [schema])).rows.map((row) =>
        JSON.stringify(row).replaceAll(schema, 'SCHEMA'),
      );
    return [
      ...(await rows(
        `select table_name, column_name, data_type, is_nullable, column_default
           from information_schema.columns where table_schema = $1
          order by table_name, column_name`,
      )),
      ...(await rows(
        'select indexname, indexdef from pg_indexes where schemaname = $1 order by indexname',
      )),
      ...(await rows(
        `select conrelid::regclass::text as on_table, conname, pg_get_constraintdef(c.oid) as def
           from pg_constraint c join pg_namespace n on n.oid = c.connamespace
          where n.nspname = $1 order by on_table, conname`,
      )),
      ...(
        await client.query<{ name: string }>('select name from kysely_migration order by name')
      ).rows.map((row) => row.name),
    ];
  } finally {
    await client.end();
  }
}

describe.skipIf(postgres === undefined)('the PostgreSQL test databases', () => {
  it('replays a schema identical to one the migrations make', async () => {
    const replayed = await postgres!.create({ migrated: true });
    const migrated = await postgres!.create();
    try {
      const storage = await openStorage({ kind: 'postgres', url: migrated.url });
      await storage.close();
      const expected = await describeSchema(migrated.url);
      expect(expected.length).toBeGreaterThan(100);
      expect(await describeSchema(replayed.url)).toEqual(expected);
    } finally {
      await replayed.drop();
      await migrated.drop();
    }
  });

  it('migrates each schema itself where pg_dump is not on the PATH', async () => {
    // An empty directory as the whole PATH: node is started by its full path, pg_dump not found.
    const emptyPath = mkdtempSync(path.join(tmpdir(), 'no-pg-dump-'));
    const script = `
      const { allDialects } = await import('./test/support/dialects.ts');
      const { openStorage } = await import('./src/storage/database.ts');
      const postgres = allDialects.find((dialect) => dialect.name === 'postgres');
      const pg = (await import('pg')).default;
      const database = await postgres.create({ migrated: true });
      const count = async (query) => {
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        const { rows } = await client.query(query);
        await client.end();
        return rows[0].n;
      };
      const tablesQuery =
        "select count(*)::int as n from information_schema.tables where table_schema = current_schema()";
      console.log('tables before:', await count(tablesQuery));
      const storage = await openStorage({ kind: 'postgres', url: database.url });
      await storage.close();
      console.log('migrations:', await count('select count(*)::int as n from kysely_migration'));`;
    try {
      const result = await runModuleScript(script, { ...process.env, PATH: emptyPath });
      expect(result.code, result.stderr).toBe(0);
      // An empty schema, not a replayed one; the app's own start migrated it.
      expect(result.stdout).toMatch(/tables before: 0\b/);
      expect(result.stdout).toMatch(/migrations: [1-9]\d*/);
    } finally {
      rmSync(emptyPath, { recursive: true, force: true });
    }
  });
});
