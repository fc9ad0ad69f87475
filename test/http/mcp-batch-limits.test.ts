// JSON-RPC batches on POST /mcp against the rate limits, over real HTTP on every dialect with both
// rate-limit stores: every message of a batch counts as a request of the key and of its account
// before any of them runs, the answer's headers count the whole batch, a batch larger than what is
// left is the contract's 429 with no agent run (the fake model upstream sees no call), and
// concurrent batches never run more messages than the quota holds.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects, redisTestUrl } from '../support/dialects.js';
import { redisReachable } from '../support/redis.js';
import { bearer, createAccount, createKey } from '../support/test-app.js';

const withRedis = await redisReachable('MCP batch rate limits');

const overrides = {
  rate_limits: {
    default_tier: 'roomy',
    tiers: {
      roomy: { per_minute: 100_000, per_day: 1_000_000 },
      small: { per_minute: 10, per_day: 1000 },
      team: { per_minute: 100, per_day: 1000, account_per_minute: 12, account_per_day: 1000 },
    },
  },
};

const stores = [{ store: 'memory', env: {} as Record<string, string> }];
if (withRedis) stores.push({ store: 'redis', env: { REDIS_URL: redisTestUrl } });

const cases = allDialects.flatMap((dialect) =>
  stores.map((store) => ({ ...store, dialect, name: dialect.name })),
);

interface JsonRpcAnswer {
  id: number;
  result?: { content?: Array<{ text: string }>; isError?: boolean };
  error?: unknown;
}

interface RateLimitError {
  error: { code: string; limit: number; window: string; limit_scope: string; message: string };
}

/** `count` tools/call messages of the agent tool, ids from `firstId`. */
function toolCalls(count: number, firstId = 1): object[] {
  return Array.from({ length: count }, (_, index) => ({
    jsonrpc: '2.0',
    id: firstId + index,
    method: 'tools/call',
    params: { name: 'Counter', arguments: { query: `Message ${firstId + index}.` } },
  }));
}

const toolsList = { jsonrpc: '2.0', id: 1000, method: 'tools/list' };

describe.each(cases)('MCP batches against the rate limits on $name ($store store)', (testCase) => {
  let harness: ChatHarness;
  let origin: string;
  /** A tenant with room to spare, whose exposed agent the small keys call. */
  let tenant: { id: string; admin_key: string };

  const post = (key: string, body: unknown) =>
    fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: {
        ...bearer(key),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(body),
    });

  const modelCalls = () => harness.upstream.requests.length;

  async function exposeAgent(adminKey: string): Promise<void> {
    const response = await harness.app.inject({
      method: 'POST',
      url: '/v1/agents',
      headers: bearer(adminKey),
      payload: {
        name: 'Counter',
        agent_type: 'GenerationAgent',
        configuration: {},
        expose_as_tool: true,
      },
    });
    expect(response.statusCode, response.body).toBe(201);
  }

  /** A fresh key of 10 requests a minute (its own counters) on the roomy tenant. */
  const smallKey = async () => (await smallKeyWithId()).key;
  const smallKeyWithId = () =>
    createKey(harness.app, tenant.admin_key, {
      scopes: ['agents:read', 'agents:write'],
      tier: 'small',
    });

  beforeAll(async () => {
    harness = await startChatHarness({
      dialect: testCase.dialect,
      env: testCase.env,
      overrides,
      services: { rateLimitPrefix: `test-mcp-batch-${randomBytes(6).toString('hex')}` },
    });
    await harness.app.listen({ host: '127.0.0.1', port: 0 });
    const address = harness.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    origin = `http://127.0.0.1:${address.port}`;
    tenant = await createAccount(harness.app, harness.adminKey, 'Batch tenant', 'roomy');
    await exposeAgent(tenant.admin_key);
  });
  afterAll(() => harness.close());
  beforeEach(() => {
    harness.upstream.reset();
  });

  it('counts every message of a batch within the quota, notifications included', async () => {
    const key = await smallKey();
    const batch = [
      ...toolCalls(4),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 99, method: 'ping' },
    ];
    const response = await post(key, batch);
    expect(response.status).toBe(200);
    const answers = (await response.json()) as JsonRpcAnswer[];
    expect(answers.map((answer) => answer.id).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 99]);
    for (const answer of answers.filter((entry) => entry.id !== 99)) {
      expect(answer.result?.isError, JSON.stringify(answer)).toBeFalsy();
    }
    expect(modelCalls()).toBe(4);
    // Six messages, six requests: the answer's headers count them all.
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('4');
    expect(response.headers.get('ratelimit')).toMatch(/^"minute";r=4;t=\d+, "day";r=994;t=\d+, /);
    const next = await post(key, toolsList);
    expect(next.status).toBe(200);
    expect(next.headers.get('x-ratelimit-remaining-requests')).toBe('3');
  });

  it('refuses a batch larger than what is left with 429, running none of it', async () => {
    const { key, id } = await smallKeyWithId();
    expect((await post(key, toolsList)).status).toBe(200);
    // Nine left; ten messages do not fit.
    const refused = await post(key, toolCalls(10));
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as RateLimitError;
    expect(body.error).toMatchObject({
      code: 'rate_limit_exceeded',
      limit: 10,
      window: 'minute',
      limit_scope: 'key',
    });
    expect(body.error.message).toContain('A batch of 10 JSON-RPC messages counts as 10 requests.');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The refused request counts as one; its other nine messages were given back.
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('8');
    expect(modelCalls()).toBe(0);
    const runs = await harness.services.storage.db
      .selectFrom('executions')
      .select(({ fn }) => fn.countAll<number>().as('count'))
      .where('api_key_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(Number(runs.count)).toBe(0);
    // A batch larger than the whole window says so.
    const oversized = await post(key, toolCalls(11));
    expect(oversized.status).toBe(429);
    expect(((await oversized.json()) as RateLimitError).error.message).toContain(
      'more than the limit: send smaller batches',
    );
    expect(modelCalls()).toBe(0);
    // What is left is still there to spend, to the last request: 3 counted, 7 messages fit.
    const fits = await post(key, toolCalls(7));
    expect(fits.status).toBe(200);
    expect(fits.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(modelCalls()).toBe(7);
    expect((await post(key, toolsList)).status).toBe(429);
  });

  it('refuses a batch of more than 50 messages before counting any of it', async () => {
    const key = await smallKey();
    const response = await post(key, toolCalls(51));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: {
        code: 'invalid_parameter',
        message: 'The request body must be valid: must NOT have more than 50 items.',
      },
    });
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('9');
    expect(modelCalls()).toBe(0);
  });

  it("counts a batch's messages against the account's ceiling too", async () => {
    // Twelve a minute for the account, a hundred for its key: only the account can refuse.
    const team = await createAccount(harness.app, harness.adminKey, 'Team tenant', 'team');
    await exposeAgent(team.admin_key);
    const served = await post(team.admin_key, toolCalls(8));
    expect(served.status).toBe(200);
    expect(served.headers.get('ratelimit')).toMatch(
      /^"minute";r=91;t=\d+, "day";r=991;t=\d+, "account-minute";r=3;t=\d+, "account-day";r=991;t=\d+$/,
    );
    expect(modelCalls()).toBe(8);
    const refused = await post(team.admin_key, toolCalls(4));
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as RateLimitError;
    expect(body.error).toMatchObject({ limit: 12, window: 'minute', limit_scope: 'account' });
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(modelCalls()).toBe(8);
    // The refused request stays counted once, in the key's windows as in the account's.
    const next = await post(team.admin_key, toolsList);
    expect(next.status).toBe(200);
    expect(next.headers.get('ratelimit')).toMatch(
      /^"minute";r=89;t=\d+, "day";r=989;t=\d+, "account-minute";r=1;t=\d+, "account-day";r=989;t=\d+$/,
    );
  });

  it('never runs more messages of concurrent batches than the quota holds', async () => {
    const key = await smallKey();
    const responses = await Promise.all(
      Array.from({ length: 5 }, (_, index) => post(key, toolCalls(4, index * 10))),
    );
    const served = responses.filter((response) => response.status === 200).length;
    const refused = responses.filter((response) => response.status === 429).length;
    expect(served + refused).toBe(5);
    // Twenty messages sent, ten allowed: at most two batches of four run, and the first batch
    // counted finds room (the five requests and no other batch before it: 5 + 3 of 10).
    expect(served).toBeGreaterThanOrEqual(1);
    expect(4 * served).toBeLessThanOrEqual(10);
    expect(modelCalls()).toBe(4 * served);
    // Every request stays counted once, served or refused, and a served batch four times.
    const counted = 4 * served + refused;
    const next = await post(key, toolsList);
    if (counted >= 10) {
      expect(next.status).toBe(429);
    } else {
      expect(next.status).toBe(200);
      expect(next.headers.get('x-ratelimit-remaining-requests')).toBe(String(10 - counted - 1));
    }
  });
});
