// Storage suites, run once per dialect: migrations, repositories and the database's own guarantees.
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { KeyHasher } from '../src/modules/accounts/key-hasher.js';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { migrateToLatest, openStorage, type Storage } from '../src/storage/database.js';
import { migrationProvider } from '../src/storage/migrations/index.js';
import { AccountsRepository } from '../src/modules/accounts/accounts.repository.js';
import { ApiKeysRepository } from '../src/modules/accounts/api-keys.repository.js';
import type { ApiKeyRecord } from '../src/modules/accounts/api-key.js';
import { newId, newTimeOrderedId } from '../src/ids.js';
import { noUsage } from '../src/models/metering.js';
import {
  UsageRecordsRepository,
  type UsageRecord,
} from '../src/modules/usage/usage-records.repository.js';
import { allDialects, type TestDatabase } from './support/dialects.js';
import type { DatabaseConfig } from '../src/config/config.js';

const execFileAsync = promisify(execFile);
const childScript = fileURLToPath(new URL('./support/migrate-child.ts', import.meta.url));

function databaseConfig(url: string): DatabaseConfig {
  return url.startsWith('sqlite:')
    ? { kind: 'sqlite', path: url.slice(7) }
    : { kind: 'postgres', url };
}

describe.each(allDialects)('storage on $name', (dialect) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  async function open(): Promise<{ storage: Storage; database: TestDatabase }> {
    const database = await dialect.create();
    const storage = await openStorage(databaseConfig(database.url));
    cleanups.push(
      () => database.drop(),
      () => storage.close(),
    );
    return { storage, database };
  }

  function keyRecord(accountId: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
    return {
      id: newId('key'),
      accountId,
      name: 'k',
      keyHash: new KeyHasher(null).hash(generateApiKey()),
      displayKey: 'sk-…abcd',
      scopes: ['chat:write', 'models:read'],
      tier: 'free',
      allowedIps: ['10.0.0.0/8', '2001:db8::/32'],
      expiresAt: '2030-01-01T00:00:00.000Z',
      lastUsedAt: null,
      createdAt: new Date().toISOString(),
      revokedAt: null,
      ...overrides,
    };
  }

  it('migrates an empty database, and again without change', async () => {
    const { storage } = await open();
    expect(await migrateToLatest(storage)).toEqual([]);
    await storage.ping();
  });

  it('migrates a database beside another one already migrated (one schema each on PostgreSQL)', async () => {
    const first = await open();
    const second = await open();
    // Each holds its own bookkeeping: a new migration run on one does not touch the other.
    expect(await migrateToLatest(first.storage)).toEqual([]);
    expect(await migrateToLatest(second.storage)).toEqual([]);
    await second.storage.ping();
  });

  it('sees only its own tables when it looks (what the migrator asks before each run)', async () => {
    const first = await open();
    const second = await open();
    await sql`create table only_in_first (id text not null primary key, note text)`.execute(
      first.storage.db,
    );
    const names = async (storage: Storage, internal: boolean) =>
      (await storage.db.introspection.getTables({ withInternalKyselyTables: internal }))
        .map((table) => table.name)
        .sort();
    const own = await names(first.storage, false);
    expect(own).toContain('only_in_first');
    expect(own).toContain('api_keys');
    expect(own).not.toContain('kysely_migration');
    expect(await names(first.storage, true)).toContain('kysely_migration');
    // On PostgreSQL the other schema's tables are not listed (Kysely's own introspector listed
    // every schema's, so each migration run read more with each schema beside it).
    expect(await names(second.storage, false)).not.toContain('only_in_first');
    const table = (await first.storage.db.introspection.getTables()).find(
      (candidate) => candidate.name === 'only_in_first',
    );
    expect(table?.columns.map((column) => [column.name, column.isNullable])).toEqual([
      ['id', false],
      ['note', true],
    ]);
  });

  it('applies each migration once when several instances start together', async () => {
    const database = await dialect.create();
    cleanups.push(() => database.drop());
    // Separate processes, as separate instances of the service are.
    const runs = await Promise.all(
      Array.from({ length: 4 }, () =>
        execFileAsync(process.execPath, ['--import', 'tsx', childScript, database.url]),
      ),
    );
    const applied = runs.flatMap((run) => JSON.parse(run.stdout) as string[]);
    const all = Object.keys(
      await migrationProvider({
        timestamp: 'text',
        json: 'text',
        boolean: 'integer',
        real: 'real',
      }).getMigrations(),
    );
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(applied.sort()).toEqual(all.sort());
  });

  it('stores accounts and allows only one owner', async () => {
    const { storage } = await open();
    const accounts = new AccountsRepository(storage.db);
    const owner = {
      id: newId('acct'),
      name: 'Owner',
      kind: 'owner' as const,
      createdAt: new Date().toISOString(),
      tier: null,
    };
    await accounts.insert(owner);
    await accounts.insert({ ...owner, id: newId('acct'), kind: 'member', name: 'Member' });
    expect(await accounts.findOwner()).toEqual(owner);
    const second = accounts.insert({ ...owner, id: newId('acct') });
    await expect(second).rejects.toSatisfy((error: unknown) => storage.isUniqueViolation(error));
    expect((await accounts.list({ limit: 10, offset: 0 })).total).toBe(2);
  });

  it('round-trips key records with JSON, timestamps and nulls exactly', async () => {
    const { storage } = await open();
    const accounts = new AccountsRepository(storage.db);
    const keys = new ApiKeysRepository(storage.db);
    const accountId = newId('acct');
    await accounts.insert({
      id: accountId,
      name: 'A',
      kind: 'owner',
      createdAt: new Date().toISOString(),
    });
    const record = keyRecord(accountId);
    await keys.insert(record);
    expect(await keys.findInAccount(accountId, record.id)).toEqual(record);
    expect(await keys.findCredentialByHash(record.keyHash)).toEqual({
      ...record,
      accountKind: 'owner',
      accountTier: null,
    });
    expect(await keys.findInAccount(newId('acct'), record.id)).toBeUndefined();
  });

  it('lists keys newest first with a total, per account', async () => {
    const { storage } = await open();
    const accounts = new AccountsRepository(storage.db);
    const keys = new ApiKeysRepository(storage.db);
    const [first, second] = [newId('acct'), newId('acct')];
    await accounts.insert({
      id: first,
      name: 'A',
      kind: 'owner',
      createdAt: new Date().toISOString(),
    });
    await accounts.insert({
      id: second,
      name: 'B',
      kind: 'member',
      createdAt: new Date().toISOString(),
    });
    const times = [
      '2026-01-01T00:00:00.000Z',
      '2026-01-02T00:00:00.000Z',
      '2026-01-03T00:00:00.000Z',
    ];
    for (const createdAt of times) await keys.insert(keyRecord(first, { createdAt }));
    await keys.insert(keyRecord(second));
    const page = await keys.listInAccount(first, { limit: 2, offset: 0 });
    expect(page.total).toBe(3);
    expect(page.keys.map((key) => key.createdAt)).toEqual([times[2], times[1]]);
  });

  it('keeps the first revocation time and scopes revocation to the account', async () => {
    const { storage } = await open();
    const accounts = new AccountsRepository(storage.db);
    const keys = new ApiKeysRepository(storage.db);
    const accountId = newId('acct');
    await accounts.insert({
      id: accountId,
      name: 'A',
      kind: 'owner',
      createdAt: new Date().toISOString(),
    });
    const record = keyRecord(accountId);
    await keys.insert(record);
    expect(await keys.revoke(newId('acct'), record.id, '2026-02-01T00:00:00.000Z')).toBeUndefined();
    expect((await keys.revoke(accountId, record.id, '2026-02-01T00:00:00.000Z'))?.revokedAt).toBe(
      '2026-02-01T00:00:00.000Z',
    );
    expect((await keys.revoke(accountId, record.id, '2026-03-01T00:00:00.000Z'))?.revokedAt).toBe(
      '2026-02-01T00:00:00.000Z',
    );
  });

  it('refuses a key for an account that does not exist (foreign keys are on)', async () => {
    const { storage } = await open();
    await expect(
      new ApiKeysRepository(storage.db).insert(keyRecord(newId('acct'))),
    ).rejects.toThrow();
  });

  it('refuses two keys with the same hash', async () => {
    const { storage } = await open();
    const accounts = new AccountsRepository(storage.db);
    const keys = new ApiKeysRepository(storage.db);
    const accountId = newId('acct');
    await accounts.insert({
      id: accountId,
      name: 'A',
      kind: 'owner',
      createdAt: new Date().toISOString(),
    });
    const record = keyRecord(accountId);
    await keys.insert(record);
    await expect(keys.insert({ ...record, id: newId('key') })).rejects.toSatisfy((error: unknown) =>
      storage.isUniqueViolation(error),
    );
  });

  it('writes a batch of usage records all or none, whichever of its statements fails', async () => {
    const { storage } = await open();
    const records = new UsageRecordsRepository(storage.db, storage.kind);
    const createdAt = new Date().toISOString();
    const record = (index: number): UsageRecord => ({
      id: newTimeOrderedId('use'),
      accountId: 'acct_batch',
      apiKeyId: null,
      endUser: null,
      route: 'POST /v1/chat/completions',
      model: 'm',
      provider: 'openai-compatible',
      deployment: null,
      executionId: null,
      usage: { ...noUsage, inputTokens: index, outputTokens: 1 },
      status: 'ok',
      errorCode: null,
      latencyMs: 1,
      cacheHit: false,
      costMicros: null,
      createdAt,
    });
    const first = record(0);
    await records.insert([first]);
    // 300 rows are written in statements of 128, 128, 32, 8 and 4: the repeated id is in the
    // second, after a whole statement and part of this one went in.
    const batch = Array.from({ length: 300 }, (_, index) => record(index + 1));
    batch[200] = { ...batch[200]!, id: first.id };
    await expect(records.insert(batch)).rejects.toSatisfy((error: unknown) =>
      storage.isUniqueViolation(error),
    );
    expect(await records.countOf('acct_batch')).toBe(1);
    batch[200] = record(201);
    await records.insert(batch);
    expect(await records.countOf('acct_batch')).toBe(301);
  });

  it('answers ping while open and fails it once closed', async () => {
    const { storage } = await open();
    await storage.ping();
    await storage.close();
    await expect(storage.ping(500)).rejects.toThrow();
    await expect(sql`select 1`.execute(storage.db)).rejects.toThrow();
  });
});
