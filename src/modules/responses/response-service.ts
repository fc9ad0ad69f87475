// The Responses API over the chat service: a response is a chat turn. Stored responses (`store`,
// the default) keep their turns in a conversation, one per chain: the first response of a chain
// opens a conversation, and `previous_response_id` naming the chain's latest response continues
// that conversation, whose history the chat service replays (tool calls and their results
// included). Naming an earlier response forks: the history up to it is sent along, and stored in a
// new conversation (or not at all with `store: false`). Each stored response is a row of its own
// (the answer as returned, its input items), account-scoped, deleted with its conversation.
import { AppError, NotFoundError } from '../../errors/app-error.js';
import type { ChatTurn } from '../../models/spec.js';
import { capabilityNeeds } from '../../models/capabilities.js';
import type { ChatRequest, ChatService, ChatStreamEvent } from '../chat/chat-service.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import type { StoredMessage } from '../conversations/conversation.js';
import { turnOfStored } from '../../models/openai-messages.js';
import type { RoutingService } from '../routing/routing-service.js';
import type { ChatModelRequest } from '../routing/chat-model-resolver.js';
import {
  itemListPage,
  responseOfOutcome,
  ResponseEvents,
  type ItemListQuery,
  type ResponseObject,
} from './response-events.js';
import {
  withClientParams,
  type InputItemResource,
  type ResponseCall,
} from './responses-dialect.js';
import type { ResponsesRepository } from './responses.repository.js';

/** How many stored messages a fork (or a stateless continuation) takes as its history. */
const historyWindow = 200;

export interface ResponseServiceOptions {
  readonly chat: Pick<ChatService, 'complete'>;
  readonly conversations: Pick<ConversationService, 'get' | 'recentHistory' | 'messages'> & {
    findMessage(accountId: string, messageId: string): Promise<StoredMessage | undefined>;
  };
  readonly routing: Pick<RoutingService, 'resolveChatModel'>;
  readonly responses: ResponsesRepository;
  readonly now: () => number;
}

/** Who asks: the account, the key (recorded with the stored turns), the routing policies' view. */
export interface ResponseCaller {
  readonly accountId: string;
  readonly apiKeyId: string | null;
  readonly routing: ChatModelRequest['caller'];
}

/** A request ready for the chat service, with what storing its response needs. */
export interface PreparedResponse {
  readonly call: ResponseCall;
  readonly caller: ResponseCaller;
  readonly chatRequest: ChatRequest;
  /** Per turn of the chat request, the request field it came from (for error messages). */
  readonly paths: string[];
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
   * The chat request of a response: its chain's conversation continued, or the history up to the
   * previous response sent along, and its model routed (`auto`, routing policies).
   */
  async prepare(
    call: ResponseCall,
    caller: ResponseCaller,
    signal: AbortSignal,
  ): Promise<PreparedResponse> {
    const { conversations, responses, routing, now } = this.options;
    const createdAt = Math.floor(now() / 1000);
    let conversationId = call.conversationId;
    let history: ChatTurn[] = [];
    if (call.previousResponseId !== null) {
      const previous = await responses.find(caller.accountId, call.previousResponseId);
      if (previous === undefined) throw previousNotFound(call.previousResponseId);
      const conversation = await conversations.get(caller.accountId, previous.conversationId);
      const [latest] = await conversations.recentHistory(conversation, 1);
      if (call.store && latest?.id === previous.messageId) conversationId = conversation.id;
      else
        history = await this.historyUpTo(
          caller.accountId,
          previous.conversationId,
          previous.messageId,
        );
    }
    const messages = [...history, ...call.turns];
    const paths = [...history.map(() => 'previous_response_id'), ...call.paths];
    try {
      const routed = await routing.resolveChatModel({
        caller: caller.routing,
        requestedModel: call.requestedModel,
        messages,
        maxTokens: call.maxTokens,
        conversationId,
        signal,
        capabilities: capabilityNeeds(messages, call.params).map((need) => need.capability),
      });
      return {
        call,
        caller,
        paths,
        createdAt,
        chatRequest: {
          accountId: caller.accountId,
          apiKeyId: caller.apiKeyId,
          userId: call.userId,
          conversationId,
          persist: call.store,
          messages,
          model: routed.model,
          temperature: call.temperature,
          maxTokens: routed.maxTokens,
          maxTokensParam: 'max_output_tokens',
          params: call.params,
          signal,
        },
      };
    } catch (error) {
      throw withClientParams(error, paths);
    }
  }

  /** A whole answer as a Response, stored unless `store: false`. */
  async complete(prepared: PreparedResponse): Promise<ResponseObject> {
    let outcome;
    try {
      outcome = await this.options.chat.complete(prepared.chatRequest);
    } catch (error) {
      throw withClientParams(error, prepared.paths);
    }
    const response = responseOfOutcome(
      prepared.call.echo,
      prepared.createdAt,
      outcome,
      this.options.now,
    );
    if (outcome.conversationId !== null) {
      await this.store(prepared, response, outcome.conversationId, outcome.messageId);
    }
    return response;
  }

  /**
   * The Responses events of a streamed answer, stored (unless `store: false`) before its last
   * event. `onFailure` hears of each failure the stream reports (for the log).
   */
  async *events(
    prepared: PreparedResponse,
    answer: AsyncIterable<ChatStreamEvent>,
    onFailure: (error: AppError) => void,
  ): AsyncGenerator<Record<string, unknown>> {
    const state = new ResponseEvents(prepared.call.echo, prepared.createdAt, this.options.now);
    for await (const event of answer) {
      if (event.type === 'error') {
        const error = withClientParams(event.error, prepared.paths) as AppError;
        onFailure(error);
        yield* state.next({ type: 'error', error });
        return;
      }
      let out = state.next(event);
      if (event.type === 'end') {
        const { conversationId, messageId } = event.outcome;
        if (conversationId !== null) {
          try {
            await this.store(prepared, state.final!, conversationId, messageId);
          } catch (cause) {
            const error = new AppError(
              'internal_error',
              'The response was answered but could not be stored. The failure was logged.',
              { cause },
            );
            onFailure(error);
            // Its last event (`response.completed`) is not sent: the response failed.
            out = [...out.slice(0, -1), ...state.next({ type: 'error', error })];
          }
        }
        yield* out;
        return;
      }
      yield* out;
    }
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

  private async store(
    prepared: PreparedResponse,
    response: ResponseObject,
    conversationId: string,
    messageId: string,
  ): Promise<void> {
    await this.options.responses.insert({
      id: response.id,
      accountId: prepared.caller.accountId,
      conversationId,
      messageId,
      previousResponseId: prepared.call.previousResponseId,
      model: response.model,
      status: response.status,
      createdAt: new Date(prepared.createdAt * 1000).toISOString(),
      body: JSON.stringify(response),
      inputItems: JSON.stringify(prepared.call.inputItems),
    });
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
