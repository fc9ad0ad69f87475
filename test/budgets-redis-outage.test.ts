// Budgets whose Redis cannot be reached, on both databases: a call under a budget is refused with
// 503 budgets_unavailable before any upstream call (fail closed), unless the operator set
// BUDGETS_FAIL_OPEN, when it goes on unchecked; a call under no budget never needs the store.
// Redis is "down" behind a TCP proxy the test closes; the machine's Redis itself is never touched.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBudget, maxTokens, pricedModel, reported } from './support/budgets.js';
import { upstreamSecret } from './support/chat-harness.js';
import { allDialects, redisTestUrl } from './support/dialects.js';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.js';
import { redisReachable } from './support/redis.js';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';
import { createAccount, createKey, startTestApp, type TestApp } from './support/test-app.js';

const withRedis = await redisReachable('budgets while Redis is down');

describe.skipIf(!withRedis).each(allDialects)(
  'budgets while Redis is down ($name)',
  { timeout: 60_000 },
  (dialect) => {
    let proxy: TcpProxy;
    let upstream: FakeUpstream;
    const apps: Record<'closed' | 'open', TestApp | undefined> = {
      closed: undefined,
      open: undefined,
    };
    const clients: Record<string, OpenAI> = {};
    const admins: Record<string, string> = {};
    let unbudgeted: OpenAI;

    beforeAll(async () => {
      proxy = await startTcpProxy(new URL(redisTestUrl));
      upstream = await startFakeUpstream({
        requireApiKey: upstreamSecret,
        defaultBehaviour: { kind: 'reply', content: 'Unchecked.', usage: reported },
      });
      for (const mode of ['closed', 'open'] as const) {
        const prefix = `test-budget-outage-${randomBytes(6).toString('hex')}`;
        const app = await startTestApp({
          dialect,
          env: {
            FAKE_UPSTREAM_KEY: upstreamSecret,
            REDIS_URL: proxy.url,
            REDIS_KEY_PREFIX: prefix,
            ...(mode === 'open' ? { BUDGETS_FAIL_OPEN: 'true' } : {}),
          },
          overrides: { default_model: 'priced-chat', models: [pricedModel(upstream.baseUrl)] },
          services: { rateLimitPrefix: `${prefix}-rl` },
        });
        apps[mode] = app;
        await app.app.listen({ port: 0, host: '127.0.0.1' });
        const baseURL = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}/v1`;
        const account = await createAccount(app.app, app.adminKey, `outage-${mode}`);
        const key = await createKey(app.app, account.admin_key, { scopes: ['chat:write'] });
        await createBudget(app.app, account.admin_key, {
          scope: 'account',
          limit_usd: 5,
          period: 'month',
        });
        admins[mode] = account.admin_key;
        clients[mode] = new OpenAI({ apiKey: key.key, baseURL, maxRetries: 0 });
        if (mode === 'closed') {
          const free = await createAccount(app.app, app.adminKey, 'outage-no-budget');
          const freeKey = await createKey(app.app, free.admin_key, { scopes: ['chat:write'] });
          unbudgeted = new OpenAI({ apiKey: freeKey.key, baseURL, maxRetries: 0 });
        }
      }
      await proxy.close();
    });
    afterAll(async () => {
      await proxy?.open().catch(() => undefined);
      for (const app of Object.values(apps)) await app?.close();
      await upstream?.close();
      await proxy?.close();
    });

    const ask = (client: OpenAI) =>
      client.chat.completions.create({
        model: 'priced-chat',
        messages: [{ role: 'user', content: 'Is the store there?' }],
        max_tokens: maxTokens,
      });

    it('refuses a call under a budget with 503 budgets_unavailable, before any upstream call', async () => {
      const calls = upstream.requests.length;
      const failure = (await ask(clients.closed!).catch((error: unknown) => error)) as APIError;
      expect(failure).toBeInstanceOf(APIError);
      expect(failure.status).toBe(503);
      expect(failure.error).toMatchObject({ type: 'api_error', code: 'budgets_unavailable' });
      expect(upstream.requests.length).toBe(calls);
    });

    it('lets the call go on when budgets fail open', async () => {
      const calls = upstream.requests.length;
      const answer = await ask(clients.open!);
      expect(answer.choices[0]?.message.content).toBe('Unchecked.');
      expect(upstream.requests.length).toBe(calls + 1);
    });

    it('answers a call under no budget without the store', async () => {
      const answer = await ask(unbudgeted);
      expect(answer.choices[0]?.message.content).toBe('Unchecked.');
    });
  },
);
