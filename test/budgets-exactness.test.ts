// Budgets held exactly across two instances of the service over one PostgreSQL database — with
// one Redis (the windows in Redis, one script per reservation), and without (the windows in the
// database, one transaction per reservation): many concurrent calls of a known cost from both
// instances against a key budget, an end-user budget and an account budget. The settled spend
// (the ledger's records) never passes any limit; every refused call is refused with
// budget_exceeded and Retry-After; a call cancelled mid-stream, and one whose upstream fails
// mid-stream, release their reservation (nothing reserved after, spent = what the ledger recorded).
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/modules/accounts/api-key-format.js';
import {
  callCostMicros,
  createBudget,
  getBudget,
  ledgerSpend,
  maxTokens,
  pricedModel,
  reported,
  untilReleased,
  type BudgetJson,
} from './support/budgets.js';
import { upstreamSecret } from './support/chat-harness.js';
import { allDialects, redisTestUrl, type TestDatabase } from './support/dialects.js';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.js';
import { redisReachable } from './support/redis.js';
import { createAccount, createKey, startTestApp, type TestApp } from './support/test-app.js';

const withRedis = await redisReachable('budgets exactness');
const postgres = allDialects.find((dialect) => dialect.name === 'postgres');
const stores = [
  { store: 'redis', redis: true },
  { store: 'the database', redis: false },
].filter((variant) => withRedis || !variant.redis);

/** A slow stream: one word a chunk, a pause between chunks, long enough to be cut short. */
const longAnswer = Array.from({ length: 60 }, (_, index) => `word${index}`).join(' ');

describe.skipIf(postgres === undefined).each(stores)(
  'budgets on two instances over PostgreSQL, windows in $store',
  { timeout: 120_000 },
  (variant) => {
    let database: TestDatabase;
    let upstream: FakeUpstream;
    let slow: FakeUpstream;
    const instances: TestApp[] = [];
    const urls: string[] = [];
    const adminKey = generateApiKey();

    beforeAll(async () => {
      database = await postgres!.create();
      // Calls overlap: each answer waits a little before it comes.
      upstream = await startFakeUpstream({
        requireApiKey: upstreamSecret,
        latencyMs: 20,
        defaultBehaviour: { kind: 'reply', content: 'Counted.', usage: reported },
      });
      slow = await startFakeUpstream({
        requireApiKey: upstreamSecret,
        chunkDelayMs: 50,
        defaultBehaviour: { kind: 'reply', content: longAnswer, usage: reported },
      });
      const prefix = `test-budgets-${randomBytes(6).toString('hex')}`;
      for (let index = 0; index < 2; index += 1) {
        const instance = await startTestApp({
          dialect: postgres!,
          database,
          adminKey,
          env: {
            FAKE_UPSTREAM_KEY: upstreamSecret,
            ...(variant.redis ? { REDIS_URL: redisTestUrl, REDIS_KEY_PREFIX: prefix } : {}),
          },
          overrides: {
            default_model: 'priced-chat',
            models: [pricedModel(upstream.baseUrl), pricedModel(slow.baseUrl, 'slow-chat')],
            rate_limits: {
              default_tier: 'test',
              tiers: { test: { per_minute: 100_000, per_day: 1_000_000 } },
            },
          },
          services: { rateLimitPrefix: `${prefix}-rl` },
        });
        instances.push(instance);
        await instance.app.listen({ port: 0, host: '127.0.0.1' });
        urls.push(`http://127.0.0.1:${(instance.app.server.address() as AddressInfo).port}/v1`);
      }
    });
    afterAll(async () => {
      for (const instance of instances) await instance.close();
      await upstream?.close();
      await slow?.close();
      await database?.drop();
    });

    const clientOf = (instance: number, key: string) =>
      new OpenAI({ apiKey: key, baseURL: urls[instance], maxRetries: 0 });

    /** Spend as the ledgers of both instances recorded it, once both are written. */
    async function spendOf(accountId: string, subject: { keyId?: string; endUser?: string } = {}) {
      await instances[1]!.services.usageLedger.ledger.flush();
      return ledgerSpend(instances[0]!.services, accountId, subject);
    }

    it('never lets settled spend pass a limit under many concurrent calls from both instances', async () => {
      const [first] = instances;
      const tenant = await createAccount(first!.app, adminKey, `exact-${variant.store}`);
      const keys = [
        await createKey(first!.app, tenant.admin_key, { scopes: ['chat:write'] }),
        await createKey(first!.app, tenant.admin_key, { scopes: ['chat:write'] }),
      ];
      const budgets = {
        account: await createBudget(first!.app, tenant.admin_key, {
          scope: 'account',
          limit_usd: 0.3,
          period: 'month',
        }),
        key: await createBudget(first!.app, tenant.admin_key, {
          scope: 'key',
          key_id: keys[0]!.id,
          limit_usd: 0.16,
          period: 'week',
        }),
        user: await createBudget(first!.app, tenant.admin_key, {
          scope: 'user',
          user_id: 'u1',
          limit_usd: 0.12,
          period: 'day',
        }),
      };
      const clients = [0, 1].map((instance) => keys.map((key) => clientOf(instance, key.key)));
      const plan = Array.from({ length: 60 }, (_, index) => ({
        instance: index % 2,
        key: index % 3 === 2 ? 1 : 0,
        user: index % 4 < 2 ? 'u1' : 'u2',
      }));
      const outcomes = await Promise.all(
        plan.map(async (call) => {
          try {
            await clients[call.instance]![call.key]!.chat.completions.create({
              model: 'priced-chat',
              messages: [{ role: 'user', content: 'How much is this one?' }],
              max_tokens: maxTokens,
              user: call.user,
            });
            return { ...call, ok: true as const };
          } catch (error) {
            return { ...call, ok: false as const, error };
          }
        }),
      );
      const answered = outcomes.filter((outcome) => outcome.ok);
      const refused = outcomes.filter((outcome) => !outcome.ok);
      expect(answered.length).toBeGreaterThan(0);
      expect(refused.length).toBeGreaterThan(0);
      const refusedBy = new Set<string>();
      for (const outcome of refused) {
        const error = outcome.error as APIError;
        expect(error).toBeInstanceOf(APIError);
        expect(error.status).toBe(429);
        expect(error.error).toMatchObject({ type: 'insufficient_quota', code: 'budget_exceeded' });
        expect(Number(error.headers?.get('retry-after'))).toBeGreaterThan(0);
        refusedBy.add((error.error as { scope: string }).scope);
      }
      // The upstream saw exactly the calls answered: a refusal is made before any upstream call.
      expect(upstream.requests).toHaveLength(answered.length);

      const account = await spendOf(tenant.id);
      const key = await spendOf(tenant.id, { keyId: keys[0]!.id });
      const user = await spendOf(tenant.id, { endUser: 'u1' });
      expect(account).toEqual({
        micros: answered.length * callCostMicros,
        records: answered.length,
      });
      expect(account.micros).toBeLessThanOrEqual(300_000);
      expect(key.micros).toBeLessThanOrEqual(160_000);
      expect(user.micros).toBeLessThanOrEqual(120_000);
      expect(key.records).toBe(answered.filter((outcome) => outcome.key === 0).length);
      expect(user.records).toBe(answered.filter((outcome) => outcome.user === 'u1').length);
      // Each budget shows what the ledger has, nothing reserved, on both instances.
      for (const [budget, spend] of [
        [budgets.account, account],
        [budgets.key, key],
        [budgets.user, user],
      ] as Array<[BudgetJson, { micros: number }]>) {
        for (const instance of instances) {
          const read = await untilReleased(instance.app, tenant.admin_key, budget.id);
          expect(read.spent_usd).toBe(spend.micros / 1e6);
        }
      }
      expect(refusedBy.size).toBeGreaterThan(0);
    });

    it('releases the reservation of a call cancelled mid-stream, and of one whose upstream fails mid-stream', async () => {
      const [first, second] = instances;
      const tenant = await createAccount(first!.app, adminKey, `cancel-${variant.store}`);
      const key = await createKey(first!.app, tenant.admin_key, { scopes: ['chat:write'] });
      const budget = await createBudget(first!.app, tenant.admin_key, {
        scope: 'key',
        key_id: key.id,
        limit_usd: 1,
        period: 'month',
      });
      const client = clientOf(1, key.key);
      const controller = new AbortController();
      const stream = await client.chat.completions.create(
        {
          model: 'slow-chat',
          messages: [{ role: 'user', content: 'Tell me a long story.' }],
          max_tokens: 200,
          stream: true,
        },
        { signal: controller.signal },
      );
      let chunks = 0;
      const reading = (async () => {
        for await (const chunk of stream) {
          chunks += chunk.choices.length;
          if (chunks === 3) {
            // Under way: its worst case is held on the budget, read from the other instance.
            expect(
              (await getBudget(first!.app, tenant.admin_key, budget.id)).reserved_usd,
            ).toBeGreaterThan(0);
            controller.abort();
          }
        }
      })();
      // The client's library ends its iteration quietly when its own signal aborts it.
      await reading;
      expect(chunks).toBe(3);
      await slow.settled();
      expect(slow.requests.at(-1)?.aborted).toBe(true);

      slow.enqueue({ kind: 'cut', afterChunks: 4 });
      const cut = await client.chat.completions.create({
        model: 'slow-chat',
        messages: [{ role: 'user', content: 'And another.' }],
        max_tokens: 200,
        stream: true,
      });
      await expect(
        (async () => {
          for await (const chunk of cut) void chunk;
        })(),
      ).rejects.toThrow();

      const released = await untilReleased(second!.app, tenant.admin_key, budget.id);
      const spend = await spendOf(tenant.id, { keyId: key.id });
      expect(spend.records).toBe(2);
      expect(spend.micros).toBeGreaterThan(0);
      expect(released.spent_usd).toBe(spend.micros / 1e6);
      expect((await getBudget(first!.app, tenant.admin_key, budget.id)).spent_usd).toBe(
        spend.micros / 1e6,
      );
      const statuses = await first!.services.storage.db
        .selectFrom('usage_records')
        .select('status')
        .where('api_key_id', '=', key.id)
        .execute();
      expect(statuses.map((row) => row.status).sort()).toEqual(['aborted', 'error']);
    });
  },
);
