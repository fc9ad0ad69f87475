// ChatService directly, on every dialect, with the real openai-compatible provider calling the fake
// upstream over HTTP: a turn stored with its messages (a new conversation only once answered), the
// history and system prompt a later turn sends, a streamed turn's events in order, trimming to the
// context window, fallbacks, and upstream failures that leave nothing behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../../../test/support/dialects.js';
import { TestClock } from '../../../test/support/unit/clock.js';
import { appErrorOf } from '../../../test/support/unit/errors.js';
import {
  fakeUpstreamForFile,
  openChatStack,
  type ChatStack,
} from '../../../test/support/unit/models.js';
import { insertAccount } from '../../../test/support/unit/storage.js';
import type { Account } from '../accounts/account.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import type { ChatTurn } from '../../models/spec.js';
import { UpstreamError } from '../../models/spec.js';
import { ChatService, type ChatRequest, type ChatStreamEvent } from './chat-service.js';

const upstream = fakeUpstreamForFile();

/** The turns the upstream was sent, request by request. */
function sentMessages(): ChatTurn[][] {
  return upstream().requests.map((request) => (request.body as { messages: ChatTurn[] }).messages);
}

async function collect(events: AsyncGenerator<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const all: ChatStreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

describe.each(allDialects)('ChatService on $name', (dialect) => {
  let stack: ChatStack;
  let conversations: ConversationService;
  let chat: ChatService;
  let account: Account;
  const clock = new TestClock();

  beforeAll(async () => {
    stack = await openChatStack(dialect, upstream(), clock);
    conversations = stack.conversations;
    chat = new ChatService({ models: stack.models, conversations, now: clock.now });
    account = await insertAccount(stack.unit.storage);
  });
  afterAll(() => stack.close());

  const request = (fields: Partial<ChatRequest>): ChatRequest => ({
    accountId: account.id,
    apiKeyId: null,
    userId: null,
    conversationId: null,
    persist: true,
    messages: [],
    model: undefined,
    temperature: undefined,
    maxTokens: undefined,
    signal: new AbortController().signal,
    ...fields,
  });
  const user = (content: string): ChatTurn => ({ role: 'user', content });
  const storedMessages = async (conversationId: string) =>
    (
      await conversations.messages(account.id, conversationId, {
        limit: 100,
        offset: 0,
        order: 'asc',
      })
    ).messages;
  const conversationCount = async () =>
    (
      await conversations.list(account.id, {
        userId: null,
        status: 'all',
        order: 'asc',
        limit: 1,
        offset: 0,
      })
    ).total;

  it('answers a first turn and stores it as a new conversation with both messages', async () => {
    const outcome = await chat.complete(
      request({ messages: [user('Hello there')], apiKeyId: 'key_unit' }),
    );
    expect(outcome).toMatchObject({ text: 'Echo: Hello there', finishReason: 'stop' });
    expect(outcome.model.name).toBe('unit-chat');
    expect(sentMessages()).toEqual([[user('Hello there')]]);
    expect(upstream().requests[0]!.body).toMatchObject({ model: 'gpt-4o-mini', max_tokens: 256 });
    const conversation = await conversations.get(account.id, outcome.conversationId!);
    expect(conversation).toMatchObject({ title: 'Hello there', messageCount: 2 });
    const stored = await storedMessages(conversation.id);
    expect(stored.map((message) => [message.role, message.content, message.model])).toEqual([
      ['user', 'Hello there', null],
      ['assistant', 'Echo: Hello there', 'unit-chat'],
    ]);
    expect(stored[1]).toMatchObject({
      id: outcome.messageId,
      promptTokens: outcome.usage.promptTokens,
      completionTokens: outcome.usage.completionTokens,
      finishReason: 'stop',
      createdAt: clock.iso(),
    });
  });

  it('sends a later turn after its system prompt and stored history, in order', async () => {
    const conversation = await conversations.create(account.id, {
      userId: null,
      systemPrompt: 'Answer briefly.',
    });
    const turn = (text: string) =>
      chat.complete(request({ conversationId: conversation.id, messages: [user(text)] }));
    await turn('first question');
    await turn('second question');
    expect(sentMessages()[1]).toEqual([
      { role: 'system', content: 'Answer briefly.' },
      user('first question'),
      { role: 'assistant', content: 'Echo: first question' },
      user('second question'),
    ]);
    const stored = await storedMessages(conversation.id);
    expect(stored.map((message) => message.content)).toEqual([
      'first question',
      'Echo: first question',
      'second question',
      'Echo: second question',
    ]);
  });

  it('refuses a turn to be stored with inline data past its limit (413, before the model), not a stateless one', async () => {
    const bounded = new ChatService({
      models: stack.models,
      conversations,
      now: clock.now,
      maxStoredDataUrlBytes: 1024,
    });
    const withImage = (url: string): ChatTurn[] => [
      {
        role: 'user',
        content: 'see',
        parts: [
          { type: 'text', text: 'see' },
          { type: 'image_url', image_url: { url } },
        ],
      },
    ];
    const big = `data:image/png;base64,${'A'.repeat(1024)}`;
    const before = await conversationCount();
    const refused = await appErrorOf(bounded.complete(request({ messages: withImage(big) })));
    expect(refused).toMatchObject({
      code: 'payload_too_large',
      status: 413,
      param: 'messages[0].content[1].image_url.url',
    });
    expect(upstream().requests).toHaveLength(0);
    expect(await conversationCount()).toBe(before);
    // Nothing is stored without a conversation: the limit is the storage's, not the model's.
    const stateless = await bounded.complete(request({ persist: false, messages: withImage(big) }));
    expect(stateless.conversationId).toBeNull();
    // At the limit, it is stored as sent.
    const fits = `data:image/png;base64,${'A'.repeat(1024 - 'data:image/png;base64,'.length)}`;
    const kept = await bounded.complete(request({ messages: withImage(fits) }));
    const [stored] = await storedMessages(kept.conversationId!);
    expect(stored!.parts).toEqual(withImage(fits)[0]!.parts);
  });

  it('keeps nothing of a stateless turn', async () => {
    const before = await conversationCount();
    const outcome = await chat.complete(request({ persist: false, messages: [user('ping')] }));
    expect(outcome).toMatchObject({ text: 'Echo: ping', conversationId: null });
    expect(await conversationCount()).toBe(before);
  });

  it('streams a turn as start, its deltas in order, then end, and stores it once ended', async () => {
    upstream().enqueue({ kind: 'reply', chunks: ['Hel', 'lo ', 'wor', 'ld'] });
    const events = await collect(await chat.openStream(request({ messages: [user('greet')] })));
    expect(events.map((event) => event.type)).toEqual([
      'start',
      'delta',
      'delta',
      'delta',
      'delta',
      'end',
    ]);
    const [start, end] = [events[0]!, events.at(-1)!];
    if (start.type !== 'start' || end.type !== 'end') throw new Error('unreachable');
    expect(events.flatMap((event) => (event.type === 'delta' ? [event.text] : []))).toEqual([
      'Hel',
      'lo ',
      'wor',
      'ld',
    ]);
    expect(end.outcome).toMatchObject({
      text: 'Hello world',
      finishReason: 'stop',
      conversationId: start.conversationId,
      messageId: start.messageId,
    });
    const stored = await storedMessages(start.conversationId!);
    expect(stored.map((message) => message.content)).toEqual(['greet', 'Hello world']);
  });

  it('trims the oldest history to fit the context window, never opening on the answer', async () => {
    const conversation = await conversations.create(account.id, {
      userId: null,
      model: 'unit-small',
    });
    const words = (count: number, word: string) => Array(count).fill(word).join(' ');
    for (const word of ['alpha', 'beta', 'gamma']) {
      await chat.complete(
        request({ conversationId: conversation.id, messages: [user(words(25, word))] }),
      );
    }
    upstream().reset();
    await chat.complete(request({ conversationId: conversation.id, messages: [user('last')] }));
    const sent = sentMessages()[0]!;
    const history = (await storedMessages(conversation.id)).slice(0, 6);
    const all = [...history.map(({ role, content }) => ({ role, content })), user('last')];
    expect(sent.length).toBeLessThan(all.length);
    expect(sent).toEqual(all.slice(all.length - sent.length));
    expect(sent[0]!.role).toBe('user');
  });

  it('falls back to the next model when the upstream fails, and stores that model', async () => {
    upstream().enqueue({ kind: 'error', status: 500 });
    const outcome = await chat.complete(request({ messages: [user('are you there')] }));
    expect(outcome.model.name).toBe('unit-backup');
    expect(upstream().requests.map((sent) => (sent.body as { model: string }).model)).toEqual([
      'gpt-4o-mini',
      'gpt-4o',
    ]);
    const stored = await storedMessages(outcome.conversationId!);
    expect(stored[1]!.model).toBe('unit-backup');
  });

  it('fails a turn the upstream cannot answer, leaving no conversation behind', async () => {
    const before = await conversationCount();
    upstream().enqueue({ kind: 'error', status: 500 });
    const error = await appErrorOf(
      chat.complete(request({ model: 'unit-alone', messages: [user('hello?')] })),
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ code: 'upstream_error', status: 502, upstreamStatus: 500 });
    expect(await conversationCount()).toBe(before);
  });

  it('ends a stream cut mid-answer with an error event, storing nothing', async () => {
    const before = await conversationCount();
    upstream().enqueue({ kind: 'cut', afterChunks: 3 });
    const events = await collect(
      await chat.openStream(
        request({ model: 'unit-alone', messages: [user('one two three four five six')] }),
      ),
    );
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('start');
    expect(types.slice(1, -1).length).toBeGreaterThan(0);
    expect(types.slice(1, -1).every((type) => type === 'delta')).toBe(true);
    const last = events.at(-1)!;
    expect(last.type === 'error' && last.error.code).toBe('upstream_error');
    expect(await conversationCount()).toBe(before);
  });

  it('refuses a turn it cannot send, before calling the model', async () => {
    const notLast = await appErrorOf(
      chat.complete(request({ messages: [user('hi'), { role: 'assistant', content: 'hello' }] })),
    );
    expect(notLast).toMatchObject({ code: 'invalid_parameter', param: 'messages[1].role' });
    const tooLong = await appErrorOf(
      chat.complete(
        request({
          messages: [user('hi')],
          maxTokens: 257,
          maxTokensParam: 'max_completion_tokens',
        }),
      ),
    );
    expect(tooLong).toMatchObject({ code: 'invalid_parameter', param: 'max_completion_tokens' });
    const unknown = await appErrorOf(
      chat.complete(request({ conversationId: 'conv_missing', messages: [user('hi')] })),
    );
    expect(unknown).toMatchObject({ code: 'not_found', status: 404 });
    expect(upstream().requests).toHaveLength(0);
  });
});
