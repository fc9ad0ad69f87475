import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import SqliteDatabase from 'better-sqlite3';
import { startCheckpointer } from './sqlite-checkpointer.js';
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

  it('runs its thread only while the log is past the size, and stops it after', async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'checkpoint-'));
    const file = path.join(directory, 'test.db');
    const database = new SqliteDatabase(file);
    database.pragma('journal_mode = WAL');
    database.pragma('wal_autocheckpoint = 0');
    database.pragma('journal_size_limit = 65536');
    database.exec('create table blobs (body text)');
    const checkpointer = startCheckpointer(file, {
      thresholdBytes: 1024 * 1024,
      intervalMs: 20,
      idleStopMs: 100,
    });
    const until = async (condition: () => boolean) => {
      while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    try {
      // A small log: no thread, however many looks.
      database.prepare('insert into blobs (body) values (?)').run('small');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(checkpointer.threadRunning).toBe(false);
      const before = statSync(file).size;
      const insert = database.prepare('insert into blobs (body) values (?)');
      for (let index = 0; index < 8; index += 1) insert.run('x'.repeat(256 * 1024));
      await until(() => checkpointer.threadRunning);
      // The thread copies the log into the database file…
      await until(() => statSync(file).size > before + 1024 * 1024);
      // …and the first write after a checkpoint of the whole log finds it done and shrinks it (a
      // write during a checkpoint still appends), after which the thread stops.
      while (checkpointer.threadRunning) {
        insert.run('after');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(statSync(`${file}-wal`).size).toBeLessThan(1024 * 1024);
    } finally {
      checkpointer.stop();
      database.close();
    }
  });
});
