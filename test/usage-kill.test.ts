// What a kill -9 costs the usage ledger, with the service run as users run it (a child process):
// clients keep calls answered (each answer's arrival noted), the instance is killed with SIGKILL
// mid-traffic, and the records in the database are counted against the calls answered. Records
// wait in memory at most `usage.flush_interval_ms` (250 ms) before they are written, so the only
// calls that may be missing are those answered in the last moments before the kill. Each call
// names itself (OpenAI's `user`), so the test knows which were lost: it fails unless they are the
// last ones answered (a client's worth of slack for answers and records crossing), and reports
// how long before the kill the earliest of them was answered — a measurement, not a bound.
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

/** The end users of the usage records in the database (each call's own name), by its own client. */
async function recordedUsers(database: TestDatabase, dialect: DialectUnderTest): Promise<string[]> {
  const query = 'select end_user from usage_records';
  if (dialect.name === 'sqlite') {
    const file = database.url.slice('sqlite:'.length);
    const db = new Database(file, { readonly: true });
    try {
      return (db.prepare(query).all() as Array<{ end_user: string }>).map((row) => row.end_user);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const result = await client.query<{ end_user: string }>(query);
    return result.rows.map((row) => row.end_user);
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
      const answered: Array<{ user: string; at: number }> = [];
      let sent = 0;
      let stop = false;
      const client = async () => {
        while (!stop) {
          const user = `call-${(sent += 1)}`;
          try {
            const response = await fetch(url, {
              method: 'POST',
              headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
              body: JSON.stringify({ messages: [{ role: 'user', content: 'count me' }], user }),
            });
            await response.text();
            if (response.status === 200) answered.push({ user, at: performance.now() });
          } catch {
            return; // The instance is gone.
          }
        }
      };
      const clients = Array.from({ length: 4 }, client);
      // Traffic for a while: several flushes have happened, and one is surely pending.
      while (answered.length < 300) await new Promise((resolve) => setTimeout(resolve, 20));
      await first.stop('SIGKILL');
      const killedAt = performance.now();
      stop = true;
      await Promise.all(clients);
      const before = answered.filter((call) => call.at <= killedAt);

      const users = await recordedUsers(database, dialect);
      const recorded = new Set(users);
      // Every record is one call, once.
      expect(recorded.size).toBe(users.length);
      const lostAt = before.flatMap((call, index) => (recorded.has(call.user) ? [] : [index]));
      const earliestLostMs = lostAt.length === 0 ? 0 : killedAt - before[lostAt[0]!]!.at;
      console.log(
        `${dialect.name}: ${before.length} calls answered before the kill, ${users.length} recorded, ${lostAt.length} lost` +
          (lostAt.length > 0
            ? `, the earliest answered ${earliestLostMs.toFixed(0)} ms before the kill`
            : ''),
      );
      // The records are written in the order the calls end, so only the last answered calls can be
      // missing: each lost one is among the last (lost + one per client, for answers and records
      // crossing on their way).
      const tail = before.length - lostAt.length - clients.length;
      expect(lostAt.filter((index) => index < tail)).toEqual([]);
      // A call whose answer was on its way when the process died may be recorded without having
      // been answered: at most one per client.
      expect(users.length).toBeLessThanOrEqual(before.length + clients.length);

      // Nothing is written twice or left half-written: a new instance starts and counts the same.
      const second = await startService(env);
      instances.push(second);
      expect(await recordedUsers(database, dialect)).toHaveLength(users.length);
    },
  );
});
