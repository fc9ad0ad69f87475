// The Responses API over the chat service: a response is a chat turn. Stored responses (`store`,
// the default) keep their turns in a conversation, one per chain: the first response of a chain
// opens a conversation, and `previous_response_id` naming the chain's latest response continues
// that conversation, whose history the chat service replays (tool calls and their results
// included). Naming an earlier response forks: the history up to it is sent along, and stored in a
// new conversation (or not at all with `store: false`). Each stored response is a row of its own
// (the answer as returned, its input items), account-scoped, deleted with its conversation.
import { AppError, NotFoundError } from '../../errors/app-error.js';
import type { ChatTurn } from '../../models/spec.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import type { StoredMessage } from '../conversations/conversation.js';
import { turnOfStored } from '../../models/openai-messages.js';
import { itemListPage, type ItemListQuery } from './input-item-list.js';
import type { ResponseObject } from './response-object.js';
import type { InputItemResource, ResponseCall } from './responses-request.js';
import type { ResponsesRepository } from './responses.repository.js';

/** How many stored messages a fork (or a stateless continuation) takes as its history. */
const historyWindow = 200;

export interface ResponseServiceOptions {
  readonly conversations: Pick<ConversationService, 'get' | 'recentHistory' | 'messages'> & {
    findMessage(accountId: string, messageId: string): Promise<StoredMessage | undefined>;
  };
  readonly responses: ResponsesRepository;
}

/** A response's turn: its call, whose account asks, and when it was created. */
export interface ResponseTurn extends ResponseCall {
  readonly accountId: string;
  /** Unix seconds. */
  readonly createdAt: number;
}

function previousNotFound(id: string): AppError {
  return new AppError(
    'previous_response_not_found',
    `Previous response with id '${id}' not found.`,
    {
      param: 'previous_response_id',
    },
  );
}

export class ResponseService {
  constructor(private readonly options: ResponseServiceOptions) {}

  /**
   * The turn continued from its chain: the chain's conversation when `previous_response_id` names
   * its latest response (and the turn is stored), else the history up to that response sent along.
   */
  async continued(turn: ResponseTurn): Promise<ResponseTurn> {
    if (turn.previousResponseId === null) return turn;
    const { conversations, responses } = this.options;
    const previous = await responses.find(turn.accountId, turn.previousResponseId);
    if (previous === undefined) throw previousNotFound(turn.previousResponseId);
    const conversation = await conversations.get(turn.accountId, previous.conversationId);
    const [latest] = await conversations.recentHistory(conversation, 1);
    if (turn.persist && latest?.id === previous.messageId) {
      return { ...turn, conversationId: conversation.id };
    }
    const history = await this.historyUpTo(
      turn.accountId,
      previous.conversationId,
      previous.messageId,
    );
    return {
      ...turn,
      messages: [...history, ...turn.messages],
      paths: [...history.map(() => 'previous_response_id'), ...turn.paths],
    };
  }

  /** Keeps an answered response (its body as returned, its input items) for reading and chains. */
  async store(
    turn: ResponseTurn,
    response: ResponseObject,
    conversationId: string,
    messageId: string,
  ): Promise<void> {
    await this.options.responses.insert({
      id: response.id,
      accountId: turn.accountId,
      conversationId,
      messageId,
      previousResponseId: turn.previousResponseId,
      model: response.model,
      status: response.status,
      createdAt: new Date(turn.createdAt * 1000).toISOString(),
      body: JSON.stringify(response),
      inputItems: JSON.stringify(turn.inputItems),
    });
  }

  /** The stored Response object, as JSON text (as it was returned). */
  async get(accountId: string, id: string): Promise<string> {
    const stored = await this.options.responses.find(accountId, id);
    if (stored === undefined) throw new NotFoundError('Response', id);
    return stored.body;
  }

  /**
   * Deletes the stored response: it can no longer be read or continued. The turns stay in its
   * conversation, which `DELETE /v1/conversations/{id}` deletes (with its responses).
   */
  async delete(accountId: string, id: string) {
    if (!(await this.options.responses.delete(accountId, id))) {
      throw new NotFoundError('Response', id);
    }
    return { id, object: 'response.deleted' as const, deleted: true as const };
  }

  /** A page of the stored response's input items. */
  async inputItems(accountId: string, id: string, query: ItemListQuery) {
    const stored = await this.options.responses.find(accountId, id);
    if (stored === undefined) throw new NotFoundError('Response', id);
    return itemListPage(JSON.parse(stored.inputItems) as InputItemResource[], query);
  }

  /**
   * A conversation's turns up to and including the message `messageId` (the latest
   * `historyWindow` of them), opening on a user turn as a context must.
   */
  private async historyUpTo(
    accountId: string,
    conversationId: string,
    messageId: string,
  ): Promise<ChatTurn[]> {
    const { conversations } = this.options;
    const answer = await conversations.findMessage(accountId, messageId);
    if (answer === undefined) return [];
    const offset = Math.max(0, answer.seq - historyWindow);
    const { messages } = await conversations.messages(accountId, conversationId, {
      limit: answer.seq - offset,
      offset,
      order: 'asc',
    });
    const turns = messages.filter((message) => message.role !== 'system').map(turnOfStored);
    while (turns.length > 0 && (turns[0]!.role === 'assistant' || turns[0]!.role === 'tool')) {
      turns.shift();
    }
    return turns;
  }
}
