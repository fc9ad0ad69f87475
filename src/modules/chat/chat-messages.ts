// Messages between their three forms: as a client sends them (OpenAI's message shape: text or
// content parts, assistant tool calls, tool results), as the model interface takes them (ChatTurn),
// and as a conversation stores them (StoredMessage) — so that a stored turn replays exactly as it
// was sent or answered, and a conversation can continue after a tool result. Also the bounds a
// turn must keep to be stored: inline data (data URLs, base64 audio and files) up to the
// configured size, else 413.
import { AppError, InvalidParameterError, MissingParameterError } from '../../errors/app-error.js';
import type { ChatParams, ChatTurn, ContentPart, ToolCall } from '../../models/spec.js';
import type { NewMessage, StoredMessage } from '../conversations/conversation.js';

/** A message in OpenAI's shape, as the routes' schemas have checked it. */
export interface MessageInput {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content?: string | readonly ContentPart[] | null | undefined;
  readonly name?: string | undefined;
  readonly tool_calls?: readonly ToolCall[] | undefined;
  readonly tool_call_id?: string | undefined;
}

/**
 * The turn a message is, its role's rules checked (each refusal a 400 naming the field): a tool
 * message answers a call (`tool_call_id`); only an assistant message carries `tool_calls`, and
 * only one that does may leave out its content; only a user message holds parts beyond text.
 * Content parts that are all text become the joined text, as a string content would be.
 */
export function turnOfMessage(message: MessageInput, index: number): ChatTurn {
  const at = `messages[${index}]`;
  const { role } = message;
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
  if (content === null && !(role === 'assistant' && message.tool_calls !== undefined)) {
    throw new MissingParameterError(
      `${at}.content`,
      `'${at}.content' is required (only an assistant message with 'tool_calls' may leave it out).`,
    );
  }
  let text = '';
  let parts: readonly ContentPart[] | undefined;
  if (typeof content === 'string') {
    text = content;
  } else if (content !== null) {
    content.forEach((part, partIndex) => {
      if (part.type === 'text') text += part.text;
      else if (role !== 'user') {
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
    if (content.some((part) => part.type !== 'text')) parts = content;
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

/** The request fields /v1/chat passes to the model (OpenAI's names), checked against each other. */
export interface ToolFieldsInput {
  readonly tools?: ChatParams['tools'];
  readonly tool_choice?: ChatParams['tool_choice'];
  readonly response_format?: ChatParams['response_format'];
}

/**
 * `tools`, `tool_choice` and `response_format` as the model's parameters, or undefined when none
 * is given. A `tool_choice` needs `tools`, and one naming a function names one of them; a client
 * JSON Schema (a tool's parameters, the response format's schema) is at most `maxSchemaText`
 * characters as JSON text (its nesting is bounded with every body's).
 */
export function paramsOf(fields: ToolFieldsInput, maxSchemaText: number): ChatParams | undefined {
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
  const params: ChatParams = {
    ...(tools === undefined ? {} : { tools }),
    ...(toolChoice === undefined ? {} : { tool_choice: toolChoice }),
    ...(responseFormat === undefined ? {} : { response_format: responseFormat }),
  };
  return Object.keys(params).length === 0 ? undefined : params;
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
function inlineDataOf(part: ContentPart): { value: string; field: string } | null {
  switch (part.type) {
    case 'image_url':
      return { value: part.image_url.url, field: 'image_url.url' };
    case 'input_audio':
      return { value: part.input_audio.data, field: 'input_audio.data' };
    case 'file':
      return part.file.file_data === undefined
        ? null
        : { value: part.file.file_data, field: 'file.file_data' };
    case 'text':
      return null;
  }
}

/** The UTF-8 length of `text` when above `limit`, else null (counted only when it may be). */
function bytesAbove(text: string, limit: number): number | null {
  if (text.length * 3 <= limit) return null;
  const bytes = Buffer.byteLength(text);
  return bytes > limit ? bytes : null;
}

/**
 * Refuses (413 `payload_too_large`, naming the field) a turn to be stored that carries inline data
 * longer than `limit` bytes: an image's URL (a `data:` URL in practice), input audio, a file's
 * data. `messages` are the request's, so that the field's index is the client's.
 */
export function checkStorable(messages: readonly ChatTurn[], limit: number): void {
  messages.forEach((turn, index) => {
    turn.parts?.forEach((part, partIndex) => {
      const data = inlineDataOf(part);
      if (data === null) return;
      const bytes = bytesAbove(data.value, limit);
      if (bytes === null) return;
      const param = `messages[${index}].content[${partIndex}].${data.field}`;
      throw new AppError(
        'payload_too_large',
        `'${param}' is ${bytes} bytes, more than the ${limit} a stored conversation keeps (chat.max_stored_data_url_bytes). Send the image as an http(s) URL, or a smaller one.`,
        { param },
      );
    });
  });
}

/** What a turn stores beyond its text: parts, tool calls, the call it answers, its name. */
export function storedFieldsOf(
  turn: ChatTurn,
): Pick<NewMessage, 'role' | 'content' | 'parts' | 'toolCalls' | 'toolCallId' | 'name'> {
  return {
    role: turn.role,
    content: turn.content,
    parts: turn.parts ?? null,
    toolCalls: turn.toolCalls !== undefined && turn.toolCalls.length > 0 ? turn.toolCalls : null,
    toolCallId: turn.toolCallId ?? null,
    name: turn.name ?? null,
  };
}

/** A stored message as the turn it was: the inverse of `storedFieldsOf`. */
export function turnOfStored(message: StoredMessage): ChatTurn {
  return {
    role: message.role,
    content: message.content,
    ...(message.parts === null ? {} : { parts: message.parts }),
    ...(message.toolCalls === null ? {} : { toolCalls: message.toolCalls }),
    ...(message.toolCallId === null ? {} : { toolCallId: message.toolCallId }),
    ...(message.name === null ? {} : { name: message.name }),
  };
}
