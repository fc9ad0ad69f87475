// The database never holds a usable key: after keys are created, no table contains them.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { createAccount, createKey, startTestApp, type TestApp } from '../support/test-app.js';

describe.each(allDialects)('key storage on $name', (dialect) => {
  let harness: TestApp;
  beforeAll(async () => {
    harness = await startTestApp({ dialect, env: { API_KEY_SECRET: 'x'.repeat(40) } });
  });
  afterAll(async () => {
    await harness.close();
  });

  it('stores no plaintext of any key anywhere in the database', async () => {
    const created = await createKey(harness.app, harness.adminKey, { scopes: ['admin'] });
    const account = await createAccount(harness.app, harness.adminKey, 'tenant');
    const secrets = [harness.adminKey, created.key, account.admin_key];
    const { db } = harness.services.storage;
    const dump: string[] = [];
    for (const table of ['accounts', 'api_keys', 'kysely_migration']) {
      const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(
        db,
      );
      dump.push(JSON.stringify(rows.rows));
    }
    const everything = dump.join('\n');
    expect(everything).toContain(created.id); // the dump is real
    for (const secret of secrets) {
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice(3, 30)); // nor a large part of it
    }
    const stored = await db
      .selectFrom('api_keys')
      .select(['key_hash', 'display_key'])
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(stored.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.display_key).toBe(`sk-…${created.key.slice(-4)}`);
  });
});
