import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteAdapter } from './sqlite.js';

describe('SQLite checkpoints', () => {
  let directory: string | undefined;
  afterEach(() => {
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  it('happen in the checkpointing thread, never in a commit on the event loop', async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'checkpoint-'));
    const file = path.join(directory, 'test.db');
    const adapter = createSqliteAdapter(file);
    const { db } = adapter;
    const pragma = await sql<{
      wal_autocheckpoint: number;
    }>`pragma wal_autocheckpoint`.execute(db);
    // The service's own connection never checkpoints as part of a commit.
    expect(pragma.rows[0]!.wal_autocheckpoint).toBe(0);
    await sql`create table blobs (body text)`.execute(db);
    const before = statSync(file).size;
    // 8 MiB through the log, in commits of 256 KiB.
    const body = 'x'.repeat(256 * 1024);
    for (let index = 0; index < 32; index += 1) {
      await sql`insert into blobs (body) values (${body})`.execute(db);
    }
    // Only a checkpoint copies pages into the database file; the thread does it soon after.
    while (statSync(file).size < before + 4 * 1024 * 1024) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(statSync(file).size).toBeGreaterThan(before + 4 * 1024 * 1024);
    await db.destroy();
  });
});
