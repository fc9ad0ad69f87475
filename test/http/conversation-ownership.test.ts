// A conversation's user on every dialect: an operation on one conversation that is given a
// `user_id` other than its user's answers 404 `not_found`, as another account's conversation does,
// and changes nothing; its own user, or no `user_id` at all, reaches it as before; a conversation
// created without a user accepts any. Feedback's `user_id` names who rates, so it is not checked.
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer } from '../support/test-app.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

function expectNotFound(response: LightMyRequestResponse, what: string): void {
  expect({ status: response.statusCode, body: response.json<unknown>() }, what).toEqual({
    status: 404,
    body: {
      error: {
        message: expect.stringContaining('not found') as unknown,
        type: 'not_found_error',
        code: 'not_found',
        param: null,
      },
    },
  });
}

describe.each(allDialects)("a conversation's user on $name", (dialect) => {
  let harness: ChatHarness;

  const call = (method: Method, url: string, payload?: object) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(harness.adminKey),
      ...(payload === undefined ? {} : { payload }),
    });

  /** A conversation of `userId` (or of no user) with one stored turn. */
  async function conversationOf(userId: string | null) {
    const created = await call(
      'POST',
      '/v1/conversations',
      userId === null ? {} : { user_id: userId },
    );
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json<{ id: string }>().id;
    const turn = await call('POST', '/v1/chat', {
      user_id: userId ?? 'anyone',
      conversation_id: id,
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(turn.statusCode, turn.body).toBe(200);
    return { id, messageId: turn.json<{ message_id: string }>().message_id };
  }

  /** Every operation on one conversation that takes `user_id`: in the query, or in the body. */
  const operations = (
    id: string,
    userId: string,
  ): Array<[string, Method, string, object | undefined]> => [
    ['GET the conversation', 'GET', `/v1/conversations/${id}?user_id=${userId}`, undefined],
    [
      'GET its messages',
      'GET',
      `/v1/conversations/${id}/messages?user_id=${userId}&limit=5`,
      undefined,
    ],
    [
      'GET its feedback summary',
      'GET',
      `/v1/conversations/${id}/feedback?user_id=${userId}`,
      undefined,
    ],
    ['PATCH it', 'PATCH', `/v1/conversations/${id}`, { user_id: userId, title: `by ${userId}` }],
    [
      'assign a template',
      'POST',
      `/v1/conversations/${id}/template`,
      { user_id: userId, template_name: 'standard_assistant' },
    ],
    [
      'chat into it',
      'POST',
      '/v1/chat',
      { user_id: userId, conversation_id: id, messages: [{ role: 'user', content: 'hi' }] },
    ],
    ['DELETE it', 'DELETE', `/v1/conversations/${id}?user_id=${userId}`, undefined],
  ];

  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it("answers 404 not_found to another user's every operation, and changes nothing", async () => {
    const { id } = await conversationOf('alice');
    const before = (await call('GET', `/v1/conversations/${id}`)).json<Record<string, unknown>>();
    harness.upstream.reset();
    for (const [what, method, url, body] of operations(id, 'mallory')) {
      expectNotFound(await call(method, url, body), `mallory: ${what}`);
    }
    expect(harness.upstream.requests, 'no model was called for mallory').toHaveLength(0);
    const after = await call('GET', `/v1/conversations/${id}`);
    expect(after.statusCode).toBe(200);
    expect(after.json()).toEqual(before);
    const history = await call('GET', `/v1/conversations/${id}/messages`);
    expect(history.json<{ total: number }>().total).toBe(2);
  });

  it('answers its own user every operation, in the same order, ending with the delete', async () => {
    const { id } = await conversationOf('alice');
    for (const [what, method, url, body] of operations(id, 'alice')) {
      const response = await call(method, url, body);
      expect(response.statusCode, `alice: ${what}: ${response.body}`).toBe(200);
    }
    expectNotFound(await call('GET', `/v1/conversations/${id}`), 'after the delete');
  });

  it('answers without a user_id as before: the account reaches every conversation', async () => {
    const { id } = await conversationOf('alice');
    for (const url of [
      `/v1/conversations/${id}`,
      `/v1/conversations/${id}/messages`,
      `/v1/conversations/${id}/feedback`,
      // The spec's other common parameters in a read's query are accepted and ignored.
      `/v1/conversations/${id}?conversation_id=${id}&model=fake-chat`,
    ]) {
      const response = await call('GET', url);
      expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
    }
    const user = (await call('GET', `/v1/conversations/${id}?user_id=alice`)).json<{
      user_id: string;
    }>();
    expect(user.user_id).toBe('alice');
  });

  it('lets any user_id reach a conversation created without a user', async () => {
    const { id } = await conversationOf(null);
    for (const [what, method, url, body] of operations(id, 'mallory')) {
      const response = await call(method, url, body);
      expect(response.statusCode, `${what}: ${response.body}`).toBe(200);
    }
  });

  it('refuses an empty user_id with 400 naming it', async () => {
    const { id } = await conversationOf('alice');
    const response = await call('GET', `/v1/conversations/${id}?user_id=`);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json<{ error: { param: string } }>().error.param).toBe('user_id');
  });

  it("takes feedback's user_id as the rater: another user may rate alice's answer", async () => {
    const { id, messageId } = await conversationOf('alice');
    const rated = await call('POST', '/v1/feedback', {
      conversation_id: id,
      message_id: messageId,
      feedback_type: 'thumbs_up',
      user_id: 'reviewer',
    });
    expect(rated.statusCode, rated.body).toBe(200);
    const summary = await call('GET', `/v1/conversations/${id}/feedback?user_id=alice`);
    expect(
      summary.json<{ feedback_details: Array<{ user_id: string }> }>().feedback_details,
    ).toEqual([expect.objectContaining({ user_id: 'reviewer' })]);
  });

  it('describes the rule in /openapi.json on each operation', async () => {
    const document = (await call('GET', '/openapi.json')).json<{
      paths: Record<string, Record<string, { description?: string }>>;
    }>();
    const described = [
      ['/v1/conversations/{conversation_id}', 'get'],
      ['/v1/conversations/{conversation_id}', 'patch'],
      ['/v1/conversations/{conversation_id}', 'delete'],
      ['/v1/conversations/{conversation_id}/messages', 'get'],
      ['/v1/conversations/{conversation_id}/template', 'post'],
      ['/v1/conversations/{conversation_id}/feedback', 'get'],
    ] as const;
    for (const [path, method] of described) {
      expect(document.paths[path]?.[method]?.description, `${method} ${path}`).toContain(
        "`user_id` that is not the conversation's user answers 404",
      );
    }
  });
});
