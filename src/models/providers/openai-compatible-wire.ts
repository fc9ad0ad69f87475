// What the lean OpenAI path (./openai-compatible-chat-model.ts) writes and reads on the wire: the
// Chat Completions request body — the caller's parameters passed through as they came, with the
// model id, the turns, the token limit and the stream options written by the platform — and a
// whole chat.completion answer (text, tool calls, refusal, logprobs, finish reason, usage with its
// details, system fingerprint), its shape checked by hand. Shared with the stream reader
// (./openai-compatible-stream.ts): the pieces of an answer a chunk carries too.
import { JSONParseError, TypeValidationError } from '@ai-sdk/provider';
import type { ChatTurn, FinishReason, GenerationRequest, ToolCall } from '../spec.js';

/** OpenAI's finish reasons as the service names them (`function_call` is the legacy tool call). */
export function finishReasonOf(raw: unknown): FinishReason {
  switch (raw) {
    case 'stop':
    case 'length':
    case 'content_filter':
    case 'tool_calls':
      return raw;
    case 'function_call':
      return 'tool_calls';
    default:
      return 'other';
  }
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

/** A count inside a `*_tokens_details` object, when the upstream reported one. */
function detail(details: unknown, name: string): number | undefined {
  if (!isObject(details)) return undefined;
  const value = details[name];
  return typeof value === 'number' ? value : undefined;
}

export interface UsageCounts {
  promptTokens: number | undefined;
  completionTokens: number | undefined;
  cachedTokens: number | undefined;
  reasoningTokens: number | undefined;
}

export const noUsage: UsageCounts = {
  promptTokens: undefined,
  completionTokens: undefined,
  cachedTokens: undefined,
  reasoningTokens: undefined,
};

/**
 * `usage` as sent, or null when it is present but not in OpenAI's shape. The details (cached and
 * reasoning tokens) are extras some servers send as null or leave out: read when they are numbers.
 */
export function usageOf(value: unknown): UsageCounts | null {
  if (value === null || value === undefined) return noUsage;
  if (!isObject(value)) return null;
  const promptTokens = optionalNumber(value.prompt_tokens);
  const completionTokens = optionalNumber(value.completion_tokens);
  if (promptTokens === null || completionTokens === null) return null;
  return {
    promptTokens,
    completionTokens,
    cachedTokens: detail(value.prompt_tokens_details, 'cached_tokens'),
    reasoningTokens: detail(value.completion_tokens_details, 'reasoning_tokens'),
  };
}

export function invalidShape(value: unknown, message: string): TypeValidationError {
  return new TypeValidationError({ value, cause: new Error(message) });
}

/** A string field that may be absent (undefined, or null as some servers send it); null: not a string. */
export function optionalString(value: unknown): string | undefined | null {
  if (value === null || value === undefined) return undefined;
  return typeof value === 'string' ? value : null;
}

/** One turn as OpenAI's `messages[]` entry. */
function wireMessage(turn: ChatTurn): Record<string, unknown> {
  const { parts, toolCalls, toolCallId, name } = turn;
  // The common turn: text only.
  if (
    parts === undefined &&
    toolCalls === undefined &&
    toolCallId === undefined &&
    name === undefined
  ) {
    return { role: turn.role, content: turn.content };
  }
  const calls = toolCalls !== undefined && toolCalls.length > 0 ? toolCalls : undefined;
  const message: Record<string, unknown> = {
    role: turn.role,
    // An assistant turn that only calls tools has no content (null, as OpenAI writes it).
    content: parts ?? (calls !== undefined && turn.content === '' ? null : turn.content),
  };
  if (turn.role === 'tool') message.tool_call_id = toolCallId;
  if (calls !== undefined) message.tool_calls = calls;
  if (name !== undefined) message.name = name;
  return message;
}

/** How the request is written for one upstream. */
export interface BodyOptions {
  readonly stream: boolean;
  /**
   * The field that carries the token limit: OpenAI's reasoning models refuse `max_tokens`, and
   * OpenAI takes `max_completion_tokens` for every model; other servers know `max_tokens`.
   */
  readonly maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Whether a response schema is sent as such (else JSON mode). */
  readonly structuredOutputs: boolean;
}

/**
 * The Chat Completions request for `model` (the upstream's id): every parameter of
 * `request.params` as it came (fields the platform does not know included), then what the
 * platform writes itself — the model, the turns, the token limit, the temperature when set, the
 * response format a response schema asks for, and for a stream `stream_options.include_usage`
 * (merged into the caller's stream options). One JSON.stringify, nothing copied but the turns.
 */
export function requestBody(
  model: string,
  request: GenerationRequest,
  options: BodyOptions,
): string {
  const { params } = request;
  const body: Record<string, unknown> = {
    ...params,
    model,
    messages: request.messages.map(wireMessage),
  };
  if (options.maxTokensField === 'max_tokens') {
    body.max_tokens = request.maxTokens;
    // One limit only: servers that know both refuse a request carrying both.
    if (body.max_completion_tokens !== undefined) body.max_completion_tokens = undefined;
  } else {
    body.max_completion_tokens = request.maxTokens;
    if (body.max_tokens !== undefined) body.max_tokens = undefined;
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.responseSchema !== undefined) {
    body.response_format = options.structuredOutputs
      ? {
          type: 'json_schema',
          json_schema: { name: 'result', schema: request.responseSchema, strict: true },
        }
      : { type: 'json_object' };
  }
  if (options.stream) {
    body.stream = true;
    const asked = params?.stream_options;
    body.stream_options = isObject(asked)
      ? { ...asked, include_usage: true }
      : { include_usage: true };
  } else if (body.stream !== undefined || body.stream_options !== undefined) {
    // A whole answer is read: OpenAI refuses stream options without a stream.
    body.stream = undefined;
    body.stream_options = undefined;
  }
  return JSON.stringify(body);
}

/** What a whole answer said; the usage the upstream left out is counted by the caller. */
export interface WholeAnswer {
  text: string;
  finishReason: FinishReason;
  usage: UsageCounts;
  toolCalls: ToolCall[] | undefined;
  refusal: string | undefined;
  logprobs: unknown;
  systemFingerprint: string | undefined;
}

/** A message's `tool_calls`, in the service's shape; null when they are not in OpenAI's. */
function toolCallsOf(value: unknown): ToolCall[] | undefined | null {
  if (value === null || value === undefined) return undefined;
  if (!Array.isArray(value)) return null;
  if (value.length === 0) return undefined;
  const calls: ToolCall[] = [];
  for (const [index, call] of (value as unknown[]).entries()) {
    if (!isObject(call) || !isObject(call.function)) return null;
    const id = optionalString(call.id);
    const { name, arguments: args } = call.function;
    if (id === null || typeof name !== 'string') return null;
    // Some servers write the arguments as an object rather than JSON text.
    const text = typeof args === 'string' ? args : isObject(args) ? JSON.stringify(args) : null;
    if (text === null) return null;
    calls.push({
      id: id ?? `call_${index}`,
      type: 'function',
      function: { name, arguments: text },
    });
  }
  return calls;
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
  if (!isObject(choice) || !isObject(message)) {
    throw unreadable(invalidShape(answer, 'not a chat.completion'));
  }
  const content = contentText(message.content);
  const refusal = optionalString(message.refusal);
  const toolCalls = toolCallsOf(message.tool_calls);
  const fingerprint = optionalString((answer as Record<string, unknown>).system_fingerprint);
  if (content === undefined || refusal === null || toolCalls === null || fingerprint === null) {
    throw unreadable(invalidShape(answer, 'not a chat.completion'));
  }
  return {
    text: content,
    finishReason: finishReasonOf(choice.finish_reason),
    usage,
    toolCalls,
    refusal: refusal === '' ? undefined : refusal,
    logprobs: choice.logprobs ?? undefined,
    systemFingerprint: fingerprint,
  };
}
