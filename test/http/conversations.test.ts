// Conversations end to end through the real app, on every dialect: create, read, change, delete and
// list them; the chat history /v1/chat stores; tenant and user isolation; prompt templates and their
// assignment; feedback on messages and the per-conversation feedback summary.
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { bearer, createAccount, createKey } from '../support/test-app.js';

interface ErrorJson {
  error: {
    message: string;
    type: string;
    code: string;
    param: string | null;
    required_scope?: string;
  };
}

interface EntryJson {
  id: string;
  title: string;
  created_at: string;
  updated_at: string;
  message_count: number;
  status: string;
}

interface ConversationJson extends EntryJson {
  description: string;
  user_id: string | null;
  system_prompt: string | null;
  model: string | null;
  template: string | null;
  template_variables: Record<string, string> | null;
  metadata: Record<string, unknown>;
}

interface ListJson {
  conversations: EntryJson[];
  total: number;
  limit: number;
  offset: number;
}

interface UsageJson {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

interface MessageJson {
  id: string;
  role: string;
  content: string;
  created_at: string;
  model: string | null;
  finish_reason: string | null;
  latency_ms: number | null;
  usage: UsageJson | null;
}

interface MessagesJson {
  conversation_id: string;
  messages: MessageJson[];
  total: number;
  limit: number;
  offset: number;
}

interface ChatJson {
  message: string;
  conversation_id: string;
  message_id: string;
  model: string;
  usage: UsageJson;
  finish_reason: string;
}

interface TemplateEntryJson {
  id: string;
  name: string;
  display_name: string;
  description: string;
}

interface TemplateDetailJson extends TemplateEntryJson {
  system_prompt: string;
  variables: string[];
  required_variables: string[];
  variable_details: Array<{ name: string; required: boolean; default: string | null }>;
  example_usage: string;
}

interface FeedbackDetailJson {
  message_id: string;
  feedback_type: string;
  feedback_value: number;
  timestamp: string;
  [field: string]: unknown;
}

interface SummaryJson {
  conversation_id: string;
  total_messages: number;
  messages_with_feedback: number;
  positive_feedback: number;
  negative_feedback: number;
  average_rating: number;
  feedback_details: FeedbackDetailJson[];
}

type UpstreamMessage = { role: string; content: string };

const isoTimestamp = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const conversationId = /^conv_[A-Za-z0-9]{16,}$/;
const messageId = /^msg_[A-Za-z0-9]{16,}$/;
const feedbackId = /^fb_[A-Za-z0-9]{16,}$/;

const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  403: 'permission_error',
  404: 'not_found_error',
};

/** The whole error body: status, type, code and param, nothing left to chance. */
function expectError(
  response: LightMyRequestResponse,
  status: number,
  code: string,
  param: string | null,
  extra: Record<string, unknown> = {},
): void {
  expect({ status: response.statusCode, body: response.json<unknown>() }).toEqual({
    status,
    body: {
      error: { message: expect.any(String), type: errorTypes[status], code, param, ...extra },
    },
  });
}

/**
 * What a template's Mustache text becomes with these values: `{{#v}}…{{/v}}` only when v is set,
 * `{{^v}}…{{/v}}` only when it is not, `{{v}}` replaced verbatim (no HTML escaping).
 */
function renderExpected(text: string, variables: Record<string, string>): string {
  return text
    .replace(
      /\{\{([#^])(\w+)\}\}([\s\S]*?)\{\{\/\2\}\}/g,
      (_match, kind: string, name: string, inner: string) =>
        ((variables[name] ?? '') !== '') === (kind === '#') ? inner : '',
    )
    .replace(/\{\{(\w+)\}\}/g, (_match, name: string) => variables[name] ?? '')
    .trim();
}

describe.each(allDialects)('conversations on $name', (dialect) => {
  // A clock that never returns the same millisecond twice, so that ordering by updated_at is exact.
  let lastTick = 0;
  const now = () => {
    lastTick = Math.max(Date.now(), lastTick + 1);
    return lastTick;
  };

  let harness: ChatHarness;
  let admin: string;
  beforeAll(async () => {
    harness = await startChatHarness({
      dialect,
      services: { now },
      // A template of the operator's own may require a variable; the built-in ones require none.
      overrides: {
        templates: [
          {
            name: 'release_notes_writer',
            display_name: 'Release notes writer',
            description: 'Writes release notes.',
            system_prompt: 'You write release notes for {{product}}.',
            variables: [{ name: 'product', required: true, description: 'The product.' }],
          },
        ],
      },
    });
    admin = harness.adminKey;
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  const call = (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: object,
    key?: string,
  ) =>
    harness.app.inject({
      method,
      url,
      headers: bearer(key ?? admin),
      ...(payload === undefined ? {} : { payload }),
    });

  const createConversation = async (body: Record<string, unknown> = {}, key?: string) => {
    const response = await call('POST', '/v1/conversations', body, key);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<ConversationJson>();
  };

  const getConversation = async (id: string, key?: string) => {
    const response = await call('GET', `/v1/conversations/${id}`, undefined, key);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<ConversationJson>();
  };

  const list = async (query: string, key?: string) => {
    const response = await call('GET', `/v1/conversations?${query}`, undefined, key);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<ListJson>();
  };

  const chat = async (
    userId: string,
    content: string,
    conversation?: string,
    key?: string,
  ): Promise<ChatJson> => {
    const response = await call(
      'POST',
      '/v1/chat',
      {
        user_id: userId,
        messages: [{ role: 'user', content }],
        ...(conversation === undefined ? {} : { conversation_id: conversation }),
      },
      key,
    );
    expect(response.statusCode, response.body).toBe(200);
    return response.json<ChatJson>();
  };

  const history = async (id: string, query = '', key?: string) => {
    const response = await call('GET', `/v1/conversations/${id}/messages${query}`, undefined, key);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<MessagesJson>();
  };

  const upstreamMessages = (index: number): UpstreamMessage[] =>
    (harness.upstream.requests[index]!.body as { messages: UpstreamMessage[] }).messages;

  const lastUpstreamMessages = () => upstreamMessages(harness.upstream.requests.length - 1);

  const feedback = (body: Record<string, unknown>, key?: string) =>
    call('POST', '/v1/feedback', body, key);

  const summary = async (id: string) => {
    const response = await call('GET', `/v1/conversations/${id}/feedback`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<SummaryJson>();
  };

  /** A conversation of `userId` with `turns` chat turns; its assistant messages' ids in order. */
  const conversationWithTurns = async (userId: string, turns: number) => {
    let id: string | undefined;
    const assistantIds: string[] = [];
    for (let turn = 1; turn <= turns; turn++) {
      const answer = await chat(userId, `question ${turn}`, id);
      id = answer.conversation_id;
      assistantIds.push(answer.message_id);
    }
    return { id: id!, assistantIds };
  };

  describe('create and read', () => {
    it('creates a conversation from an empty body: every field is optional', async () => {
      const response = await call('POST', '/v1/conversations', {});
      expect(response.statusCode).toBe(201);
      const created = response.json<ConversationJson>();
      expect(created).toEqual({
        id: expect.stringMatching(conversationId),
        title: '',
        description: '',
        created_at: expect.stringMatching(isoTimestamp),
        updated_at: created.created_at,
        message_count: 0,
        status: 'active',
        user_id: null,
        system_prompt: null,
        model: 'fake-chat',
        template: null,
        template_variables: null,
        metadata: {},
      });
      // Belongs to no user, but is reachable by its id.
      expect(await getConversation(created.id)).toEqual(created);
      const another = await createConversation();
      expect(another.id).not.toBe(created.id);
    });

    it('creates with every field and reads them back in the detail', async () => {
      const metadata = { team: 'support', priority: 2, tags: ['a', 'b'], nested: { ok: true } };
      const created = await createConversation({
        user_id: 'carol',
        title: 'Quarterly planning',
        description: 'Numbers for Q3',
        model: 'fake-backup',
        system_prompt: 'You answer in haiku.',
        metadata,
      });
      expect(created).toMatchObject({
        id: expect.stringMatching(conversationId),
        title: 'Quarterly planning',
        description: 'Numbers for Q3',
        created_at: expect.stringMatching(isoTimestamp),
        updated_at: expect.stringMatching(isoTimestamp),
        system_prompt: 'You answer in haiku.',
        model: 'fake-backup',
      });
      expect(await getConversation(created.id)).toEqual({
        id: created.id,
        title: 'Quarterly planning',
        description: 'Numbers for Q3',
        created_at: created.created_at,
        updated_at: created.updated_at,
        message_count: 0,
        status: 'active',
        user_id: 'carol',
        system_prompt: 'You answer in haiku.',
        model: 'fake-backup',
        template: null,
        template_variables: null,
        metadata,
      });
    });

    it('refuses an unknown model with 400 unknown_model and creates nothing', async () => {
      const response = await call('POST', '/v1/conversations', {
        user_id: 'ghost',
        model: 'no-such-model',
      });
      expectError(response, 400, 'unknown_model', 'model');
      expect((await list('user_id=ghost&status=all')).total).toBe(0);
    });

    it('refuses an embedding model as the conversation model', async () => {
      const response = await call('POST', '/v1/conversations', { model: 'fake-embed' });
      expectError(response, 400, 'invalid_parameter', 'model');
    });

    it.each([
      ['an unknown field', { title: 'x', colour: 'blue' }, 'invalid_parameter', 'colour'],
      ['a title that is not a string', { title: 5 }, 'invalid_parameter', 'title'],
      ['metadata that is not an object', { metadata: 'x' }, 'invalid_parameter', 'metadata'],
      ['an empty user_id', { user_id: '' }, 'invalid_parameter', 'user_id'],
    ])('refuses %s with 400 naming it', async (_label, body, code, param) => {
      expectError(await call('POST', '/v1/conversations', body), 400, code, param);
    });

    it('answers 404 not_found for an unknown conversation', async () => {
      const response = await call('GET', '/v1/conversations/conv_doesnotexist0000000000');
      expectError(response, 404, 'not_found', null);
    });

    it('creates a conversation from a POST without any body', async () => {
      const response = await harness.app.inject({
        method: 'POST',
        url: '/v1/conversations',
        headers: bearer(admin),
      });
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json<ConversationJson>()).toMatchObject({
        id: expect.stringMatching(conversationId),
        title: '',
        model: 'fake-chat',
      });
    });

    it.each([
      ['an id longer than any the service makes', `conv_${'a'.repeat(120)}`],
      ['an id with broken percent-encoding', 'conv_%E0%A4%A'],
    ])('answers %s with the contract error body', async (_label, id) => {
      for (const path of [`/v1/conversations/${id}`, `/v1/conversations/${id}/messages`]) {
        const response = await call('GET', path);
        expect([400, 404], `${path}: ${response.body}`).toContain(response.statusCode);
        expect(response.json(), path).toEqual({
          error: {
            message: expect.any(String),
            type: errorTypes[response.statusCode],
            code: response.statusCode === 404 ? 'not_found' : 'invalid_parameter',
            param: response.statusCode === 404 ? null : expect.toBeOneOf(['conversation_id', null]),
          },
        });
      }
    });
  });

  describe('change and delete', () => {
    it('changes title, description and metadata (replaced whole) and bumps updated_at', async () => {
      const created = await createConversation({
        user_id: 'dora',
        title: 'Old',
        description: 'Old description',
        system_prompt: 'Be brief.',
        metadata: { keep: false, colour: 'red' },
      });
      const response = await call('PATCH', `/v1/conversations/${created.id}`, {
        title: 'New',
        description: 'New description',
        metadata: { colour: 'blue' },
      });
      expect(response.statusCode, response.body).toBe(200);
      const changed = response.json<ConversationJson>();
      expect(changed).toMatchObject({
        id: created.id,
        title: 'New',
        description: 'New description',
        metadata: { colour: 'blue' },
        status: 'active',
        system_prompt: 'Be brief.',
        user_id: 'dora',
        created_at: created.created_at,
      });
      expect(changed.metadata).toEqual({ colour: 'blue' });
      expect(Date.parse(changed.updated_at)).toBeGreaterThan(Date.parse(created.updated_at));
      expect(await getConversation(created.id)).toEqual(changed);

      // A PATCH that names only the title leaves everything else alone.
      const titled = await call('PATCH', `/v1/conversations/${created.id}`, { title: 'Newer' });
      expect(titled.json<ConversationJson>()).toMatchObject({
        title: 'Newer',
        description: 'New description',
        metadata: { colour: 'blue' },
      });
    });

    it('archives and reactivates; refuses any other status, unknown fields and unknown ids', async () => {
      const created = await createConversation({ user_id: 'dora' });
      const archived = await call('PATCH', `/v1/conversations/${created.id}`, {
        status: 'archived',
      });
      expect(archived.json<ConversationJson>().status).toBe('archived');
      expect((await getConversation(created.id)).status).toBe('archived');
      const reactivated = await call('PATCH', `/v1/conversations/${created.id}`, {
        status: 'active',
      });
      expect(reactivated.json<ConversationJson>().status).toBe('active');

      expectError(
        await call('PATCH', `/v1/conversations/${created.id}`, { status: 'deleted' }),
        400,
        'invalid_parameter',
        'status',
      );
      // The spec's common `model` changes the model of the conversation's next turns.
      const remodelled = await call('PATCH', `/v1/conversations/${created.id}`, {
        model: 'fake-small',
      });
      expect(remodelled.json<ConversationJson>().model).toBe('fake-small');
      expectError(
        await call('PATCH', `/v1/conversations/${created.id}`, { model: 'no-such-model' }),
        400,
        'unknown_model',
        'model',
      );
      expectError(
        await call('PATCH', `/v1/conversations/${created.id}`, { colour: 'red' }),
        400,
        'invalid_parameter',
        'colour',
      );
      expect((await getConversation(created.id)).status).toBe('active');
      expectError(
        await call('PATCH', '/v1/conversations/conv_doesnotexist0000000000', { title: 'x' }),
        404,
        'not_found',
        null,
      );
    });

    it('deletes a conversation with its messages and feedback', async () => {
      const { id, assistantIds } = await conversationWithTurns('erin', 1);
      expect(
        (
          await feedback({
            conversation_id: id,
            message_id: assistantIds[0],
            feedback_type: 'thumbs_up',
          })
        ).statusCode,
      ).toBe(200);

      const response = await call('DELETE', `/v1/conversations/${id}`);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ success: true, message: expect.any(String), id });

      expectError(await call('GET', `/v1/conversations/${id}`), 404, 'not_found', null);
      expectError(await call('GET', `/v1/conversations/${id}/messages`), 404, 'not_found', null);
      expectError(await call('GET', `/v1/conversations/${id}/feedback`), 404, 'not_found', null);
      expectError(
        await feedback({
          conversation_id: id,
          message_id: assistantIds[0],
          feedback_type: 'thumbs_up',
        }),
        404,
        'not_found',
        null,
      );
      expectError(
        await call('POST', '/v1/chat', {
          user_id: 'erin',
          conversation_id: id,
          messages: [{ role: 'user', content: 'still there?' }],
        }),
        404,
        'not_found',
        null,
      );
      expectError(await call('DELETE', `/v1/conversations/${id}`), 404, 'not_found', null);
      expect((await list('user_id=erin&status=all')).total).toBe(0);
    });
  });

  describe('listing', () => {
    it('needs user_id: 400 missing_parameter', async () => {
      expectError(await call('GET', '/v1/conversations'), 400, 'missing_parameter', 'user_id');
      expectError(
        await call('GET', '/v1/conversations?limit=5'),
        400,
        'missing_parameter',
        'user_id',
      );
    });

    it.each([
      ['limit=101', 'limit'],
      ['limit=0', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=x', 'limit'],
      ['limit=2.5', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=x', 'offset'],
      ['status=deleted', 'status'],
      ['order=sideways', 'order'],
    ])('refuses %s with 400 naming %s', async (query, param) => {
      expectError(
        await call('GET', `/v1/conversations?user_id=frank&${query}`),
        400,
        'invalid_parameter',
        param,
      );
    });

    it('accepts the largest limit, 100', async () => {
      expect(await list('user_id=frank&limit=100')).toEqual({
        conversations: [],
        total: 0,
        limit: 100,
        offset: 0,
      });
    });

    it('defaults to limit 20, offset 0, active, newest first; total counts every match', async () => {
      const ids: string[] = [];
      for (let index = 0; index < 22; index++) {
        ids.push((await createConversation({ user_id: 'gina', title: `c${index}` })).id);
      }
      const page = await list('user_id=gina');
      expect(page.limit).toBe(20);
      expect(page.offset).toBe(0);
      expect(page.total).toBe(22);
      expect(page.conversations.map((entry) => entry.id)).toEqual(ids.slice(2).reverse());
      const newest = page.conversations[0]!;
      expect(newest).toEqual({
        id: ids[21],
        title: 'c21',
        created_at: expect.stringMatching(isoTimestamp),
        updated_at: expect.stringMatching(isoTimestamp),
        message_count: 0,
        status: 'active',
        user_id: 'gina',
      });

      const rest = await list('user_id=gina&offset=20');
      expect(rest).toMatchObject({ total: 22, limit: 20, offset: 20 });
      expect(rest.conversations.map((entry) => entry.id)).toEqual([ids[1], ids[0]]);

      const middle = await list('user_id=gina&limit=3&offset=4');
      expect(middle).toMatchObject({ total: 22, limit: 3, offset: 4 });
      expect(middle.conversations.map((entry) => entry.id)).toEqual([ids[17], ids[16], ids[15]]);

      const ascending = await list('user_id=gina&order=asc&limit=2');
      expect(ascending.conversations.map((entry) => entry.id)).toEqual([ids[0], ids[1]]);
      expect(ascending.total).toBe(22);

      const beyond = await list('user_id=gina&offset=50');
      expect(beyond).toEqual({ conversations: [], total: 22, limit: 20, offset: 50 });
    });

    it('moves a conversation that gets a new chat turn to the top', async () => {
      const first = await createConversation({ user_id: 'hank', title: 'first' });
      const second = await createConversation({ user_id: 'hank', title: 'second' });
      const third = await createConversation({ user_id: 'hank', title: 'third' });
      expect((await list('user_id=hank')).conversations.map((entry) => entry.id)).toEqual([
        third.id,
        second.id,
        first.id,
      ]);
      await chat('hank', 'bump me', first.id);
      const page = await list('user_id=hank');
      expect(page.conversations.map((entry) => entry.id)).toEqual([first.id, third.id, second.id]);
      expect(page.conversations[0]).toMatchObject({ title: 'first', message_count: 2 });
      expect((await list('user_id=hank&order=asc')).conversations.map((entry) => entry.id)).toEqual(
        [second.id, third.id, first.id],
      );
    });

    it('filters by status: active by default, archived, all', async () => {
      const kept = await createConversation({ user_id: 'iris', title: 'kept' });
      const archived = await createConversation({ user_id: 'iris', title: 'archived' });
      const patched = await call('PATCH', `/v1/conversations/${archived.id}`, {
        status: 'archived',
      });
      expect(patched.statusCode).toBe(200);

      const active = await list('user_id=iris');
      expect(active.total).toBe(1);
      expect(active.conversations.map((entry) => [entry.id, entry.status])).toEqual([
        [kept.id, 'active'],
      ]);
      const onlyArchived = await list('user_id=iris&status=archived');
      expect(onlyArchived.total).toBe(1);
      expect(onlyArchived.conversations.map((entry) => [entry.id, entry.status])).toEqual([
        [archived.id, 'archived'],
      ]);
      const all = await list('user_id=iris&status=all');
      expect(all.total).toBe(2);
      expect(all.conversations.map((entry) => entry.id)).toEqual([archived.id, kept.id]);
      expect((await list('user_id=iris&status=active')).total).toBe(1);
    });

    it("never lists another user's conversations, nor conversations of no user", async () => {
      const mine = await createConversation({ user_id: 'jack' });
      const theirs = await createConversation({ user_id: 'jill' });
      await createConversation({ title: 'nobody’s' });
      const page = await list('user_id=jack&status=all');
      expect(page.conversations.map((entry) => entry.id)).toEqual([mine.id]);
      expect(page.total).toBe(1);
      expect((await list('user_id=jill&status=all')).conversations.map((e) => e.id)).toEqual([
        theirs.id,
      ]);
    });
  });

  describe('chat history', () => {
    it('needs user_id on /v1/chat', async () => {
      const response = await call('POST', '/v1/chat', {
        messages: [{ role: 'user', content: 'hello' }],
      });
      expectError(response, 400, 'missing_parameter', 'user_id');
      expect(harness.upstream.requests).toHaveLength(0);
    });

    it('creates a conversation for the user, titled from the first user message', async () => {
      const answer = await chat('kate', 'Plan a weekend in Lisbon\nwith a day trip to Sintra');
      expect(answer.conversation_id).toMatch(conversationId);
      expect(answer.message_id).toMatch(messageId);
      expect(answer.message).toBe('Echo: Plan a weekend in Lisbon\nwith a day trip to Sintra');
      const detail = await getConversation(answer.conversation_id);
      expect(detail).toMatchObject({
        id: answer.conversation_id,
        title: 'Plan a weekend in Lisbon',
        user_id: 'kate',
        message_count: 2,
        model: 'fake-chat',
        status: 'active',
        system_prompt: null,
      });
      const page = await list('user_id=kate');
      expect(page.conversations.map((entry) => entry.id)).toEqual([answer.conversation_id]);
      // The second turn keeps the title.
      await chat('kate', 'And where do we eat?', answer.conversation_id);
      expect((await getConversation(answer.conversation_id)).title).toBe(
        'Plan a weekend in Lisbon',
      );
    });

    it('shortens a long first message into the title', async () => {
      const long = `${'word '.repeat(40)}end`;
      const answer = await chat('kate', long);
      const { title } = await getConversation(answer.conversation_id);
      expect(title.length).toBeGreaterThan(20);
      expect(title.length).toBeLessThanOrEqual(81);
      expect(long.startsWith(title.replace(/…$/, ''))).toBe(true);
    });

    it('fills an empty title on the first turn and keeps a given one', async () => {
      const untitled = await createConversation({ user_id: 'liam' });
      await chat('liam', 'What is a monad?', untitled.id);
      expect((await getConversation(untitled.id)).title).toBe('What is a monad?');
      const titled = await createConversation({ user_id: 'liam', title: 'My title' });
      await chat('liam', 'What is a functor?', titled.id);
      expect((await getConversation(titled.id)).title).toBe('My title');
    });

    it('stores both turns: message_count 2, then 4; history in order with model and usage', async () => {
      const first = await chat('mia', 'What is the capital of France?');
      const id = first.conversation_id;
      expect((await getConversation(id)).message_count).toBe(2);
      const second = await chat('mia', 'And of Italy?', id);
      expect(second.conversation_id).toBe(id);
      expect((await getConversation(id)).message_count).toBe(4);
      expect((await list('user_id=mia')).conversations[0]).toMatchObject({
        id,
        message_count: 4,
      });

      // The second turn reached the model with the first one as history.
      expect(harness.upstream.requests).toHaveLength(2);
      expect(upstreamMessages(1)).toEqual([
        { role: 'user', content: 'What is the capital of France?' },
        { role: 'assistant', content: 'Echo: What is the capital of France?' },
        { role: 'user', content: 'And of Italy?' },
      ]);

      const page = await history(id);
      expect(page).toMatchObject({ conversation_id: id, total: 4, limit: 50, offset: 0 });
      const user = (content: string) => ({
        id: expect.stringMatching(messageId),
        role: 'user',
        content,
        created_at: expect.stringMatching(isoTimestamp),
        model: null,
        finish_reason: null,
        latency_ms: null,
        usage: null,
      });
      const assistant = (answer: ChatJson) => ({
        id: answer.message_id,
        role: 'assistant',
        content: answer.message,
        created_at: expect.stringMatching(isoTimestamp),
        model: 'fake-chat',
        finish_reason: 'stop',
        latency_ms: expect.any(Number),
        usage: answer.usage,
      });
      expect(page.messages).toEqual([
        user('What is the capital of France?'),
        assistant(first),
        user('And of Italy?'),
        assistant(second),
      ]);
      expect(first.usage.total_tokens).toBe(
        first.usage.prompt_tokens + first.usage.completion_tokens,
      );
      expect(first.usage.completion_tokens).toBeGreaterThan(0);

      const ids = page.messages.map((message) => message.id);
      const paged = await history(id, '?limit=2&offset=1');
      expect(paged).toMatchObject({ total: 4, limit: 2, offset: 1 });
      expect(paged.messages.map((message) => message.id)).toEqual(ids.slice(1, 3));
      const newestFirst = await history(id, '?order=desc');
      expect(newestFirst.messages.map((message) => message.id)).toEqual([...ids].reverse());
      const newestTwo = await history(id, '?order=desc&limit=2');
      expect(newestTwo.messages.map((message) => message.role)).toEqual(['assistant', 'user']);
      expect(newestTwo.messages[0]!.id).toBe(second.message_id);
      expect(await history(id, '?offset=10')).toMatchObject({ messages: [], total: 4 });
    });

    it('answers an empty history for a new conversation', async () => {
      const created = await createConversation({ user_id: 'mia' });
      expect(await history(created.id)).toEqual({
        conversation_id: created.id,
        messages: [],
        total: 0,
        limit: 50,
        offset: 0,
      });
    });

    it.each([
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?offset=-1', 'offset'],
      ['?order=newest', 'order'],
    ])('refuses history paging %s with 400 naming %s', async (query, param) => {
      const created = await createConversation({ user_id: 'mia' });
      expectError(
        await call('GET', `/v1/conversations/${created.id}/messages${query}`),
        400,
        'invalid_parameter',
        param,
      );
    });

    it("uses the conversation's model and system prompt for its turns", async () => {
      const created = await createConversation({
        user_id: 'nina',
        model: 'fake-backup',
        system_prompt: 'Answer in French.',
      });
      const answer = await chat('nina', 'Hello', created.id);
      expect(answer.model).toBe('fake-backup');
      const request = harness.upstream.requests[0]!.body as {
        model: string;
        messages: UpstreamMessage[];
      };
      expect(request.model).toBe('gpt-4o');
      expect(request.messages).toEqual([
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'Hello' },
      ]);
      const page = await history(created.id);
      expect(page.messages.map((message) => message.model)).toEqual([null, 'fake-backup']);
    });

    it('stores a streamed turn like a plain one', async () => {
      const response = await call('POST', '/v1/chat', {
        user_id: 'olga',
        stream: true,
        messages: [{ role: 'user', content: 'Stream me a story' }],
      });
      expect(response.statusCode).toBe(200);
      const start = response.body
        .split('\n\n')
        .filter((frame) => frame.startsWith('data: '))
        .map((frame) => JSON.parse(frame.slice('data: '.length)) as Record<string, unknown>)
        .find((event) => event.type === 'start');
      const id = String(start?.conversation_id);
      expect(id).toMatch(conversationId);
      expect(await getConversation(id)).toMatchObject({
        title: 'Stream me a story',
        user_id: 'olga',
        message_count: 2,
      });
      expect((await history(id)).messages.map((message) => message.content)).toEqual([
        'Stream me a story',
        'Echo: Stream me a story',
      ]);
    });

    it('lets a conversation of no user be chatted into by id', async () => {
      const created = await createConversation();
      const answer = await chat('olga', 'Hi there', created.id);
      expect(answer.conversation_id).toBe(created.id);
      expect((await getConversation(created.id)).message_count).toBe(2);
    });
  });

  describe('scopes', () => {
    const keys: Record<string, string> = {};
    let id: string;
    let assistantId: string;
    beforeAll(async () => {
      for (const scope of [
        'chat:read',
        'chat:write',
        'models:read',
        'conversations:read',
        'conversations:write',
      ]) {
        keys[scope] = (await createKey(harness.app, admin, { scopes: [scope] })).key;
      }
      keys.none = (await createKey(harness.app, admin, { scopes: [] })).key;
      const made = await conversationWithTurns('pia', 1);
      id = made.id;
      assistantId = made.assistantIds[0]!;
    });

    const routes: Array<
      [string, 'GET' | 'POST' | 'PATCH' | 'DELETE', () => string, () => object | undefined, number]
    > = [
      ['chat:read', 'GET', () => `/v1/conversations/${id}/messages`, () => undefined, 200],
      ['conversations:read', 'GET', () => '/v1/conversations?user_id=pia', () => undefined, 200],
      ['conversations:read', 'GET', () => `/v1/conversations/${id}`, () => undefined, 200],
      ['conversations:read', 'GET', () => `/v1/conversations/${id}/feedback`, () => undefined, 200],
      ['conversations:write', 'POST', () => '/v1/conversations', () => ({}), 201],
      [
        'conversations:write',
        'PATCH',
        () => `/v1/conversations/${id}`,
        () => ({ title: 't' }),
        200,
      ],
      [
        'conversations:write',
        'POST',
        () => `/v1/conversations/${id}/template`,
        () => ({ template_name: 'standard_assistant' }),
        200,
      ],
      [
        'conversations:write',
        'POST',
        () => '/v1/feedback',
        () => ({ conversation_id: id, message_id: assistantId, feedback_type: 'thumbs_up' }),
        200,
      ],
      ['models:read', 'GET', () => '/v1/templates', () => undefined, 200],
      ['models:read', 'GET', () => '/v1/templates/standard_assistant', () => undefined, 200],
      [
        'chat:write',
        'POST',
        () => '/v1/chat',
        () => ({ user_id: 'pia', conversation_id: id, messages: [{ role: 'user', content: 'x' }] }),
        200,
      ],
    ];

    it.each(routes)('needs %s for %s', async (scope, method, url, body, okStatus) => {
      for (const [held, key] of Object.entries(keys)) {
        if (held === scope) continue;
        const refused = await call(method, url(), body(), key);
        expectError(refused, 403, 'insufficient_permissions', null, { required_scope: scope });
        expect(refused.json<ErrorJson>().error.message).toContain(scope);
      }
      const allowed = await call(method, url(), body(), keys[scope]);
      expect(allowed.statusCode, allowed.body).toBe(okStatus);
    });

    it('lets the DELETE through with conversations:write only', async () => {
      const created = await createConversation({ user_id: 'pia' });
      expectError(
        await call(
          'DELETE',
          `/v1/conversations/${created.id}`,
          undefined,
          keys['conversations:read'],
        ),
        403,
        'insufficient_permissions',
        null,
        { required_scope: 'conversations:write' },
      );
      const deleted = await call(
        'DELETE',
        `/v1/conversations/${created.id}`,
        undefined,
        keys['conversations:write'],
      );
      expect(deleted.statusCode).toBe(200);
    });
  });

  describe('tenant and user isolation', () => {
    let otherAdmin: string;
    let id: string;
    let assistantId: string;
    let before: ConversationJson;
    beforeAll(async () => {
      otherAdmin = (await createAccount(harness.app, admin, `tenant-b-${dialect.name}`)).admin_key;
      const made = await conversationWithTurns('alice', 1);
      id = made.id;
      assistantId = made.assistantIds[0]!;
      before = await getConversation(id);
    });

    const attempts: Array<
      [string, 'GET' | 'POST' | 'PATCH' | 'DELETE', () => string, () => object | undefined]
    > = [
      ['get', 'GET', () => `/v1/conversations/${id}`, () => undefined],
      ['patch', 'PATCH', () => `/v1/conversations/${id}`, () => ({ title: 'pwned' })],
      ['delete', 'DELETE', () => `/v1/conversations/${id}`, () => undefined],
      ['messages', 'GET', () => `/v1/conversations/${id}/messages`, () => undefined],
      [
        'template assignment',
        'POST',
        () => `/v1/conversations/${id}/template`,
        () => ({ template_name: 'standard_assistant' }),
      ],
      ['feedback summary', 'GET', () => `/v1/conversations/${id}/feedback`, () => undefined],
      [
        'feedback submission',
        'POST',
        () => '/v1/feedback',
        () => ({
          conversation_id: id,
          message_id: assistantId,
          feedback_type: 'thumbs_down',
          user_id: 'alice',
        }),
      ],
      [
        'chat',
        'POST',
        () => '/v1/chat',
        () => ({
          user_id: 'alice',
          conversation_id: id,
          messages: [{ role: 'user', content: 'let me in' }],
        }),
      ],
    ];

    it.each(attempts)("answers 404 to another account's %s", async (_label, method, url, body) => {
      expectError(await call(method, url(), body(), otherAdmin), 404, 'not_found', null);
      expect(harness.upstream.requests).toHaveLength(0);
    });

    it("lists none of the other account's conversations for the same user_id", async () => {
      expect(await list('user_id=alice&status=all', otherAdmin)).toEqual({
        conversations: [],
        total: 0,
        limit: 20,
        offset: 0,
      });
    });

    it("refuses feedback on another account's message in one's own conversation", async () => {
      const own = await createConversation({ user_id: 'alice' }, otherAdmin);
      expectError(
        await feedback(
          { conversation_id: own.id, message_id: assistantId, feedback_type: 'thumbs_up' },
          otherAdmin,
        ),
        404,
        'not_found',
        null,
      );
    });

    it("answers 404 to another user of the same account chatting into alice's conversation", async () => {
      const response = await call('POST', '/v1/chat', {
        user_id: 'mallory',
        conversation_id: id,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expectError(response, 404, 'not_found', null);
      expect(harness.upstream.requests).toHaveLength(0);
    });

    it("leaves alice's conversation untouched", async () => {
      expect(await getConversation(id)).toEqual(before);
      expect((await history(id)).total).toBe(2);
      expect((await summary(id)).feedback_details).toEqual([]);
    });
  });

  describe('templates', () => {
    const names = ['standard_assistant', 'expert_assistant', 'customer_support_assistant'];

    const template = async (name: string) => {
      const response = await call('GET', `/v1/templates/${name}`);
      expect(response.statusCode, response.body).toBe(200);
      return response.json<TemplateDetailJson>();
    };

    const assign = (id: string, body: Record<string, unknown>) =>
      call('POST', `/v1/conversations/${id}/template`, body);

    it("lists the spec's three templates, then the configured ones", async () => {
      const response = await call('GET', '/v1/templates');
      expect(response.statusCode).toBe(200);
      const { templates } = response.json<{ templates: TemplateEntryJson[] }>();
      expect(templates.map((entry) => entry.name)).toEqual([...names, 'release_notes_writer']);
      for (const entry of templates) {
        expect(entry).toEqual({
          id: entry.name,
          name: entry.name,
          display_name: expect.stringMatching(/\S/),
          description: expect.stringMatching(/\S/),
        });
      }
    });

    it.each(names)('details %s with its prompt, variables and a working example', async (name) => {
      const detail = await template(name);
      const listed = (await call('GET', '/v1/templates'))
        .json<{ templates: TemplateEntryJson[] }>()
        .templates.find((entry) => entry.name === name);
      expect(detail).toMatchObject({ ...listed });
      expect(detail.system_prompt).toMatch(/\S/);
      expect(detail.variables).toContain('additional_instructions');
      expect(detail.example_usage).toMatch(/\S/);
      // The example is a body that the assignment endpoint accepts.
      const example = JSON.parse(detail.example_usage) as { template_name: string };
      expect(example.template_name).toBe(name);
      const created = await createConversation({ user_id: 'quinn' });
      const assigned = await assign(created.id, example);
      expect(assigned.statusCode, assigned.body).toBe(200);
    });

    it('names the variables each template uses', async () => {
      expect((await template('expert_assistant')).variables).toEqual(
        expect.arrayContaining(['domain', 'audience', 'additional_instructions']),
      );
      expect((await template('customer_support_assistant')).variables).toEqual(
        expect.arrayContaining(['company_name', 'additional_instructions']),
      );
    });

    it('answers 404 for an unknown template', async () => {
      expectError(await call('GET', '/v1/templates/pirate_assistant'), 404, 'not_found', null);
    });

    it('assigns a template: the rendered prompt becomes the system prompt of the next turn', async () => {
      const created = await createConversation({ user_id: 'rosa', system_prompt: 'Be terse.' });
      const variables = { domain: 'R&D <labs> "quoted"' };
      const response = await assign(created.id, { template_name: 'expert_assistant', variables });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toEqual({
        status: 'success',
        conversation_id: created.id,
        template: 'expert_assistant',
      });

      const detail = await getConversation(created.id);
      const raw = (await template('expert_assistant')).system_prompt;
      expect(detail.system_prompt).toBe(
        renderExpected(raw, { audience: 'a professional audience', ...variables }),
      );
      const prompt = detail.system_prompt!;
      expect(prompt.split('\n')[0]).toBe(
        'You are a senior expert in R&D <labs> "quoted", advising a professional audience.',
      );
      expect(prompt).not.toContain('{{');
      expect(prompt).not.toContain('Additional instructions');
      expect(prompt).not.toContain('Be terse.');
      expect(detail).toMatchObject({ template: 'expert_assistant', template_variables: variables });

      await chat('rosa', 'How do I read an EXPLAIN plan?', created.id);
      expect(lastUpstreamMessages()).toEqual([
        { role: 'system', content: prompt },
        { role: 'user', content: 'How do I read an EXPLAIN plan?' },
      ]);
    });

    it('renders optional sections only when their variable is set', async () => {
      const created = await createConversation({ user_id: 'rosa' });
      const variables = {
        domain: 'PostgreSQL performance',
        audience: 'backend developers',
        additional_instructions: 'Prefer metric units.',
      };
      const response = await assign(created.id, { template_name: 'expert_assistant', variables });
      expect(response.statusCode, response.body).toBe(200);
      const prompt = (await getConversation(created.id)).system_prompt!;
      const raw = (await template('expert_assistant')).system_prompt;
      expect(prompt).toBe(renderExpected(raw, variables));
      expect(prompt.split('\n')[0]).toBe(
        'You are a senior expert in PostgreSQL performance, advising backend developers.',
      );
      expect(prompt).not.toContain('a professional audience');
      expect(prompt.endsWith('\n\nAdditional instructions:\nPrefer metric units.')).toBe(true);

      // Reassigning replaces the template and its variables.
      const standard = await assign(created.id, { template_name: 'standard_assistant' });
      expect(standard.statusCode).toBe(200);
      const replaced = await getConversation(created.id);
      expect(replaced.template).toBe('standard_assistant');
      expect(replaced.system_prompt).toBe(
        renderExpected((await template('standard_assistant')).system_prompt, {}),
      );
      expect(replaced.system_prompt).not.toContain('Additional instructions');
      expect(replaced.system_prompt).not.toContain('PostgreSQL');

      await chat('rosa', 'Hello', created.id);
      expect(lastUpstreamMessages()[0]).toEqual({
        role: 'system',
        content: replaced.system_prompt,
      });
    });

    it.each([
      [
        'an unknown template',
        { template_name: 'pirate_assistant' },
        'unknown_template',
        'template_name',
      ],
      ['no template_name', { variables: {} }, 'missing_parameter', 'template_name'],
      [
        'an unknown variable',
        { template_name: 'expert_assistant', variables: { domain: 'law', colour: 'red' } },
        'invalid_parameter',
        'variables.colour',
      ],
      [
        'a missing required variable',
        { template_name: 'release_notes_writer', variables: { additional_instructions: 'x' } },
        'invalid_parameter',
        'variables.additional_instructions',
      ],
      [
        'no variables where one is required',
        { template_name: 'release_notes_writer' },
        'missing_parameter',
        'variables.product',
      ],
      [
        'a blank required variable',
        { template_name: 'release_notes_writer', variables: { product: '   ' } },
        'missing_parameter',
        'variables.product',
      ],
      [
        'a variable that is not a string',
        { template_name: 'expert_assistant', variables: { domain: 42 } },
        'invalid_parameter',
        'variables.domain',
      ],
    ])('refuses %s and leaves the conversation as it was', async (_label, body, code, param) => {
      const created = await createConversation({ user_id: 'sam', system_prompt: 'Original.' });
      expectError(await assign(created.id, body), 400, code, param);
      expect(await getConversation(created.id)).toMatchObject({
        system_prompt: 'Original.',
        template: null,
      });
    });

    it.each(names)(
      'assigns %s with only additional_instructions, the other variables taking their documented defaults',
      async (name) => {
        const created = await createConversation({ user_id: 'tess' });
        const variables = { additional_instructions: 'Answer in French.' };
        const response = await assign(created.id, { template_name: name, variables });
        expect(response.statusCode, response.body).toBe(200);
        const detail = await template(name);
        const defaults = Object.fromEntries(
          detail.variable_details
            .filter((variable) => variable.default !== null)
            .map((variable) => [variable.name, variable.default!]),
        );
        expect(detail.required_variables).toEqual([]);
        const prompt = (await getConversation(created.id)).system_prompt!;
        expect(prompt).toBe(renderExpected(detail.system_prompt, { ...defaults, ...variables }));
        expect(prompt.endsWith('Additional instructions:\nAnswer in French.')).toBe(true);
        await chat('tess', 'Bonjour', created.id);
        expect(lastUpstreamMessages()[0]).toEqual({ role: 'system', content: prompt });
      },
    );

    it('fills the defaults into the prompts: expert and support read as sentences without them', async () => {
      const expert = await createConversation({ user_id: 'tess' });
      expect((await assign(expert.id, { template_name: 'expert_assistant' })).statusCode).toBe(200);
      expect((await getConversation(expert.id)).system_prompt!.split('\n')[0]).toBe(
        'You are a senior expert in the field the user asks about, advising a professional audience.',
      );
      const support = await createConversation({ user_id: 'tess' });
      expect(
        (await assign(support.id, { template_name: 'customer_support_assistant' })).statusCode,
      ).toBe(200);
      expect((await getConversation(support.id)).system_prompt!.split('\n')[0]).toBe(
        'You are a customer support agent for this company.',
      );
    });

    it("accepts the spec's common user_id parameter on the assignment", async () => {
      const created = await createConversation({ user_id: 'sam' });
      const response = await assign(created.id, {
        template_name: 'standard_assistant',
        user_id: 'sam',
      });
      expect(response.statusCode, response.body).toBe(200);
      expect((await getConversation(created.id)).template).toBe('standard_assistant');
    });

    it('answers 404 when assigning to an unknown conversation', async () => {
      expectError(
        await assign('conv_doesnotexist0000000000', { template_name: 'standard_assistant' }),
        404,
        'not_found',
        null,
      );
    });
  });

  describe('feedback', () => {
    let id: string;
    let assistantIds: string[];
    let otherConversation: { id: string; assistantIds: string[] };
    beforeAll(async () => {
      ({ id, assistantIds } = await conversationWithTurns('tara', 2));
      otherConversation = await conversationWithTurns('tara', 1);
    });

    const on = (message: string, extra: Record<string, unknown>) => ({
      conversation_id: id,
      message_id: message,
      ...extra,
    });

    it('accepts thumbs_up with the value 1 or without a value', async () => {
      const withValue = await feedback(
        on(assistantIds[0]!, { feedback_type: 'thumbs_up', feedback_value: 1, user_id: 'u1' }),
      );
      expect(withValue.statusCode, withValue.body).toBe(200);
      expect(withValue.json()).toEqual({
        status: 'success',
        feedback_id: expect.stringMatching(feedbackId),
      });
      const withoutValue = await feedback(
        on(assistantIds[0]!, {
          feedback_type: 'thumbs_up',
          user_id: 'u2',
          comment: 'Spot on.',
        }),
      );
      expect(withoutValue.json()).toEqual({
        status: 'success',
        feedback_id: expect.stringMatching(feedbackId),
      });
      const thumbsDown = await feedback(
        on(assistantIds[1]!, { feedback_type: 'thumbs_down', feedback_value: -1, user_id: 'u1' }),
      );
      expect(thumbsDown.statusCode, thumbsDown.body).toBe(200);
      const comment = await feedback(
        on(assistantIds[1]!, {
          feedback_type: 'rating',
          feedback_value: 3,
          user_id: 'u3',
          comment: 'x'.repeat(2000),
        }),
      );
      expect(comment.statusCode, comment.body).toBe(200);
    });

    it.each([
      [
        'thumbs_up with the value 5',
        { feedback_type: 'thumbs_up', feedback_value: 5 },
        'invalid_parameter',
        'feedback_value',
      ],
      [
        'thumbs_down with the value 1',
        { feedback_type: 'thumbs_down', feedback_value: 1 },
        'invalid_parameter',
        'feedback_value',
      ],
      [
        'a rating of 0',
        { feedback_type: 'rating', feedback_value: 0 },
        'invalid_parameter',
        'feedback_value',
      ],
      [
        'a rating of 6',
        { feedback_type: 'rating', feedback_value: 6 },
        'invalid_parameter',
        'feedback_value',
      ],
      [
        'a rating of 2.5',
        { feedback_type: 'rating', feedback_value: 2.5 },
        'invalid_parameter',
        'feedback_value',
      ],
      [
        'a rating without a value',
        { feedback_type: 'rating' },
        'missing_parameter',
        'feedback_value',
      ],
      [
        'a value given as text',
        { feedback_type: 'rating', feedback_value: '4' },
        'invalid_parameter',
        'feedback_value',
      ],
      [
        'an unknown type',
        { feedback_type: 'love', feedback_value: 1 },
        'invalid_parameter',
        'feedback_type',
      ],
      ['no type', { feedback_value: 1 }, 'missing_parameter', 'feedback_type'],
      [
        'a comment of 2001 characters',
        { feedback_type: 'thumbs_up', comment: 'x'.repeat(2001) },
        'invalid_parameter',
        'comment',
      ],
      ['an unknown field', { feedback_type: 'thumbs_up', stars: 5 }, 'invalid_parameter', 'stars'],
    ])('refuses %s with 400', async (_label, extra, code, param) => {
      const response = await feedback(on(assistantIds[0]!, { user_id: 'refused', ...extra }));
      expectError(response, 400, code, param);
    });

    it('refuses feedback without message_id or conversation_id', async () => {
      expectError(
        await feedback({ conversation_id: id, feedback_type: 'thumbs_up' }),
        400,
        'missing_parameter',
        'message_id',
      );
      expectError(
        await feedback({ message_id: assistantIds[0], feedback_type: 'thumbs_up' }),
        400,
        'missing_parameter',
        'conversation_id',
      );
    });

    it('refuses a message of another conversation (400) and an unknown message (404)', async () => {
      expectError(
        await feedback(
          on(otherConversation.assistantIds[0]!, {
            feedback_type: 'thumbs_up',
            user_id: 'refused',
          }),
        ),
        400,
        'invalid_parameter',
        'message_id',
      );
      expectError(
        await feedback(
          on('msg_doesnotexist0000000000', { feedback_type: 'thumbs_up', user_id: 'refused' }),
        ),
        404,
        'not_found',
        null,
      );
      expectError(
        await feedback({
          conversation_id: 'conv_doesnotexist0000000000',
          message_id: assistantIds[0],
          feedback_type: 'thumbs_up',
        }),
        404,
        'not_found',
        null,
      );
      // None of the refused feedback was stored.
      const details = (await summary(id)).feedback_details;
      expect(details.filter((entry) => entry.user_id === 'refused')).toEqual([]);
      expect((await summary(otherConversation.id)).feedback_details).toEqual([]);
    });

    it("replaces a user's earlier feedback on a message, keeping its feedback_id", async () => {
      const { id: conversation, assistantIds: answers } = await conversationWithTurns('uma', 1);
      const body = { conversation_id: conversation, message_id: answers[0], user_id: 'uma' };
      const first = await feedback({ ...body, feedback_type: 'thumbs_up' });
      const second = await feedback({
        ...body,
        feedback_type: 'rating',
        feedback_value: 2,
        comment: 'On second thought, no.',
      });
      expect(second.statusCode, second.body).toBe(200);
      expect(second.json<{ feedback_id: string }>().feedback_id).toBe(
        first.json<{ feedback_id: string }>().feedback_id,
      );
      const result = await summary(conversation);
      expect(result).toMatchObject({
        messages_with_feedback: 1,
        positive_feedback: 0,
        negative_feedback: 1,
        average_rating: 2,
      });
      expect(result.feedback_details).toEqual([
        expect.objectContaining({
          message_id: answers[0],
          feedback_type: 'rating',
          feedback_value: 2,
        }),
      ]);
    });

    it("counts feedback without user_id as the conversation owner's", async () => {
      const { id: conversation, assistantIds: answers } = await conversationWithTurns('vera', 1);
      const body = { conversation_id: conversation, message_id: answers[0] };
      const anonymous = await feedback({ ...body, feedback_type: 'thumbs_down' });
      expect(anonymous.statusCode, anonymous.body).toBe(200);
      const owner = await feedback({ ...body, feedback_type: 'thumbs_up', user_id: 'vera' });
      expect(owner.json<{ feedback_id: string }>().feedback_id).toBe(
        anonymous.json<{ feedback_id: string }>().feedback_id,
      );
      expect((await summary(conversation)).feedback_details).toHaveLength(1);
    });

    it("counts different users' feedback on one message separately", async () => {
      const { id: conversation, assistantIds: answers } = await conversationWithTurns('walt', 1);
      const body = { conversation_id: conversation, message_id: answers[0] };
      const walt = await feedback({ ...body, feedback_type: 'thumbs_up', user_id: 'walt' });
      const xena = await feedback({ ...body, feedback_type: 'thumbs_down', user_id: 'xena' });
      expect(walt.statusCode).toBe(200);
      expect(xena.statusCode).toBe(200);
      expect(xena.json<{ feedback_id: string }>().feedback_id).not.toBe(
        walt.json<{ feedback_id: string }>().feedback_id,
      );
      expect(await summary(conversation)).toMatchObject({
        total_messages: 2,
        messages_with_feedback: 1,
        positive_feedback: 1,
        negative_feedback: 1,
        average_rating: 0,
      });
      expect((await summary(conversation)).feedback_details).toHaveLength(2);
    });
  });

  describe('feedback summary', () => {
    it('answers zeros and no details without feedback', async () => {
      const { id } = await conversationWithTurns('yuri', 1);
      expect(await summary(id)).toEqual({
        conversation_id: id,
        total_messages: 2,
        messages_with_feedback: 0,
        positive_feedback: 0,
        negative_feedback: 0,
        average_rating: 0,
        feedback_details: [],
      });
    });

    it('computes every field exactly for a known set of feedback', async () => {
      const { id, assistantIds } = await conversationWithTurns('zoe', 3);
      const [a1, a2, a3] = assistantIds as [string, string, string];
      const given: Array<[string, string, string, number | undefined]> = [
        [a1, 'zoe', 'thumbs_up', undefined], // 1, positive
        [a1, 'gus', 'rating', 2], // 2, negative
        [a2, 'zoe', 'thumbs_down', undefined], // -1, negative
        [a2, 'gus', 'rating', 4], // 4, positive
        [a3, 'hal', 'rating', 3], // 3, neither
      ];
      const ids: string[] = [];
      for (const [message, user, type, value] of given) {
        const response = await feedback({
          conversation_id: id,
          message_id: message,
          user_id: user,
          feedback_type: type,
          ...(value === undefined ? {} : { feedback_value: value }),
        });
        expect(response.statusCode, response.body).toBe(200);
        ids.push(response.json<{ feedback_id: string }>().feedback_id);
      }
      expect(new Set(ids).size).toBe(5);

      const result = await summary(id);
      expect(result).toMatchObject({
        conversation_id: id,
        total_messages: 6,
        messages_with_feedback: 3,
        positive_feedback: 2,
        negative_feedback: 2,
      });
      // (1 + 2 − 1 + 4 + 3) / 5
      expect(result.average_rating).toBeCloseTo(1.8, 10);
      expect(result.feedback_details).toHaveLength(5);
      expect(result.feedback_details).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            message_id: a1,
            feedback_type: 'thumbs_up',
            feedback_value: 1,
          }),
          expect.objectContaining({ message_id: a1, feedback_type: 'rating', feedback_value: 2 }),
          expect.objectContaining({
            message_id: a2,
            feedback_type: 'thumbs_down',
            feedback_value: -1,
          }),
          expect.objectContaining({ message_id: a2, feedback_type: 'rating', feedback_value: 4 }),
          expect.objectContaining({ message_id: a3, feedback_type: 'rating', feedback_value: 3 }),
        ]),
      );
      for (const detail of result.feedback_details) {
        expect(detail.timestamp).toMatch(isoTimestamp);
      }

      // total_messages follows the conversation as it grows.
      await chat('zoe', 'one more', id);
      expect((await summary(id)).total_messages).toBe(8);
    });

    it('answers 404 for an unknown conversation', async () => {
      expectError(
        await call('GET', '/v1/conversations/conv_doesnotexist0000000000/feedback'),
        404,
        'not_found',
        null,
      );
    });
  });
});
