// OpenAI's message shape as clients send it (text or content parts, assistant tool calls, tool
// results) read into the model interface's turns, each role's rules checked, and the tool fields
// of a request checked against each other. Shared by every dialect that takes OpenAI's messages
// (/v1/chat/completions, /v1/chat).
import { InvalidParameterError, MissingParameterError } from '../errors/app-error.js';
import type { ChatParams, ChatTurn, ContentPart, TokenUsage, ToolCall } from './spec.js';

/** A message in OpenAI's shape, as the routes' schemas have checked it. */
/** Longest JSON text of one client JSON Schema (a tool's `parameters`, a `json_schema.schema`). */
export const maxSchemaText = 100_000;

/** A content part as clients send it: OpenAI's parts, and an assistant's refusal part. */
export type MessagePart = ContentPart | { readonly type: 'refusal'; readonly refusal: string };

export interface MessageInput {
  /** `developer` (OpenAI's newer name) reads as `system`. */
  readonly role: string;
  readonly content?: string | readonly MessagePart[] | null | undefined;
  readonly name?: string | undefined;
  readonly tool_calls?: readonly ToolCall[] | undefined;
  readonly tool_call_id?: string | undefined;
}

/**
 * The turn a message is, its role's rules checked (each refusal a 400 naming the field): a tool
 * message answers a call (`tool_call_id`); only an assistant message carries `tool_calls` or
 * may leave out its content; only a user message holds parts beyond text.
 * Content parts that are all text become the joined text, as a string content would be; an
 * assistant's refusal parts read as its text. Another role is a 400 naming it.
 */
export function turnOfMessage(message: MessageInput, index: number): ChatTurn {
  const at = `messages[${index}]`;
  const role = message.role === 'developer' ? 'system' : message.role;
  if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'tool') {
    throw new InvalidParameterError(
      `${at}.role`,
      `Role '${message.role}' is not supported; use system, developer, user, assistant or tool.`,
    );
  }
  if (role === 'tool' && message.tool_call_id === undefined) {
    throw new MissingParameterError(
      `${at}.tool_call_id`,
      `'${at}.tool_call_id' is required on a 'tool' message: the id of the tool call it answers.`,
    );
  }
  if (role !== 'tool' && message.tool_call_id !== undefined) {
    throw new InvalidParameterError(
      `${at}.tool_call_id`,
      `'${at}.tool_call_id' belongs to 'tool' messages only.`,
    );
  }
  if (role !== 'assistant' && message.tool_calls !== undefined) {
    throw new InvalidParameterError(
      `${at}.tool_calls`,
      `'${at}.tool_calls' belongs to 'assistant' messages only.`,
    );
  }
  const content = message.content ?? null;
  // An assistant's content may be null or absent (OpenAI's own answers to a tool call have none,
  // and clients echo such answers back); any other role's is required.
  if (content === null && role !== 'assistant') {
    throw new MissingParameterError(
      `${at}.content`,
      `'${at}.content' is required (only an assistant message may leave it out).`,
    );
  }
  let text = '';
  let parts: readonly ContentPart[] | undefined;
  if (typeof content === 'string') {
    text = content;
  } else if (content !== null) {
    content.forEach((part, partIndex) => {
      if (part.type === 'text') text += part.text;
      else if (part.type === 'refusal' && role === 'assistant') text += part.refusal;
      else if (role !== 'user' || part.type === 'refusal') {
        throw new InvalidParameterError(
          `${at}.content[${partIndex}]`,
          `A '${role}' message's content parts are text only; '${part.type}' parts belong to user messages.`,
        );
      } else if (part.type === 'image_url' && !isImageUrl(part.image_url.url)) {
        throw new InvalidParameterError(
          `${at}.content[${partIndex}].image_url.url`,
          `'${at}.content[${partIndex}].image_url.url' must be an http(s) URL or a data: URL.`,
        );
      }
    });
    if (content.some((part) => part.type !== 'text' && part.type !== 'refusal')) {
      parts = content.filter((part): part is ContentPart => part.type !== 'refusal');
    }
  }
  return {
    role,
    content: text,
    ...(parts === undefined ? {} : { parts }),
    ...(message.tool_calls === undefined ? {} : { toolCalls: message.tool_calls }),
    ...(message.tool_call_id === undefined ? {} : { toolCallId: message.tool_call_id }),
    ...(message.name === undefined ? {} : { name: message.name }),
  };
}

function isImageUrl(url: string): boolean {
  return /^(https?:\/\/|data:)/i.test(url);
}

/** The request fields about tools and answer formats (OpenAI's names). */
export interface ToolFieldsInput {
  readonly tools?: ChatParams['tools'];
  readonly tool_choice?: ChatParams['tool_choice'];
  readonly response_format?: ChatParams['response_format'];
}

/**
 * `tools`, `tool_choice` and `response_format` checked against each other (each refusal a 400
 * naming the field). A `tool_choice` needs `tools`, and one naming a function names one of them; a client
 * JSON Schema (a tool's parameters, the response format's schema) is at most `maxSchemaText`
 * characters as JSON text (its nesting is bounded with every body's).
 */
export function checkToolFields(fields: ToolFieldsInput, maxSchemaText: number): void {
  const { tools, tool_choice: toolChoice, response_format: responseFormat } = fields;
  tools?.forEach((tool, index) => {
    checkSchemaSize(tool.function.parameters, `tools[${index}].function.parameters`, maxSchemaText);
  });
  if (responseFormat?.type === 'json_schema') {
    checkSchemaSize(
      responseFormat.json_schema.schema,
      'response_format.json_schema.schema',
      maxSchemaText,
    );
  }
  if (toolChoice !== undefined && (tools === undefined || tools.length === 0)) {
    throw new InvalidParameterError('tool_choice', "'tool_choice' needs 'tools' to choose from.");
  }
  if (typeof toolChoice === 'object') {
    const name = toolChoice.function.name;
    if (!tools!.some((tool) => tool.function.name === name)) {
      throw new InvalidParameterError(
        'tool_choice.function.name',
        `'tool_choice' names the function '${name}', which is not one of 'tools'.`,
      );
    }
  }
}

function checkSchemaSize(schema: unknown, param: string, maxSchemaText: number): void {
  if (schema !== undefined && JSON.stringify(schema).length > maxSchemaText) {
    throw new InvalidParameterError(
      param,
      `'${param}' is longer than ${maxSchemaText} characters as JSON text.`,
    );
  }
}

/** The inline data a part carries (an image's URL, base64 audio or a file), with its field path. */

/** A turn as a conversation stores it: its fields, null where the turn had none. */
export interface TurnRecord {
  readonly role: ChatTurn['role'];
  readonly content: string;
  readonly parts: readonly ContentPart[] | null;
  readonly toolCalls: readonly ToolCall[] | null;
  readonly toolCallId: string | null;
  readonly name: string | null;
}

/** A stored turn as the turn it was, replayed exactly (conversations and response chains). */
export function turnOfStored(message: TurnRecord): ChatTurn {
  return {
    role: message.role,
    content: message.content,
    ...(message.parts === null ? {} : { parts: message.parts }),
    ...(message.toolCalls === null ? {} : { toolCalls: message.toolCalls }),
    ...(message.toolCallId === null ? {} : { toolCallId: message.toolCallId }),
    ...(message.name === null ? {} : { name: message.name }),
  };
}

/** A usage as OpenAI's `usage` object (its details only where the provider reported them). */
export function openAiUsage(usage: TokenUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    ...(usage.cachedTokens === undefined
      ? {}
      : { prompt_tokens_details: { cached_tokens: usage.cachedTokens } }),
    ...(usage.reasoningTokens === undefined
      ? {}
      : { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } }),
  };
}
