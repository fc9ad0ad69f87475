// Reading the usage ledger over real HTTP on both databases, after calls made with the official
// `openai` client over a fake upstream that reports usage with cached and reasoning tokens:
// GET /v1/usage's cost to the micro-dollar, its groups (group_by, comma-separated or repeated) and
// filters, stateless calls counted, unpriced calls apart; the CSV export parsed back (quoting,
// formula-safe cells, the same rows whatever the page size) and its scope; the Prometheus counters
// of cost and tokens; and one account never seeing another's calls.
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageCsv } from '../../src/modules/usage/usage-csv.js';
import { UsageExportRepository } from '../../src/modules/usage/usage-export.repository.js';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer, createAccount, createKey } from '../support/test-app.js';

/** Every upstream answer: 1,000 in (400 cached), 200 out (50 reasoning). */
const reported = {
  kind: 'reply' as const,
  content: 'Counted.',
  usage: { prompt_tokens: 1000, completion_tokens: 200 },
  usageDetails: { cached_tokens: 400, reasoning_tokens: 50 },
};
/** Micro-dollars of one call: 600 fresh + 400 cached input, 200 output, at each model's prices. */
const chatCost = 600 * 2.5 + 400 * 1.25 + 200 * 10; // priced-chat: 4,000
const miniCost = 600 * 0.15 + 400 * 0.075 + 200 * 0.6; // priced-mini: 240

interface Figures {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_input_tokens: number;
  cost_usd: number;
  unpriced_requests: number;
}
interface Group {
  key_id?: string | null;
  key_name?: string | null;
  model?: string | null;
  user?: string | null;
  route?: string | null;
  deployment?: string | null;
  totals: Figures;
  points: (Figures & { start: string })[];
}
interface UsageJson {
  totals: Figures;
  group_by: string[];
  groups: Group[];
  groups_truncated: boolean;
  recent_activity: { id: string; model: string | null; total_tokens: number; calls: number }[];
}

/** RFC 4180: fields split on commas outside quotes, quotes doubled inside them, CRLF rows. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index]!;
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"';
        index += 1;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\r' && text[index + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      index += 1;
    } else field += char;
  }
  expect(field).toBe('');
  return rows;
}

/** CSV rows as objects under the header's names. */
function records(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  return rows.map((row) => Object.fromEntries(header!.map((name, index) => [name, row[index]!])));
}

describe.each(allDialects)('reading usage on $name', (dialect) => {
  let harness: ChatHarness;
  let first: { id: string; key: string };
  let second: { id: string; key: string };
  let reader: { id: string; key: string };
  let other: { id: string; admin_key: string };
  let baseUrl: string;

  const client = (key: string) =>
    new OpenAI({ apiKey: key, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
  const chat = (key: string, model: string, user?: string) =>
    client(key).chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'How much?' }],
      ...(user === undefined ? {} : { user }),
    });

  beforeAll(async () => {
    harness = await startChatHarness({
      dialect,
      upstream: { defaultBehaviour: reported },
      extraModels: (upstreamUrl) =>
        [
          [
            'priced-chat',
            { input_per_mtok: 2.5, cached_input_per_mtok: 1.25, output_per_mtok: 10 },
          ],
          [
            'priced-mini',
            { input_per_mtok: 0.15, cached_input_per_mtok: 0.075, output_per_mtok: 0.6 },
          ],
        ].map(([name, pricing]) => ({
          name,
          provider: 'openai-compatible',
          base_url: upstreamUrl,
          model: 'gpt-4o',
          api_key_env: 'FAKE_UPSTREAM_KEY',
          max_tokens: 256,
          context_length: 8192,
          max_retries: 0,
          pricing,
        })),
    });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
    const scopes = ['chat:write', 'models:read'];
    first = await createKey(harness.app, harness.adminKey, { name: 'first', scopes });
    second = await createKey(harness.app, harness.adminKey, { name: 'second', scopes });
    reader = await createKey(harness.app, harness.adminKey, {
      name: 'reader',
      scopes: ['usage:read'],
    });
    other = await createAccount(harness.app, harness.adminKey, 'other');

    // Stateless calls (no user_id, no store): the bulk of a gateway's traffic.
    await chat(first.key, 'priced-chat', 'alice');
    await chat(first.key, 'priced-chat', 'alice');
    await client(first.key).responses.create({
      model: 'priced-mini',
      input: 'Hi',
      store: false,
      user: 'bob',
    });
    await chat(second.key, 'priced-mini', 'alice');
    await chat(second.key, 'fake-chat'); // no price: its cost is unknown
    // The other account: a user name a spreadsheet would run, with a comma and quotes.
    await chat(other.admin_key, 'priced-chat', '=HYPERLINK("x"),1');
    // A replayed history: one call, whatever the earlier turns the request carries.
    await client(other.admin_key).chat.completions.create({
      model: 'priced-mini',
      messages: [
        { role: 'user', content: 'Earlier question' },
        { role: 'assistant', content: 'Earlier answer' },
        { role: 'user', content: 'And now?' },
      ],
      user_id: 'carl',
    } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming);
  });
  afterAll(async () => {
    await harness?.close();
  });

  const get = (url: string, key = harness.adminKey) =>
    harness.app.inject({ method: 'GET', url, headers: bearer(key) });
  const usage = async (query = '', key = harness.adminKey) => {
    const response = await get(`/v1/usage${query}`, key);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<UsageJson>();
  };
  const usd = (micros: number) => Math.round(micros) / 1_000_000;

  it('counts every call, stateless ones included, with its cost to the micro-dollar and unpriced calls apart', async () => {
    const body = await usage();
    expect(body.totals).toMatchObject({
      requests: 5,
      prompt_tokens: 5000,
      completion_tokens: 1000,
      cached_input_tokens: 2000,
      cost_usd: usd(2 * chatCost + 2 * miniCost),
      unpriced_requests: 1,
    });
    expect(body.group_by).toEqual([]);
    expect(body.groups).toEqual([]);
  });

  it('groups by key, model, user, route and deployment, each group with its cost and points', async () => {
    const byKey = await usage('?group_by=key');
    expect(byKey.group_by).toEqual(['key']);
    expect(
      byKey.groups.map((group) => [group.key_name, group.totals.requests, group.totals.cost_usd]),
    ).toEqual([
      ['first', 3, usd(2 * chatCost + miniCost)],
      ['second', 2, usd(miniCost)],
    ]);
    expect(byKey.groups[1]?.totals.unpriced_requests).toBe(1);

    const byModel = await usage('?group_by=model');
    expect(
      byModel.groups.map((group) => [group.model, group.totals.requests, group.totals.cost_usd]),
    ).toEqual([
      ['priced-chat', 2, usd(2 * chatCost)],
      ['priced-mini', 2, usd(2 * miniCost)],
      ['fake-chat', 1, 0],
    ]);

    const byUser = await usage('?group_by=user');
    expect(byUser.groups.map((group) => [group.user, group.totals.requests])).toEqual([
      ['alice', 3],
      ['bob', 1],
      [null, 1],
    ]);
    const byRoute = await usage('?group_by=route');
    expect(byRoute.groups.map((group) => [group.route, group.totals.requests])).toEqual([
      ['POST /v1/chat/completions', 4],
      ['POST /v1/responses', 1],
    ]);
    const byDeployment = await usage('?group_by=deployment');
    expect(byDeployment.groups.map((group) => [group.deployment, group.totals.requests])).toEqual([
      [null, 5],
    ]);
    // Each group's points add up to its totals.
    for (const group of [...byKey.groups, ...byModel.groups, ...byUser.groups]) {
      const pointsCost = group.points.reduce((sum, point) => sum + point.cost_usd * 1e6, 0);
      expect(Math.round(pointsCost)).toBe(Math.round(group.totals.cost_usd * 1e6));
      expect(group.points.reduce((sum, point) => sum + point.requests, 0)).toBe(
        group.totals.requests,
      );
    }
  });

  it('groups by several dimensions at once, comma-separated or repeated, and filters by end user', async () => {
    const comma = await usage('?group_by=model,key');
    const repeated = await usage('?group_by=key&group_by=model');
    expect(comma.groups).toEqual(repeated.groups);
    expect(comma.group_by).toEqual(['key', 'model']);
    // Costliest first; the two of equal cost in either order.
    const combinations = comma.groups.map((group) => [
      group.key_name,
      group.model,
      group.totals.requests,
    ]);
    expect(combinations[0]).toEqual(['first', 'priced-chat', 2]);
    expect(combinations.slice(1, 3)).toEqual(
      expect.arrayContaining([
        ['first', 'priced-mini', 1],
        ['second', 'priced-mini', 1],
      ]),
    );
    expect(combinations[3]).toEqual(['second', 'fake-chat', 1]);
    const alice = await usage('?user_id=alice&group_by=model');
    expect(alice.totals.requests).toBe(3);
    expect(alice.totals.cost_usd).toBe(usd(2 * chatCost + miniCost));
    expect(alice.groups.map((group) => group.model)).toEqual(['priced-chat', 'priced-mini']);
  });

  it('refuses an unknown group_by naming the parameter', async () => {
    for (const query of ['?group_by=tenant', '?group_by=key,', '?group_by=key&group_by=colour']) {
      const response = await get(`/v1/usage${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(
        response.json<{ error: { code: string; param: string } }>().error,
        query,
      ).toMatchObject({ code: 'invalid_parameter', param: 'group_by' });
    }
  });

  it('exports the records as CSV, parsed back to the same calls and costs', async () => {
    const response = await get('/v1/usage/export', reader.key);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/csv/);
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="usage-/);
    const rows = records(response.body);
    expect(rows).toHaveLength(5);
    expect(rows.map((row) => row.api_key_id).sort()).toEqual(
      [first.id, first.id, first.id, second.id, second.id].sort(),
    );
    const costs = rows.map((row) => row.cost_usd).sort();
    expect(costs).toEqual(['', '0.000240', '0.000240', '0.004000', '0.004000']);
    expect(rows.find((row) => row.model === 'priced-chat')).toMatchObject({
      end_user: 'alice',
      route: 'POST /v1/chat/completions',
      input_tokens: '1000',
      cached_input_tokens: '400',
      output_tokens: '200',
      reasoning_tokens: '50',
      status: 'ok',
      cache_hit: 'false',
    });
    // Oldest first.
    const times = rows.map((row) => row.created_at);
    expect([...times].sort()).toEqual(times);

    const filtered = records((await get(`/v1/usage/export?key_id=${second.id}`)).body);
    expect(filtered.map((row) => row.model).sort()).toEqual(['fake-chat', 'priced-mini']);
  });

  it('reads the export a page at a time: the same text whatever the page size', async () => {
    const whole = (await get('/v1/usage/export')).body;
    const { from, to } = { from: '2000-01-01T00:00:00.000Z', to: '2100-01-01T00:00:00.000Z' };
    const account = (await get('/v1/auth/me')).json<{ account: { id: string } }>().account.id;
    const repository = new UsageExportRepository(harness.services.storage.db);
    for (const size of [1, 2, 3]) {
      let text = '';
      for await (const chunk of usageCsv(repository, { accountId: account, from, to }, size)) {
        text += chunk;
      }
      expect(text, `pages of ${size}`).toBe(whole);
    }
  });

  it('makes cells safe for spreadsheets, and shows each account only its own records', async () => {
    const theirs = (await get('/v1/usage/export', other.admin_key)).body;
    const rows = records(theirs);
    expect(rows).toHaveLength(2);
    expect(rows.map((row) => row.end_user).sort()).toEqual(['\'=HYPERLINK("x"),1', 'carl']);
    // Quoted, quotes doubled, the formula defused.
    expect(theirs).toContain(`"'=HYPERLINK(""x""),1"`);
    expect(theirs).not.toContain(first.id);

    const theirUsage = await usage('', other.admin_key);
    expect(theirUsage.totals.requests).toBe(2);
    expect(theirUsage.totals.cost_usd).toBe(usd(chatCost + miniCost));
    // The replayed history is no call: two calls, each with its model and tokens.
    expect(theirUsage.recent_activity).toHaveLength(2);
    for (const item of theirUsage.recent_activity) {
      expect(item.model).not.toBeNull();
      expect(item.total_tokens).toBe(1200);
      expect(item.calls).toBe(1);
    }
    const mine = await usage('?group_by=user');
    expect(mine.groups.map((group) => group.user)).not.toContain('carl');
    // Another account's key filter matches nothing here.
    const foreign = await usage(`?key_id=${first.id}`, other.admin_key);
    expect(foreign.totals.requests).toBe(0);
    expect(
      records((await get(`/v1/usage/export?key_id=${first.id}`, other.admin_key)).body),
    ).toEqual([]);
  });

  it('lets usage:read keys read, and refuses keys without it', async () => {
    expect((await get('/v1/usage', reader.key)).statusCode).toBe(200);
    for (const url of ['/v1/usage', '/v1/usage/export']) {
      const refused = await get(url, first.key);
      expect(refused.statusCode, url).toBe(403);
      expect(refused.json<{ error: { code: string } }>().error.code).toBe(
        'insufficient_permissions',
      );
    }
    const backwards = await get(
      '/v1/usage/export?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z',
    );
    expect(backwards.statusCode).toBe(400);
    expect(backwards.json<{ error: { param: string } }>().error.param).toBe('from');
  });

  it('counts cost and tokens in Prometheus by account and model', async () => {
    const scrape = await get('/metrics');
    expect(scrape.statusCode).toBe(200);
    const text = scrape.body;
    const account = (await get('/v1/auth/me')).json<{ account: { id: string } }>().account.id;
    const value = (name: string, labels: string) => {
      const line = text
        .split('\n')
        .find((candidate) => candidate.startsWith(`${name}{`) && candidate.includes(labels));
      return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    const ours = `account="${account}",model="priced-chat"`;
    expect(value('platform_usage_cost_usd_total', ours)).toBeCloseTo(usd(2 * chatCost), 9);
    expect(value('platform_usage_tokens_total', `${ours},type="input"`)).toBe(2000);
    expect(value('platform_usage_tokens_total', `${ours},type="cached_input"`)).toBe(800);
    expect(value('platform_usage_tokens_total', `${ours},type="reasoning"`)).toBe(100);
    const theirs = `account="${other.id}",model="priced-chat"`;
    expect(value('platform_usage_cost_usd_total', theirs)).toBeCloseTo(usd(chatCost), 9);
    expect(
      value('platform_usage_unpriced_calls_total', `account="${account}",model="fake-chat"`),
    ).toBe(1);
    expect(value('platform_usage_cost_usd_total', `account="${account}",model="fake-chat"`)).toBe(
      0,
    );
  });
});
