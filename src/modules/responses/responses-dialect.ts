// OpenAI's Responses API as a dialect of the chat module's turn handler. A request body becomes the
// chat turn it asks for (responses-call.ts), continued from its `previous_response_id` chain
// before routing (response-service.ts); the chat service's errors are named by the client's fields
// (responses-errors.ts); the answer becomes a `Response` or its events (response-events.ts), and
// is stored unless `store: false` — before the stream's last event. The routes are
// responses.routes.ts.
import { AppError } from '../../errors/app-error.js';
import type { ChatStreamEvent } from '../chat/chat-service.js';
import type { EventBatch, EventMapping, TurnDialect } from '../chat/turn-dialect.js';
import { ResponseEvents, responseOfOutcome } from './response-events.js';
import type { ResponseService, ResponseTurn } from './response-service.js';
import { responseCallOf } from './responses-call.js';
import { withClientParams } from './responses-errors.js';
import type { ResponseRequestBody } from './responses-request.js';

/** One event of the Responses stream: its `type`, `sequence_number` and fields. */
type ResponseEvent = Record<string, unknown>;

/** Events as OpenAI streams them: `event: <type>` and the event whole as `data:`. */
const named = (events: readonly ResponseEvent[]) =>
  events.map((data) => ({ event: String(data.type), data }));

/**
 * A streamed response's events, stored (unless `store: false`) before its last one: a response
 * that cannot be stored ends failed instead of completed.
 */
class StoredResponseEvents implements EventMapping {
  private readonly state: ResponseEvents;

  constructor(
    private readonly responses: ResponseService,
    private readonly turn: ResponseTurn,
    private readonly failed: (error: AppError) => void,
    now: () => number,
  ) {
    this.state = new ResponseEvents(turn.echo, turn.createdAt, now);
  }

  next(event: ChatStreamEvent): EventBatch | Promise<EventBatch> {
    const events = this.state.next(event);
    if (event.type !== 'end') return { events: named(events), last: event.type === 'error' };
    const { conversationId, messageId } = event.outcome;
    if (conversationId === null) return { events: named(events), last: true };
    return this.stored(events, conversationId, messageId);
  }

  private async stored(
    events: ResponseEvent[],
    conversationId: string,
    messageId: string,
  ): Promise<EventBatch> {
    try {
      await this.responses.store(this.turn, this.state.final!, conversationId, messageId);
      return { events: named(events), last: true };
    } catch (cause) {
      const error = new AppError(
        'internal_error',
        'The response was answered but could not be stored. The failure was logged.',
        { cause },
      );
      this.failed(error);
      // Its last event (`response.completed`) is not sent: the response failed.
      const failure = this.state.next({ type: 'error', error });
      return { events: named([...events.slice(0, -1), ...failure]), last: true };
    }
  }
}

/** The Responses dialect: a `Response`, or OpenAI's events named by their type. */
export function responsesDialect(
  responses: ResponseService,
  now: () => number,
): TurnDialect<ResponseRequestBody, ResponseTurn> {
  return {
    callOf: (body, context) => ({
      ...responseCallOf(body),
      accountId: context.caller.accountId,
      createdAt: Math.floor(now() / 1000),
    }),
    prepare: (turn) => responses.continued(turn),
    clientError: (error, turn) => withClientParams(error, turn.paths) as AppError,
    async answer(outcome, turn) {
      const response = responseOfOutcome(turn.echo, turn.createdAt, outcome, now);
      if (outcome.conversationId !== null) {
        await responses.store(turn, response, outcome.conversationId, outcome.messageId);
      }
      return { body: JSON.stringify(response) };
    },
    stream: (turn, failed) => new StoredResponseEvents(responses, turn, failed, now),
  };
}
