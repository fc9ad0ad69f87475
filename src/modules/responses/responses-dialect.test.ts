// The Responses dialect's stream, on every dialect, with a real chat turn from the fake upstream: a
// stored response is written before its last event (and reads back as that event's response), a
// `previous_response_id` naming the chain's latest response continues its conversation, and a
// response that cannot be stored ends `response.failed` instead of `response.completed`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects, type DialectUnderTest } from '../../../test/support/dialects.js';
import { TestClock } from '../../../test/support/unit/clock.js';
import { appErrorOf } from '../../../test/support/unit/errors.js';
import {
  fakeUpstreamForFile,
  openChatStack,
  type ChatStack,
} from '../../../test/support/unit/models.js';
import { insertAccount } from '../../../test/support/unit/storage.js';
import type { AppError } from '../../errors/app-error.js';
import type { Account } from '../accounts/account.js';
import type { Principal } from '../accounts/authenticator.js';
import { ChatService, type ChatStreamEvent } from '../chat/chat-service.js';
import type { ServerSentEvent, TurnContext } from '../chat/turn-dialect.js';
import { ResponseService, type ResponseTurn } from './response-service.js';
import { responsesDialect } from './responses-dialect.js';
import type { ResponseRequestBody } from './responses-request.js';
import { ResponsesRepository } from './responses.repository.js';

const upstream = fakeUpstreamForFile();

const clock = new TestClock();

/** One dialect's storage, the chat service over the fake upstream, the responses, an account. */
interface Fixture {
  readonly stack: ChatStack;
  readonly chat: ChatService;
  readonly responses: ResponseService;
  readonly account: Account;
}

async function openFixture(dialect: DialectUnderTest): Promise<Fixture> {
  const stack = await openChatStack(dialect, upstream(), clock);
  return {
    stack,
    chat: new ChatService({ models: stack.models, conversations: stack.conversations }),
    responses: new ResponseService({
      conversations: stack.conversations,
      responses: new ResponsesRepository(stack.unit.storage.db),
    }),
    account: await insertAccount(stack.unit.storage),
  };
}

function contextOf({ account }: Fixture): TurnContext {
  const caller: Principal = {
    keyId: 'key_1',
    accountId: account.id,
    accountKind: 'member',
    scopes: ['chat:write'],
    tier: 'default',
    accountTier: null,
  };
  return { route: 'POST /v1/responses', requestId: 'req_1', caller, headers: {} };
}

/** The turn a body asks for, continued from its chain as the turn handler does. */
async function turnOf(fixture: Fixture, body: ResponseRequestBody): Promise<ResponseTurn> {
  const dialect = responsesDialect(fixture.responses, clock.now);
  const read = dialect.callOf(body, contextOf(fixture));
  return dialect.prepare!(read, contextOf(fixture), new AbortController().signal);
}

/** The dialect's events for `events`, up to the batch that ends the stream. */
async function streamed(
  fixture: Fixture,
  turn: ResponseTurn,
  events: AsyncIterable<ChatStreamEvent> | Iterable<ChatStreamEvent>,
) {
  const failures: AppError[] = [];
  const mapping = responsesDialect(fixture.responses, clock.now).stream(turn, (error) => {
    failures.push(error);
  });
  const out: ServerSentEvent[] = [];
  for await (const event of events) {
    const batch = await mapping.next(event);
    out.push(...batch.events);
    if (batch.last) break;
  }
  return { events: out, failures };
}

/** The chat service's stream of a turn, as the turn handler opens it. */
function chatStream({ chat, account }: Fixture, turn: ResponseTurn) {
  return chat.openStream({
    accountId: account.id,
    apiKeyId: null,
    userId: turn.userId,
    conversationId: turn.conversationId,
    persist: turn.persist,
    messages: turn.messages,
    model: undefined,
    temperature: undefined,
    maxTokens: undefined,
    signal: new AbortController().signal,
  });
}

const data = (event: ServerSentEvent) => event.data as Record<string, unknown>;

describe.each(allDialects)('the Responses dialect on $name', (dialect) => {
  let fixture: Fixture;
  beforeAll(async () => {
    fixture = await openFixture(dialect);
  });
  afterAll(() => fixture.stack.close());

  it('stores a streamed response before its last event, which it reads back as', async () => {
    upstream().enqueue({ kind: 'reply', chunks: ['Hel', 'lo'] });
    const turn = await turnOf(fixture, { input: 'Hi', stream: true });
    const { events, failures } = await streamed(fixture, turn, await chatStream(fixture, turn));
    expect(failures).toEqual([]);
    expect(events.every((event) => event.event === data(event).type)).toBe(true);
    const last = data(events.at(-1)!);
    expect(last.type).toBe('response.completed');
    const response = last.response as { id: string; conversation: { id: string } };
    expect(JSON.parse(await fixture.responses.get(fixture.account.id, response.id))).toEqual(
      response,
    );

    // The chain's latest response continues its conversation (no history sent along).
    upstream().enqueue({ kind: 'reply', chunks: ['Again'] });
    const next = await turnOf(fixture, {
      input: 'More',
      stream: true,
      previous_response_id: response.id,
    });
    expect(next.conversationId).toBe(response.conversation.id);
    expect(next.messages).toEqual([{ role: 'user', content: 'More' }]);
    const continued = await streamed(fixture, next, await chatStream(fixture, next));
    expect(data(continued.events.at(-1)!).type).toBe('response.completed');
  });

  it('ends failed, not completed, when the answered response cannot be stored', async () => {
    const turn = await turnOf(fixture, { input: 'Hi', stream: true });
    const model = fixture.stack.models.definitionOf('unit-chat');
    // A conversation that does not exist: the database refuses the response's row.
    function* answered(): Generator<ChatStreamEvent> {
      yield { type: 'start', conversationId: 'conv_missing', messageId: 'msg_lost', model };
      yield { type: 'delta', text: 'Hello' };
      yield {
        type: 'end',
        outcome: {
          text: 'Hello',
          finishReason: 'stop',
          usage: { promptTokens: 3, completionTokens: 1 },
          model,
          conversationId: 'conv_missing',
          messageId: 'msg_lost',
          latencyMs: 1,
        },
      };
    }
    const { events, failures } = await streamed(fixture, turn, answered());
    expect(failures.map((failure) => failure.code)).toEqual(['internal_error']);
    const types = events.map((event) => data(event).type);
    expect(types).not.toContain('response.completed');
    expect(types.slice(-2)).toEqual(['error', 'response.failed']);
    expect((await appErrorOf(fixture.responses.get(fixture.account.id, 'resp_lost'))).status).toBe(
      404,
    );
  });
});
