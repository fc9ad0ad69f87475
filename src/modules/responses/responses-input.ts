// `input` as the chat turns the service runs: text, or message, function_call and
// function_call_output items (an assistant message and the calls after it one turn), each turn's
// field remembered for error messages, and the items as `GET …/input_items` lists them.
import { InvalidParameterError, MissingParameterError } from '../../errors/app-error.js';
import { newId, randomBase62 } from '../../ids.js';
import type { ChatTurn, ContentPart, ToolCall } from '../../models/spec.js';
import {
  requiredText,
  type InputItemBody,
  type InputItemResource,
  type InputPartBody,
  type ResponseRequestBody,
} from './responses-request.js';

function isImageUrl(url: string): boolean {
  return /^(https?:\/\/|data:)/i.test(url);
}

/** An `input_image` part as an image_url part: a URL (https or data), no Files API id. */
function imagePart(part: InputPartBody, field: string): ContentPart {
  if (part.image_url === undefined || part.image_url === null) {
    throw new InvalidParameterError(
      part.file_id === undefined || part.file_id === null
        ? `${field}.image_url`
        : `${field}.file_id`,
      `'${field}' must give 'image_url' (an https URL or a data URL): this platform has no Files API, so a 'file_id' cannot be read.`,
    );
  }
  if (!isImageUrl(part.image_url)) {
    throw new InvalidParameterError(
      `${field}.image_url`,
      `'${field}.image_url' must be an http(s) URL or a data: URL.`,
    );
  }
  const detail =
    part.detail === 'low' || part.detail === 'high' || part.detail === 'auto'
      ? part.detail
      : undefined;
  return {
    type: 'image_url',
    image_url: { url: part.image_url, ...(detail === undefined ? {} : { detail }) },
  };
}

/** An `input_file` part as a file part: its base64 data, no Files API id or URL. */
function filePart(part: InputPartBody, field: string): ContentPart {
  if (part.file_data === undefined) {
    throw new InvalidParameterError(
      `${field}.file_data`,
      `'${field}' must give 'file_data' (base64): this platform has no Files API, so a 'file_id' or 'file_url' cannot be read.`,
    );
  }
  return {
    type: 'file',
    file: {
      file_data: part.file_data,
      ...(part.filename === undefined ? {} : { filename: part.filename }),
    },
  };
}

/** The reading of one message item's content: its text, and its parts when not all text. */
function messageContent(
  role: 'system' | 'user' | 'assistant',
  content: string | readonly InputPartBody[],
  at: string,
): { text: string; parts?: ContentPart[] } {
  if (typeof content === 'string') return { text: content };
  let text = '';
  const parts: ContentPart[] = [];
  content.forEach((part, index) => {
    const field = `${at}.content[${index}]`;
    switch (part.type) {
      case 'input_text':
      case 'output_text':
        text += part.text ?? '';
        parts.push({ type: 'text', text: part.text ?? '' });
        return;
      case 'refusal':
        if (role !== 'assistant') break;
        text += part.refusal ?? '';
        return;
      case 'input_image':
        if (role !== 'user') break;
        parts.push(imagePart(part, field));
        return;
      case 'input_file':
        if (role !== 'user') break;
        parts.push(filePart(part, field));
        return;
      default:
        throw new InvalidParameterError(
          `${field}.type`,
          `Content part type '${part.type}' is not supported here; use input_text, input_image or input_file (output_text and refusal in assistant messages).`,
        );
    }
    throw new InvalidParameterError(
      `${field}.type`,
      `A '${role}' message's content parts are text only; '${part.type}' parts belong to user messages.`,
    );
  });
  return parts.some((part) => part.type !== 'text') ? { text, parts } : { text };
}

/** A function call's output as a tool turn's text: a string, or its `input_text` parts joined. */
function outputText(output: string | readonly InputPartBody[] | undefined, at: string): string {
  if (output === undefined) {
    throw new MissingParameterError(`${at}.output`);
  }
  if (typeof output === 'string') return output;
  return output
    .map((part, index) => {
      if (part.type !== 'input_text') {
        throw new InvalidParameterError(
          `${at}.output[${index}].type`,
          `A function call's output is text here ('input_text' parts); '${part.type}' parts cannot be sent back to the model as a tool result.`,
        );
      }
      return part.text ?? '';
    })
    .join('');
}

/** The turns of `input`, the field each was read from, and its items as listed. */
export interface ReadInput {
  readonly turns: ChatTurn[];
  readonly paths: string[];
  readonly items: InputItemResource[];
}

/** The assistant turn that function calls right after an assistant item join. */
interface OpenAssistant {
  readonly text: string;
  readonly toolCalls: ToolCall[];
  readonly index: number;
}

/** `input`'s items read in order, into turns (see `inputOf`). */
class InputReading implements ReadInput {
  readonly turns: ChatTurn[] = [];
  readonly paths: string[] = [];
  readonly items: InputItemResource[] = [];
  private openAssistant: OpenAssistant | null = null;

  item(item: InputItemBody, index: number): void {
    const at = `input[${index}]`;
    const type = item.type ?? 'message';
    if (type === 'message') this.message(item, at);
    else if (type === 'function_call') this.functionCall(item, at);
    else if (type === 'function_call_output') this.functionCallOutput(item, at);
    // The model's own reasoning from an earlier OpenAI answer: context for OpenAI's models only.
    else if (type !== 'reasoning') {
      throw new InvalidParameterError(
        `${at}.type`,
        `Input item type '${type}' is not supported; use message, function_call or function_call_output items (item references and the items of OpenAI's built-in tools are not).`,
      );
    }
  }

  /** The open assistant turn, with the function calls it gathered. */
  closeAssistant(): void {
    const open = this.openAssistant;
    if (open === null) return;
    this.turns[open.index] = {
      role: 'assistant',
      content: open.text,
      ...(open.toolCalls.length > 0 ? { toolCalls: open.toolCalls } : {}),
    };
    this.openAssistant = null;
  }

  private startAssistant(text: string, path: string): OpenAssistant {
    this.closeAssistant();
    const open: OpenAssistant = { text, toolCalls: [], index: this.turns.length };
    this.openAssistant = open;
    this.turns.push({ role: 'assistant', content: text });
    this.paths.push(path);
    return open;
  }

  private message(item: InputItemBody, at: string): void {
    const role = item.role === 'developer' ? 'system' : item.role;
    if (role !== 'user' && role !== 'system' && role !== 'assistant') {
      throw new InvalidParameterError(
        `${at}.role`,
        `Role '${item.role ?? ''}' is not supported; use user, assistant, system or developer.`,
      );
    }
    if (item.content === undefined) throw new MissingParameterError(`${at}.content`);
    const { text, parts } = messageContent(role, item.content, at);
    const id = typeof item.id === 'string' && item.id !== '' ? item.id : newId('msg');
    if (role === 'assistant') {
      this.startAssistant(text, at);
      this.items.push({
        id,
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
      });
      return;
    }
    this.closeAssistant();
    this.turns.push({ role, content: text, ...(parts === undefined ? {} : { parts }) });
    this.paths.push(at);
    this.items.push({
      id,
      type: 'message',
      role: item.role === 'developer' ? 'developer' : role,
      status: 'completed',
      content:
        typeof item.content === 'string'
          ? [{ type: 'input_text', text: item.content }]
          : item.content.map(listedPart),
    });
  }

  private functionCall(item: InputItemBody, at: string): void {
    const callId = requiredText(item.call_id, `${at}.call_id`);
    const name = requiredText(item.name, `${at}.name`);
    const args = item.arguments ?? '';
    const open = this.openAssistant ?? this.startAssistant('', at);
    open.toolCalls.push({ id: callId, type: 'function', function: { name, arguments: args } });
    this.items.push({
      id: typeof item.id === 'string' && item.id !== '' ? item.id : `fc_${randomBase62(22)}`,
      type: 'function_call',
      call_id: callId,
      name,
      arguments: args,
      status: 'completed',
    });
  }

  private functionCallOutput(item: InputItemBody, at: string): void {
    const callId = requiredText(item.call_id, `${at}.call_id`);
    const text = outputText(item.output, at);
    this.closeAssistant();
    this.turns.push({ role: 'tool', content: text, toolCallId: callId });
    this.paths.push(at);
    this.items.push({
      id: typeof item.id === 'string' && item.id !== '' ? item.id : `fco_${randomBase62(22)}`,
      type: 'function_call_output',
      call_id: callId,
      output:
        typeof item.output === 'string'
          ? item.output
          : (item.output ?? []).map((part: InputPartBody) => ({
              type: 'input_text',
              text: part.text ?? '',
            })),
      status: 'completed',
    });
  }
}

/** The turns and listed items of `input` (a string is one user message). */
export function inputOf(input: ResponseRequestBody['input']): ReadInput {
  if (input === undefined || (typeof input !== 'string' && input.length === 0)) {
    throw new MissingParameterError(
      'input',
      "'input' is required: a string, or a list of input items.",
    );
  }
  if (typeof input === 'string') {
    return {
      turns: [{ role: 'user', content: input }],
      paths: ['input'],
      items: [
        {
          id: newId('msg'),
          type: 'message',
          role: 'user',
          status: 'completed',
          content: [{ type: 'input_text', text: input }],
        },
      ],
    };
  }
  const reading = new InputReading();
  input.forEach((item, index) => {
    reading.item(item, index);
  });
  reading.closeAssistant();
  return { turns: reading.turns, paths: reading.paths, items: reading.items };
}

/** An input message's content part as listed: OpenAI's shape, with an image's `detail`. */
function listedPart(part: InputPartBody): Record<string, unknown> {
  switch (part.type) {
    case 'input_image':
      return {
        type: 'input_image',
        image_url: part.image_url ?? null,
        detail: part.detail ?? 'auto',
      };
    case 'input_file':
      return {
        type: 'input_file',
        file_data: part.file_data,
        ...(part.filename === undefined ? {} : { filename: part.filename }),
      };
    default:
      return { type: 'input_text', text: part.text ?? '' };
  }
}
