// GET /v1/conversations?all_users=true: every conversation of the account, whatever its user (the
// dashboard finds conversations made through the API with it); user_id stays required otherwise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { bearer, createAccount, startTestApp, type TestApp } from '../support/test-app.js';

interface EntryJson {
  id: string;
  title: string;
  status: string;
  user_id: string | null;
  updated_at: string;
}

interface ListJson {
  conversations: EntryJson[];
  total: number;
  limit: number;
  offset: number;
}

describe.each(allDialects)('listing the conversations of every user on $name', (dialect) => {
  let harness: TestApp;
  let otherAdmin: string;
  const ids: Record<string, string> = {};

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, key?: string) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(key ?? harness.adminKey),
      ...(payload === undefined ? {} : { payload }),
    });
  const list = async (query: string, key?: string) => {
    const response = await call('GET', `/v1/conversations?${query}`, undefined, key);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<ListJson>();
  };

  beforeAll(async () => {
    harness = await startTestApp({ dialect });
    // Created one after the other: newest last.
    for (const [title, userId] of [
      ['of alice', 'alice'],
      ['of nobody', null],
      ['of bob', 'bob'],
      ['archived, of alice', 'alice'],
    ] as const) {
      const created = await call(
        'POST',
        '/v1/conversations',
        userId === null ? { title } : { title, user_id: userId },
      );
      expect(created.statusCode).toBe(201);
      ids[title] = created.json<{ id: string }>().id;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await call('PATCH', `/v1/conversations/${ids['archived, of alice']!}`, { status: 'archived' });
    otherAdmin = (await createAccount(harness.app, harness.adminKey, 'Other')).admin_key;
    await call('POST', '/v1/conversations', { title: 'elsewhere', user_id: 'alice' }, otherAdmin);
  });
  afterAll(async () => {
    await harness.close();
  });

  it("lists every user's conversations of the account, each with its user_id", async () => {
    const page = await list('all_users=true');
    expect(page).toMatchObject({ total: 3, limit: 20, offset: 0 });
    expect(page.conversations.map((entry) => [entry.title, entry.user_id])).toEqual([
      ['of bob', 'bob'],
      ['of nobody', null],
      ['of alice', 'alice'],
    ]);
    const all = await list('all_users=true&status=all&order=asc');
    expect(all.conversations.map((entry) => entry.title)).toEqual([
      'of alice',
      'of nobody',
      'of bob',
      'archived, of alice',
    ]);
    expect((await list('all_users=true&status=archived')).conversations).toHaveLength(1);
    const second = await list('all_users=true&status=all&limit=2&offset=2');
    expect(second.total).toBe(4);
    expect(second.conversations.map((entry) => entry.title)).toEqual(['of nobody', 'of alice']);
  });

  it("keeps to the key's account", async () => {
    const other = await list('all_users=true', otherAdmin);
    expect(other.conversations.map((entry) => entry.title)).toEqual(['elsewhere']);
  });

  it('one user, as before: user_id', async () => {
    const alice = await list('user_id=alice&status=all');
    expect(alice.conversations.map((entry) => [entry.title, entry.user_id])).toEqual([
      ['archived, of alice', 'alice'],
      ['of alice', 'alice'],
    ]);
  });

  it.each([
    ['', 400, 'missing_parameter', 'user_id'],
    ['all_users=false', 400, 'missing_parameter', 'user_id'],
    ['all_users=true&user_id=alice', 400, 'invalid_parameter', 'all_users'],
    ['all_users=maybe', 400, 'invalid_parameter', 'all_users'],
  ])('?%s answers %i %s naming %s', async (query, status, code, param) => {
    const response = await call('GET', `/v1/conversations?${query}`);
    expect(response.statusCode).toBe(status);
    expect(response.json()).toMatchObject({
      error: { code, param, type: 'invalid_request_error' },
    });
  });
});
