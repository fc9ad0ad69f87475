// The contract's own dialect (POST /v1/chat): a body into a stored turn, the outcome into the
// contract's answer, and each stream event into the contract's events (start, delta and
// tool_call…, end | error). OpenAI's content parts, tool calls, tool results, tools, tool_choice
// and response_format are its extensions. The HTTP side is chat.routes.ts.
import {
  maxSchemaText,
  turnOfMessage,
  type MessageInput,
  type ToolFieldsInput,
} from '../../models/openai-messages.js';
import { paramsOf } from './chat-messages.js';
import type { ChatOutcome, ChatStreamEvent } from './chat-service.js';
import type { TurnCall, TurnDialect } from './turn-dialect.js';

/** A /v1/chat body, as chat.schemas.ts has checked it. */
export interface ChatTurnBody extends ToolFieldsInput {
  readonly messages: readonly MessageInput[];
  readonly user_id: string;
  readonly conversation_id?: string | undefined;
  readonly model?: string | undefined;
  readonly stream?: boolean | undefined;
  readonly temperature?: number | undefined;
  readonly max_tokens?: number | undefined;
}

/** One event of the contract's stream. */
export type ContractEvent = Readonly<Record<string, unknown>>;

function usageJson(outcome: ChatOutcome) {
  return {
    prompt_tokens: outcome.usage.promptTokens,
    completion_tokens: outcome.usage.completionTokens,
    total_tokens: outcome.usage.promptTokens + outcome.usage.completionTokens,
  };
}

/** `tool_calls` beside the answer's `message`, when the model made any. */
function toolCallsJson(outcome: ChatOutcome) {
  return outcome.toolCalls === undefined || outcome.toolCalls.length === 0
    ? {}
    : { tool_calls: outcome.toolCalls };
}

/** The turn a body asks for: always stored, in its conversation or a new one for `user_id`. */
export function chatCallOf(body: ChatTurnBody): TurnCall {
  const messages = body.messages.map(turnOfMessage);
  return {
    messages,
    params: paramsOf(body, maxSchemaText),
    requestedModel: body.model,
    maxTokens: body.max_tokens,
    temperature: body.temperature,
    stream: body.stream === true,
    persist: true,
    userId: body.user_id,
    conversationId: body.conversation_id ?? null,
  };
}

/** The contract's answer to a whole turn. */
export function chatAnswerBody(outcome: ChatOutcome) {
  return {
    message: outcome.text,
    ...toolCallsJson(outcome),
    conversation_id: outcome.conversationId ?? '',
    message_id: outcome.messageId,
    model: outcome.model.name,
    usage: usageJson(outcome),
    finish_reason: outcome.finishReason,
    latency_ms: outcome.latencyMs,
  };
}

/** The contract's event for one stream event (none for a refusal); an error is the last. */
export function contractEventOf(event: ChatStreamEvent): ContractEvent | null {
  switch (event.type) {
    case 'start':
      return {
        type: 'start',
        conversation_id: event.conversationId,
        message_id: event.messageId,
        model: event.model.name,
      };
    case 'delta':
      return { type: 'delta', content: event.text };
    case 'tool-call':
      // A piece of a tool call as OpenAI streams it: the first names its index, id and
      // function; later ones add to its arguments. `end` carries the calls whole.
      return {
        type: 'tool_call',
        index: event.index,
        ...(event.id === undefined ? {} : { id: event.id }),
        ...(event.name === undefined ? {} : { name: event.name }),
        arguments: event.arguments,
      };
    case 'end':
      return {
        type: 'end',
        message: event.outcome.text,
        ...toolCallsJson(event.outcome),
        conversation_id: event.outcome.conversationId,
        message_id: event.outcome.messageId,
        model: event.outcome.model.name,
        usage: usageJson(event.outcome),
        finish_reason: event.outcome.finishReason,
        latency_ms: event.outcome.latencyMs,
      };
    case 'refusal':
      // Not shown by /v1/chat yet (a question for the message model's refusals).
      return null;
    case 'relayed':
      // Only a Chat Completions stream asks for the upstream's own chunks.
      return null;
    case 'error':
      return { type: 'error', error: event.error.toBody().error };
  }
}

const noEvents = { events: [], last: false } as const;

/** POST /v1/chat as a dialect of the turn handler: `data:` events, no end marker. */
export const chatDialect: TurnDialect<ChatTurnBody, TurnCall> = {
  callOf: (body) => chatCallOf(body),
  answer: (outcome) => ({ body: chatAnswerBody(outcome) }),
  stream: () => ({
    next(event) {
      const data = contractEventOf(event);
      return data === null ? noEvents : { events: [{ data }], last: event.type === 'error' };
    },
  }),
};
