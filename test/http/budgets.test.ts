// Budgets over real HTTP on both databases (no Redis: the database holds the windows), driven by
// the official OpenAI client over a fake upstream that reports usage: the CRUD of /v1/budgets and
// its validation, another account's budget answering 404, a call refused with budget_exceeded
// (and Retry-After) before the upstream is called, the soft limit's X-Budget-Warning and metric,
// an unpriced model under a budget, and a budget made mid-period starting from the ledger's spend.
import type { AddressInfo } from 'node:net';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  callCostMicros,
  createBudget,
  getBudget,
  ledgerSpend,
  maxTokens,
  pricedModel,
  reported,
  untilReleased,
} from '../support/budgets.js';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer, createAccount, createKey, metricLine } from '../support/test-app.js';

interface ErrorJson {
  error: { type: string; code: string; param: string | null };
}

describe.each(allDialects)('budgets on $name', (dialect) => {
  let harness: ChatHarness;
  let baseUrl: string;

  beforeAll(async () => {
    harness = await startChatHarness({
      dialect,
      extraModels: (upstreamUrl) => [pricedModel(upstreamUrl)],
      upstream: { defaultBehaviour: { kind: 'reply', content: 'Within budget.', usage: reported } },
    });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await harness?.close();
  });
  beforeEach(() => harness.upstream.reset());

  /** A new account, its admin key, and a chat key with its client. */
  async function tenant(name: string) {
    const account = await createAccount(harness.app, harness.adminKey, name);
    const key = await createKey(harness.app, account.admin_key, { scopes: ['chat:write'] });
    const client = new OpenAI({ apiKey: key.key, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
    return { accountId: account.id, admin: account.admin_key, key, client };
  }

  const ask = (client: OpenAI, extra: Record<string, unknown> = {}) =>
    client.chat.completions.create({
      model: 'priced-chat',
      messages: [{ role: 'user', content: 'What does this cost?' }],
      max_tokens: maxTokens,
      ...extra,
    });

  const call = (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    key: string,
    payload?: object,
  ) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(key),
      ...(payload === undefined ? {} : { payload }),
    });

  it('creates, lists, reads, changes and deletes a budget, with its period in money of 6 decimals', async () => {
    const { admin } = await tenant('crud');
    const created = await createBudget(harness.app, admin, {
      scope: 'account',
      limit_usd: 1.5,
      soft_limit_usd: 1,
      period: 'month',
    });
    const now = new Date();
    expect(created).toMatchObject({
      object: 'budget',
      scope: 'account',
      key_id: null,
      user_id: null,
      period: 'month',
      limit_usd: 1.5,
      soft_limit_usd: 1,
      spent_usd: 0,
      reserved_usd: 0,
      resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
    });
    expect(created.id).toMatch(/^bud_[A-Za-z0-9]{22}$/);
    const listed = await call('GET', '/v1/budgets', admin);
    expect(listed.json()).toMatchObject({ total: 1, budgets: [{ id: created.id }] });
    const changed = await call('PATCH', `/v1/budgets/${created.id}`, admin, {
      limit_usd: 2.25,
      soft_limit_usd: null,
      period: 'total',
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({
      limit_usd: 2.25,
      soft_limit_usd: null,
      period: 'total',
      resets_at: null,
    });
    const deleted = await call('DELETE', `/v1/budgets/${created.id}`, admin);
    expect(deleted.json()).toEqual({ id: created.id, object: 'budget', deleted: true });
    const gone = await call('GET', `/v1/budgets/${created.id}`, admin);
    expect(gone.statusCode).toBe(404);
    expect(gone.json<ErrorJson>().error.code).toBe('not_found');
  });

  it('refuses what does not make a budget, each with the field at fault', async () => {
    const { admin } = await tenant('validation');
    const other = await tenant('validation-other');
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ scope: 'key', limit_usd: 1, period: 'day' }, 'missing_parameter', 'key_id'],
      [
        { scope: 'key', key_id: other.key.id, limit_usd: 1, period: 'day' },
        'invalid_parameter',
        'key_id',
      ],
      [{ scope: 'user', limit_usd: 1, period: 'day' }, 'missing_parameter', 'user_id'],
      [
        { scope: 'account', user_id: 'u', limit_usd: 1, period: 'day' },
        'invalid_parameter',
        'user_id',
      ],
      [
        { scope: 'user', user_id: 'u'.repeat(257), limit_usd: 1, period: 'day' },
        'invalid_parameter',
        'user_id',
      ],
      [{ scope: 'account', limit_usd: -1, period: 'day' }, 'invalid_parameter', 'limit_usd'],
      [{ scope: 'account', limit_usd: 1e12, period: 'day' }, 'invalid_parameter', 'limit_usd'],
      [{ scope: 'account', limit_usd: '5', period: 'day' }, 'invalid_parameter', 'limit_usd'],
      [
        { scope: 'account', limit_usd: 1, soft_limit_usd: 2, period: 'day' },
        'invalid_parameter',
        'soft_limit_usd',
      ],
      [{ scope: 'account', limit_usd: 1, period: 'year' }, 'invalid_parameter', 'period'],
      [{ scope: 'team', limit_usd: 1, period: 'day' }, 'invalid_parameter', 'scope'],
      [{ scope: 'account', limit_usd: 1, period: 'day', extra: 1 }, 'invalid_parameter', 'extra'],
      [{ scope: 'account', period: 'day' }, 'missing_parameter', 'limit_usd'],
    ];
    for (const [payload, code, param] of cases) {
      const response = await call('POST', '/v1/budgets', admin, payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json<ErrorJson>().error, JSON.stringify(payload)).toMatchObject({
        type: 'invalid_request_error',
        code,
        param,
      });
    }
    const listed = await call('GET', '/v1/budgets', admin);
    expect(listed.json<{ total: number }>().total).toBe(0);
    const budget = await createBudget(harness.app, admin, {
      scope: 'account',
      limit_usd: 1,
      period: 'day',
    });
    const emptyPatch = await call('PATCH', `/v1/budgets/${budget.id}`, admin, {});
    expect(emptyPatch.statusCode).toBe(400);
    const scopePatch = await call('PATCH', `/v1/budgets/${budget.id}`, admin, { scope: 'user' });
    expect(scopePatch.statusCode).toBe(400);
  });

  it("answers 404 for another account's budget and 403 to a key without admin", async () => {
    const owner = await tenant('owner');
    const stranger = await tenant('stranger');
    const budget = await createBudget(harness.app, owner.admin, {
      scope: 'key',
      key_id: owner.key.id,
      limit_usd: 3,
      period: 'week',
    });
    for (const method of ['GET', 'DELETE'] as const) {
      const response = await call(method, `/v1/budgets/${budget.id}`, stranger.admin);
      expect(response.statusCode).toBe(404);
      expect(response.json<ErrorJson>().error.code).toBe('not_found');
    }
    const patched = await call('PATCH', `/v1/budgets/${budget.id}`, stranger.admin, {
      limit_usd: 100,
    });
    expect(patched.statusCode).toBe(404);
    expect((await call('GET', '/v1/budgets', stranger.admin)).json<{ total: number }>().total).toBe(
      0,
    );
    const refused = await call('GET', '/v1/budgets', owner.key.key);
    expect(refused.statusCode).toBe(403);
    expect(refused.json<ErrorJson>().error.code).toBe('insufficient_permissions');
    expect((await getBudget(harness.app, owner.admin, budget.id)).limit_usd).toBe(3);
  });

  it('refuses a call that does not fit before the upstream is called, with Retry-After until the reset', async () => {
    const { admin, key, client, accountId } = await tenant('refusal');
    // Room for one worst case (about 50,000 micro-dollars), not for a second after the first's cost.
    const budget = await createBudget(harness.app, admin, {
      scope: 'key',
      key_id: key.id,
      limit_usd: 0.06,
      period: 'day',
    });
    await ask(client);
    const afterFirst = await untilReleased(harness.app, admin, budget.id);
    expect(afterFirst.spent_usd).toBe(callCostMicros / 1e6);
    const upstreamCalls = harness.upstream.requests.length;
    const before = Date.now();
    const failure = await ask(client).catch((error: unknown) => error);
    const after = Date.now();
    expect(failure).toBeInstanceOf(APIError);
    const apiError = failure as APIError;
    expect(apiError.status).toBe(429);
    expect(apiError.error).toMatchObject({
      type: 'insufficient_quota',
      code: 'budget_exceeded',
      budget_id: budget.id,
      scope: 'key',
      limit_usd: 0.06,
      spent_usd: callCostMicros / 1e6,
      resets_at: budget.resets_at,
    });
    expect(harness.upstream.requests.length).toBe(upstreamCalls);
    const retryAfter = Number(apiError.headers?.get('retry-after'));
    const resetsAt = Date.parse(budget.resets_at!);
    expect(retryAfter).toBeGreaterThanOrEqual(Math.floor((resetsAt - after) / 1000));
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((resetsAt - before) / 1000));
    // The refused call is in no window and no ledger record.
    expect((await getBudget(harness.app, admin, budget.id)).spent_usd).toBe(callCostMicros / 1e6);
    expect(await ledgerSpend(harness.services, accountId)).toEqual({
      micros: callCostMicros,
      records: 1,
    });
  });

  it("holds an end user's budget for that user alone, and a budget in total without Retry-After", async () => {
    const { admin, client } = await tenant('end-users');
    const budget = await createBudget(harness.app, admin, {
      scope: 'user',
      user_id: 'alice',
      limit_usd: 0.01,
      period: 'total',
    });
    const failure = (await ask(client, { user: 'alice' }).catch(
      (error: unknown) => error,
    )) as APIError;
    expect(failure.status).toBe(429);
    expect(failure.error).toMatchObject({
      code: 'budget_exceeded',
      budget_id: budget.id,
      scope: 'user',
      resets_at: null,
    });
    expect(failure.headers?.get('retry-after')).toBeNull();
    expect(harness.upstream.requests).toHaveLength(0);
    const answer = await ask(client, { user: 'bob' });
    expect(answer.choices[0]?.message.content).toBe('Within budget.');
  });

  it('says X-Budget-Warning past the soft limit, streamed or not, and counts it', async () => {
    const { admin, client } = await tenant('soft-limit');
    const budget = await createBudget(harness.app, admin, {
      scope: 'account',
      limit_usd: 10,
      soft_limit_usd: 0.000001,
      period: 'month',
    });
    const { response } = await ask(client).withResponse();
    expect(response.headers.get('x-budget-warning')).toContain(budget.id);
    expect(response.headers.get('x-budget-warning')).toContain('scope=account');
    const streamed = await client.chat.completions
      .create({
        model: 'priced-chat',
        messages: [{ role: 'user', content: 'And streamed?' }],
        max_tokens: maxTokens,
        stream: true,
      })
      .withResponse();
    for await (const chunk of streamed.data) expect(chunk.object).toBe('chat.completion.chunk');
    expect(streamed.response.headers.get('x-budget-warning')).toContain(budget.id);
    const line = await metricLine(harness, (text) =>
      text.startsWith('platform_budget_soft_limit_warnings_total{scope="account"}'),
    );
    expect(Number(line?.split(' ')[1])).toBeGreaterThanOrEqual(2);
    const quiet = await tenant('no-soft-limit');
    await createBudget(harness.app, quiet.admin, {
      scope: 'account',
      limit_usd: 10,
      period: 'month',
    });
    const plain = await ask(quiet.client).withResponse();
    expect(plain.response.headers.get('x-budget-warning')).toBeNull();
  });

  it('refuses a model without a price under a budget (403 unpriced_model), and not without one', async () => {
    const { admin, client } = await tenant('unpriced');
    const free = await ask(client, { model: 'fake-chat' });
    expect(free.choices).toHaveLength(1);
    await createBudget(harness.app, admin, { scope: 'account', limit_usd: 10, period: 'month' });
    const calls = harness.upstream.requests.length;
    const failure = (await ask(client, { model: 'fake-chat' }).catch(
      (error: unknown) => error,
    )) as APIError;
    expect(failure.status).toBe(403);
    expect(failure.error).toMatchObject({
      type: 'permission_error',
      code: 'unpriced_model',
      param: 'model',
    });
    expect(harness.upstream.requests.length).toBe(calls);
  });

  it("starts a budget made mid-period from the ledger's spend of the period", async () => {
    const { admin, key, client, accountId } = await tenant('seeded');
    await ask(client);
    await ask(client);
    expect((await ledgerSpend(harness.services, accountId)).micros).toBe(2 * callCostMicros);
    const budget = await createBudget(harness.app, admin, {
      scope: 'key',
      key_id: key.id,
      limit_usd: 1,
      period: 'day',
    });
    expect(budget.spent_usd).toBe((2 * callCostMicros) / 1e6);
    await ask(client);
    expect((await untilReleased(harness.app, admin, budget.id)).spent_usd).toBe(
      (3 * callCostMicros) / 1e6,
    );
  });
});
