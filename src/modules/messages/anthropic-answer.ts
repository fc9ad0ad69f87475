// A whole answer as Anthropic's message object: its text and tool_use blocks, its stop reason and
// usage, and the conversation's ids when the turn was stored.
import type { ChatOutcome } from '../chat/chat-service.js';
import { anthropicStopReason, anthropicUsage } from './anthropic-finish.js';
import type { Json } from './anthropic-request.js';

/** A call's input as Anthropic's clients read it: the arguments' JSON object ({} if not one). */
export function toolInput(argumentsJson: string): Json {
  try {
    const input: unknown = JSON.parse(argumentsJson === '' ? '{}' : argumentsJson);
    return typeof input === 'object' && input !== null && !Array.isArray(input)
      ? (input as Json)
      : {};
  } catch {
    return {};
  }
}

/** The answer's text: an OpenAI refusal reads as text (Anthropic's stop reason says so). */
const answerText = (outcome: Pick<ChatOutcome, 'text' | 'refusal'>) =>
  outcome.text === '' ? (outcome.refusal ?? '') : outcome.text;

/** The conversation's ids, added to an answer that was stored (nothing for a stateless one). */
export function storedIds(conversationId: string | null, messageId: string) {
  return conversationId === null ? {} : { conversation_id: conversationId, message_id: messageId };
}

/** A whole answer as Anthropic's message object. */
export function messageBody(outcome: ChatOutcome) {
  const toolCalls = outcome.toolCalls ?? [];
  const text = answerText(outcome);
  return {
    id: outcome.messageId,
    type: 'message' as const,
    role: 'assistant' as const,
    model: outcome.model.name,
    content: [
      ...(text === '' && toolCalls.length > 0 ? [] : [{ type: 'text' as const, text }]),
      ...toolCalls.map((call) => ({
        type: 'tool_use' as const,
        id: call.id,
        name: call.function.name,
        input: toolInput(call.function.arguments),
      })),
    ],
    stop_reason: anthropicStopReason(outcome.finishReason),
    // OpenAI-compatible models do not say which stop sequence ended the answer.
    stop_sequence: null,
    usage: anthropicUsage(outcome.usage),
    ...storedIds(outcome.conversationId, outcome.messageId),
  };
}
