// What the lean OpenAI-compatible path (./openai-compatible-chat-model.ts) writes and reads on the
// wire: the Chat Completions request body, and a whole chat.completion answer's text, finish
// reason and usage, its shape checked by hand. Shared with the stream reader
// (./openai-compatible-stream.ts): the pieces of an answer a chunk carries too.
import { JSONParseError, TypeValidationError } from '@ai-sdk/provider';
import type { FinishReason, GenerationRequest } from '../spec.js';

/** OpenAI's finish reasons as the service names them (a refusal is a content filter). */
export function finishReasonOf(raw: unknown, refused: boolean): FinishReason {
  if (raw === 'stop') return refused ? 'content_filter' : 'stop';
  if (raw === 'length') return 'length';
  if (raw === 'content_filter') return 'content_filter';
  return 'other';
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The text of a message or delta `content`: a string, or the text parts of an array. */
export function contentText(content: unknown): string | undefined {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  let text = '';
  for (const part of content as unknown[]) {
    if (!isObject(part) || typeof part.type !== 'string') return undefined;
    if (part.type === 'text' && typeof part.text === 'string') text += part.text;
  }
  return text;
}

function optionalNumber(value: unknown): number | undefined | null {
  if (value === null || value === undefined) return undefined;
  return typeof value === 'number' ? value : null;
}

export interface UsageCounts {
  promptTokens: number | undefined;
  completionTokens: number | undefined;
}

/** `usage` as sent, or null when it is present but not in OpenAI's shape. */
export function usageOf(value: unknown): UsageCounts | null {
  if (value === null || value === undefined) {
    return { promptTokens: undefined, completionTokens: undefined };
  }
  if (!isObject(value)) return null;
  const promptTokens = optionalNumber(value.prompt_tokens);
  const completionTokens = optionalNumber(value.completion_tokens);
  if (promptTokens === null || completionTokens === null) return null;
  return { promptTokens, completionTokens };
}

export function invalidShape(value: unknown, message: string): TypeValidationError {
  return new TypeValidationError({ value, cause: new Error(message) });
}

/** The Chat Completions request for `model` (the upstream's id); a stream asks for its usage. */
export function requestBody(model: string, request: GenerationRequest, stream: boolean): string {
  const messages = request.messages.map((turn) => ({ role: turn.role, content: turn.content }));
  return JSON.stringify({
    model,
    max_tokens: request.maxTokens,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    messages,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}

/** What a whole answer said; the usage the upstream left out is counted by the caller. */
export interface WholeAnswer {
  text: string;
  finishReason: FinishReason;
  usage: UsageCounts;
}

/**
 * A chat.completion's first choice. `unreadable` wraps why a 2xx body cannot be read (not JSON,
 * not the shape) into the error to raise; an answer without choices is a plain error.
 */
export function parseCompletion(raw: string, unreadable: (cause: Error) => Error): WholeAnswer {
  let answer: unknown;
  try {
    answer = JSON.parse(raw);
  } catch (cause) {
    throw unreadable(new JSONParseError({ text: raw, cause }));
  }
  const choices = isObject(answer) ? answer.choices : undefined;
  const usage = isObject(answer) ? usageOf(answer.usage) : null;
  if (!Array.isArray(choices) || usage === null) {
    throw unreadable(invalidShape(answer, 'not a chat.completion'));
  }
  const choice: unknown = choices[0];
  if (choice === undefined) throw new Error('Response did not contain any choices.');
  const message = isObject(choice) ? choice.message : undefined;
  const content = isObject(message) ? contentText(message.content) : undefined;
  const refusal = isObject(message) ? message.refusal : undefined;
  if (content === undefined || !isObject(choice)) {
    throw unreadable(invalidShape(answer, 'not a chat.completion'));
  }
  const refused = typeof refusal === 'string' && refusal.length > 0;
  return {
    text: refused ? content + refusal : content,
    finishReason: finishReasonOf(choice.finish_reason, refused),
    usage,
  };
}
