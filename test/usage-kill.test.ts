// What a kill -9 costs the usage ledger, with the service run as users run it (a child process):
// clients keep calls answered (each answer's arrival noted), the instance is killed with SIGKILL
// mid-traffic, and the records in the database are counted against the calls answered. Records
// wait in memory at most `usage.flush_interval_ms` (250 ms) before they are written, so the only
// calls that may be missing are those answered in the last moments before the kill: the test
// reports the loss and how long before the kill the earliest missing answer arrived, and fails
// if a call answered long before the kill (2 s: eight flush intervals) was never recorded.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import { allDialects, type DialectUnderTest, type TestDatabase } from './support/dialects.js';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.js';
import { startService, type RunningService } from './support/process.js';

const upstreamKey = 'sk-usage-kill-upstream';

/** The usage records in the database, by the database's own client. */
async function recordCount(database: TestDatabase, dialect: DialectUnderTest): Promise<number> {
  if (dialect.name === 'sqlite') {
    const file = database.url.slice('sqlite:'.length);
    const db = new Database(file, { readonly: true });
    try {
      return (db.prepare('select count(*) as count from usage_records').get() as { count: number })
        .count;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const result = await client.query<{ count: string }>(
      'select count(*) as count from usage_records',
    );
    return Number(result.rows[0]?.count ?? 0);
  } finally {
    await client.end();
  }
}

describe.each(allDialects)('the usage ledger across a kill -9 on $name', (dialect) => {
  const directory = mkdtempSync(path.join(tmpdir(), 'platform-usage-kill-'));
  const adminKey = generateApiKey();
  let upstream: FakeUpstream;
  let database: TestDatabase;
  let env: Record<string, string>;
  const instances: RunningService[] = [];

  beforeAll(async () => {
    database = await dialect.create();
    upstream = await startFakeUpstream({ requireApiKey: upstreamKey });
    const config = path.join(directory, 'platform.json');
    writeFileSync(
      config,
      JSON.stringify({
        default_model: 'counted',
        models: [
          {
            name: 'counted',
            provider: 'openai-compatible',
            base_url: upstream.baseUrl,
            api_key_env: 'KILL_UPSTREAM_KEY',
            model: 'gpt-4o-mini',
            max_tokens: 32,
            max_retries: 0,
            pricing: { input_per_mtok: 1, output_per_mtok: 2 },
          },
        ],
        rate_limits: { default_tier: 'open', tiers: { open: { per_minute: 1e6, per_day: 1e7 } } },
      }),
    );
    env = {
      DATABASE_URL: database.url,
      PLATFORM_ADMIN_KEY: adminKey,
      KILL_UPSTREAM_KEY: upstreamKey,
      PLATFORM_CONFIG: config,
      MODELS_DIR: path.join(directory, 'models'),
      MODEL_AUTO_PULL: 'false',
    };
  }, 180_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop('SIGKILL')));
    await upstream?.close();
    await database?.drop();
    rmSync(directory, { recursive: true, force: true });
  });

  it(
    'loses only calls answered in the last flush interval before the kill',
    { timeout: 120_000 },
    async () => {
      const first = await startService(env);
      instances.push(first);
      const url = `http://127.0.0.1:${first.port}/v1/chat/completions`;
      const answeredAt: number[] = [];
      let stop = false;
      const client = async () => {
        while (!stop) {
          try {
            const response = await fetch(url, {
              method: 'POST',
              headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
              body: JSON.stringify({ messages: [{ role: 'user', content: 'count me' }] }),
            });
            await response.text();
            if (response.status === 200) answeredAt.push(performance.now());
          } catch {
            return; // The instance is gone.
          }
        }
      };
      const clients = Array.from({ length: 4 }, client);
      // Traffic for a while: several flushes have happened, and one is surely pending.
      while (answeredAt.length < 300) await new Promise((resolve) => setTimeout(resolve, 20));
      await first.stop('SIGKILL');
      const killedAt = performance.now();
      stop = true;
      await Promise.all(clients);
      const answered = answeredAt.filter((at) => at <= killedAt).length;

      const recorded = await recordCount(database, dialect);
      const lost = answered - recorded;
      // The answers arrived in order: the missing ones can only be the last.
      const earliestLostMs = lost <= 0 ? 0 : killedAt - answeredAt[answered - lost]!;
      console.log(
        `${dialect.name}: ${answered} calls answered before the kill, ${recorded} recorded, ${lost} lost` +
          (lost > 0 ? `, all answered within ${earliestLostMs.toFixed(0)} ms of the kill` : ''),
      );
      // A call whose answer was on its way when the process died may be recorded without having
      // been answered: at most one per client.
      expect(recorded).toBeLessThanOrEqual(answered + clients.length);
      expect(earliestLostMs).toBeLessThan(2000);

      // Nothing is written twice or left half-written: a new instance starts and counts the same.
      const second = await startService(env);
      instances.push(second);
      expect(await recordCount(database, dialect)).toBe(recorded);
    },
  );
});
