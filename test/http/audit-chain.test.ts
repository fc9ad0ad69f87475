// The audit log's hash chains on both databases: `npm run audit -- verify` (its source, run as a
// process against the test's database) passes an intact log and names the first broken record
// when a row is edited in the database, a middle row deleted, or the end of a chain cut off; a
// record rewritten with a fresh hash breaks the link of the next one; appends from two service
// instances over one database at once make one gapless chain; and retention deletes old records
// without breaking what is left.
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditModule, type AuditLog } from '../../src/modules/audit/module.js';
import { recordHash } from '../../src/modules/audit/audit-record.js';
import { recordOf as storedRecord } from '../../src/modules/audit/audit-log.js';
import { allRecords, runAuditCli } from '../support/audit.js';
import { allDialects } from '../support/dialects.js';
import { createAccount, createKey, startTestApp, type TestApp } from '../support/test-app.js';

const day = 86_400_000;

describe.each(allDialects)('audit chains on $name', (dialect) => {
  let harness: TestApp;
  /** A second instance of the service over the same PostgreSQL database (SQLite has one). */
  let second: TestApp | undefined;

  beforeAll(async () => {
    harness = await startTestApp({ dialect });
    if (dialect.name === 'postgres') {
      second = await startTestApp({
        dialect,
        database: harness.database,
        adminKey: harness.adminKey,
      });
    }
  });
  afterAll(async () => {
    await second?.close();
    await harness?.close();
  });

  const db = () => harness.services.storage.db;

  /** A new account whose chain holds `keys` key creations after its first admin key's. */
  async function chainOf(name: string, keys: number) {
    const account = await createAccount(harness.app, harness.adminKey, name);
    for (let index = 0; index < keys; index += 1) {
      await createKey(harness.app, account.admin_key, {
        name: `key ${index}`,
        scopes: ['chat:write'],
      });
    }
    const records = await db()
      .selectFrom('audit_records')
      .selectAll()
      .where('account_id', '=', account.id)
      .orderBy('seq')
      .execute();
    expect(records.map((row) => row.seq)).toEqual(
      Array.from({ length: keys + 1 }, (_, index) => index + 1),
    );
    return { account, records };
  }

  const verify = (accountId?: string) =>
    harness.services.modules.audit.verify(accountId === undefined ? undefined : [accountId]);

  it('verifies an intact log (exit 0, a summary) and names a row edited in the database (exit 1)', async () => {
    const { account, records } = await chainOf('Edited', 3);
    const intact = await runAuditCli(harness.database.url, ['verify']);
    expect(intact.code, intact.stderr).toBe(0);
    expect(intact.stdout).toMatch(/^OK: \d+ chains, \d+ records intact\./);
    expect(intact.stdout).toContain(account.id);
    const target = records[2]!;
    await db()
      .updateTable('audit_records')
      .set({ changes: target.changes!.replace('key 1', 'key X') })
      .where('id', '=', target.id)
      .execute();
    const edited = await runAuditCli(harness.database.url, ['verify', '--account', account.id]);
    expect(edited.code).toBe(1);
    expect(edited.stdout).toContain(
      `account ${account.id}, record ${target.id} (seq 3): hash_mismatch`,
    );
    // Every field is covered: the client address too.
    await db()
      .updateTable('audit_records')
      .set({ changes: target.changes, ip: '10.9.9.9' })
      .where('id', '=', target.id)
      .execute();
    expect(await verify(account.id)).toMatchObject({
      ok: false,
      broken: { recordId: target.id, reason: 'hash_mismatch' },
    });
    await db()
      .updateTable('audit_records')
      .set({ ip: target.ip })
      .where('id', '=', target.id)
      .execute();
    expect((await verify(account.id)).ok).toBe(true);
  });

  it('names the record after a deleted middle row (a gap in seq)', async () => {
    const { account, records } = await chainOf('Gap', 3);
    await db().deleteFrom('audit_records').where('id', '=', records[1]!.id).execute();
    const result = await runAuditCli(harness.database.url, ['verify', '--json']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { ok: boolean; broken: Record<string, unknown> };
    expect(report).toMatchObject({
      ok: false,
      broken: { accountId: account.id, recordId: records[2]!.id, seq: 3, reason: 'seq_gap' },
    });
    expect(String(report.broken.message)).toContain('seq 2');
  });

  it('names a chain whose last records were deleted, and a rewritten record by the broken link after it', async () => {
    const cut = await chainOf('Cut', 2);
    await db().deleteFrom('audit_records').where('id', '=', cut.records[2]!.id).execute();
    expect(await verify(cut.account.id)).toMatchObject({
      ok: false,
      broken: { accountId: cut.account.id, recordId: null, seq: 3, reason: 'head_mismatch' },
    });
    // Rewritten with a hash of its new content: its own hash checks out, the next link does not.
    const rewritten = await chainOf('Rewritten', 2);
    const row = rewritten.records[1]!;
    const forged = { ...storedRecord(row), action: 'api_key.revoke' };
    await db()
      .updateTable('audit_records')
      .set({ action: forged.action, hash: recordHash(forged) })
      .where('id', '=', row.id)
      .execute();
    expect(await verify(rewritten.account.id)).toMatchObject({
      ok: false,
      broken: { recordId: rewritten.records[2]!.id, seq: 3, reason: 'broken_link' },
    });
  });

  it('makes one gapless chain of concurrent appends (from two instances on PostgreSQL)', async () => {
    const account = await createAccount(harness.app, harness.adminKey, 'Busy');
    const instances = [harness.services.audit, (second ?? harness).services.audit];
    await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        instances[index % 2]!.record({
          accountId: account.id,
          actor: { kind: 'system', keyId: null, sessionId: null, user: null },
          action: 'budget.update',
          target: { type: 'budget', id: `bud_${index}` },
          changes: { before: { limit_usd: index }, after: { limit_usd: index + 1 } },
          ip: null,
        }),
      ),
    );
    const records = await allRecords(harness.app, account.admin_key);
    expect(records.map((record) => record.seq)).toEqual(
      Array.from({ length: 31 }, (_, index) => 31 - index),
    );
    expect(new Set(records.map((record) => record.target.id)).size).toBe(31);
    expect(await verify(account.id)).toMatchObject({
      ok: true,
      chains: [{ accountId: account.id, records: 31, lastSeq: 31 }],
    });
  });

  it('deletes records past retention from the start of each chain, and what is left verifies', async () => {
    // An account whose first records were written ten days ago.
    const accountId = `acct_retained_${dialect.name}`;
    const logger = pino({ level: 'silent' });
    const config = { retentionDays: 5, pruneIntervalMs: 60_000 };
    const storage = harness.services.storage;
    const past = createAuditModule({ storage, config, logger, now: () => Date.now() - 10 * day });
    const entry = (log: Pick<AuditLog, 'record'>, id: string) =>
      log.record({
        accountId,
        actor: { kind: 'system', keyId: null, sessionId: null, user: null },
        action: 'budget.create',
        target: { type: 'budget', id },
        changes: null,
        ip: null,
      });
    for (const id of ['bud_old_1', 'bud_old_2', 'bud_old_3']) await entry(past.log, id);
    await entry(harness.services.audit, 'bud_recent');
    const pruned = await runAuditCli(harness.database.url, ['prune'], {
      AUDIT_RETENTION_DAYS: '5',
    });
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(/^Deleted [1-9]\d* records? older than 5 days\./);
    const left = await allRecords(harness.app, harness.adminKey, `account_id=${accountId}`);
    expect(left.map((record) => [record.seq, record.target.id])).toEqual([[4, 'bud_recent']]);
    const chain = await db()
      .selectFrom('audit_chains')
      .selectAll()
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    expect(chain).toMatchObject({ base_seq: 3, last_seq: 4 });
    expect(left[0]!.prev_hash).toBe(chain.base_hash);
    expect(await verify(accountId)).toMatchObject({
      ok: true,
      chains: [{ records: 1, firstSeq: 4, lastSeq: 4 }],
    });
    // Pruning again deletes nothing; appending goes on from the head.
    expect(await past.log.prune(5)).toBe(0);
    await entry(harness.services.audit, 'bud_later');
    expect(await verify(accountId)).toMatchObject({
      ok: true,
      chains: [{ records: 2, lastSeq: 5 }],
    });
    // The first record left, deleted, still shows against the chain's base.
    await db().deleteFrom('audit_records').where('id', '=', left[0]!.id).execute();
    expect(await verify(accountId)).toMatchObject({
      ok: false,
      broken: { seq: 5, reason: 'seq_gap' },
    });
    await past.close();
  });

  it('keeps each record’s text exactly as hashed (no normalisation by the database)', async () => {
    const account = await createAccount(harness.app, harness.adminKey, 'Exact');
    const written = await harness.services.audit.record({
      accountId: account.id,
      actor: { kind: 'user', keyId: null, sessionId: null, user: 'ada@example.com' },
      action: 'agent.update',
      target: { type: 'agent', id: 'agent_x' },
      changes: { before: { z: 1, a: { y: [1, 'é'], b: null } }, after: { z: 2, a: {} } },
      ip: '::1',
    });
    const row = await db()
      .selectFrom('audit_records')
      .selectAll()
      .where('id', '=', written.id)
      .executeTakeFirstOrThrow();
    expect(storedRecord(row)).toEqual(written);
    expect(recordHash(storedRecord(row))).toBe(row.hash);
    expect(row.changes).toBe(
      '{"after":{"a":{},"z":2},"before":{"a":{"b":null,"y":[1,"é"]},"z":1}}',
    );
    const count = await sql<{
      n: number | string;
    }>`select count(*) as n from audit_records`.execute(db());
    expect(Number(count.rows[0]!.n)).toBeGreaterThan(0);
  });
});
