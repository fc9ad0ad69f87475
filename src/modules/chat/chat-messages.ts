// Messages between their three forms: as a client sends them (OpenAI's message shape: text or
// content parts, assistant tool calls, tool results), as the model interface takes them (ChatTurn),
// and as a conversation stores them (StoredMessage) — so that a stored turn replays exactly as it
// was sent or answered, and a conversation can continue after a tool result. Also the bounds a
// turn must keep to be stored: inline data (data URLs, base64 audio and files) up to the
// configured size, else 413.
import { AppError } from '../../errors/app-error.js';
import { checkToolFields, type ToolFieldsInput } from '../../models/openai-messages.js';
import type { ChatParams, ChatTurn, ContentPart } from '../../models/spec.js';
import type { NewMessage } from '../conversations/conversation.js';

/**
 * `tools`, `tool_choice` and `response_format` as the model's parameters (checked as
 * `checkToolFields` does), or undefined when none is given.
 */
export function paramsOf(fields: ToolFieldsInput, maxSchemaText: number): ChatParams | undefined {
  const { tools, tool_choice: toolChoice, response_format: responseFormat } = fields;
  checkToolFields(fields, maxSchemaText);
  const params: ChatParams = {
    ...(tools === undefined ? {} : { tools }),
    ...(toolChoice === undefined ? {} : { tool_choice: toolChoice }),
    ...(responseFormat === undefined ? {} : { response_format: responseFormat }),
  };
  return Object.keys(params).length === 0 ? undefined : params;
}

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
