// OpenAI's Responses API, translated: a request body (`input` as text or items, `instructions`,
// function tools, `text.format`, …) into the chat turns and parameters the chat service runs, and
// the chat service's errors into the names of the client's fields. Plain functions over plain
// values; the answer side (the `Response` and its events) is response-events.ts, the HTTP side
// responses.routes.ts, the storage and the chains of `previous_response_id` response-service.ts.
import { AppError, InvalidParameterError, MissingParameterError } from '../../errors/app-error.js';
import { newId, randomBase62 } from '../../ids.js';
import { maxSchemaText } from '../../models/openai-messages.js';
import type {
  ChatParams,
  ChatTurn,
  ContentPart,
  FunctionTool,
  ResponseFormat,
  ToolCall,
  ToolChoice,
} from '../../models/spec.js';
import { assertSafeKeys } from '../../validation/safe-keys.js';

/** A content part of an input message, as the routes' schema has checked its outline. */
export interface InputPartBody {
  readonly type: string;
  readonly text?: string | undefined;
  readonly image_url?: string | null | undefined;
  readonly file_id?: string | null | undefined;
  readonly file_data?: string | undefined;
  readonly file_url?: string | undefined;
  readonly filename?: string | undefined;
  readonly detail?: string | undefined;
  readonly refusal?: string | undefined;
  readonly [field: string]: unknown;
}

/** An input item: a message, a function call, a function call's output, or another type. */
export interface InputItemBody {
  readonly type?: string | null | undefined;
  readonly id?: string | null | undefined;
  readonly role?: string | undefined;
  readonly content?: string | readonly InputPartBody[] | undefined;
  readonly call_id?: string | null | undefined;
  readonly name?: string | null | undefined;
  readonly arguments?: string | undefined;
  readonly output?: string | readonly InputPartBody[] | undefined;
  readonly [field: string]: unknown;
}

export interface ToolBody {
  readonly type: string;
  readonly name?: string | undefined;
  readonly description?: string | null | undefined;
  readonly parameters?: Readonly<Record<string, unknown>> | null | undefined;
  readonly strict?: boolean | null | undefined;
  readonly [field: string]: unknown;
}

export type ToolChoiceBody =
  | 'none'
  | 'auto'
  | 'required'
  | {
      readonly type: string;
      readonly name?: string | undefined;
      readonly [field: string]: unknown;
    };

export interface TextFormatBody {
  readonly type: string;
  readonly name?: string | undefined;
  readonly description?: string | undefined;
  readonly schema?: Readonly<Record<string, unknown>> | undefined;
  readonly strict?: boolean | null | undefined;
  readonly [field: string]: unknown;
}

/** A `POST /v1/responses` body: the fields the service reads; every other one is ignored. */
export interface ResponseRequestBody {
  readonly model?: string | undefined;
  readonly input?: string | readonly InputItemBody[] | undefined;
  readonly instructions?: string | null | undefined;
  readonly tools?: readonly ToolBody[] | undefined;
  readonly tool_choice?: ToolChoiceBody | undefined;
  readonly parallel_tool_calls?: boolean | null | undefined;
  readonly text?:
    | {
        readonly format?: TextFormatBody | null | undefined;
        readonly verbosity?: string | null | undefined;
      }
    | null
    | undefined;
  readonly reasoning?:
    | {
        readonly effort?: string | null | undefined;
        readonly summary?: string | null | undefined;
        readonly [field: string]: unknown;
      }
    | null
    | undefined;
  readonly temperature?: number | null | undefined;
  readonly top_p?: number | null | undefined;
  readonly max_output_tokens?: number | null | undefined;
  readonly store?: boolean | null | undefined;
  readonly stream?: boolean | null | undefined;
  readonly previous_response_id?: string | null | undefined;
  readonly conversation?: string | { readonly id: string } | null | undefined;
  readonly metadata?: Readonly<Record<string, string>> | null | undefined;
  readonly user?: string | undefined;
  /** Extensions: whose conversation the chain is, and a conversation to continue. */
  readonly user_id?: string | undefined;
  readonly conversation_id?: string | undefined;
  readonly prompt?: unknown;
  readonly [field: string]: unknown;
}

/** What a response repeats of its request (OpenAI's `Response` carries them all). */
export interface ResponseEcho {
  readonly instructions: string | null;
  readonly max_output_tokens: number | null;
  readonly parallel_tool_calls: boolean;
  readonly previous_response_id: string | null;
  readonly reasoning: { effort: string | null; summary: string | null } | null;
  readonly store: boolean;
  readonly temperature: number | null;
  readonly text: { format: Record<string, unknown>; verbosity?: string };
  readonly tool_choice: ToolChoiceBody;
  readonly tools: Record<string, unknown>[];
  readonly top_p: number | null;
  readonly user?: string;
  readonly metadata: Record<string, string>;
}

/** An input item as `GET /v1/responses/{id}/input_items` lists it (OpenAI's item resources). */
export type InputItemResource = { readonly id: string; readonly type: string } & Record<
  string,
  unknown
>;

/** The chat turn a request asks for, before the service adds a chain's history or a model. */
export interface ResponseCall {
  /** The instructions (a system turn) first, then the input's turns. */
  readonly turns: ChatTurn[];
  /** Per turn, the request field it was read from (`instructions`, `input[2]`). */
  readonly paths: string[];
  readonly params: ChatParams;
  readonly inputItems: InputItemResource[];
  readonly requestedModel: string | undefined;
  readonly maxTokens: number | undefined;
  readonly temperature: number | undefined;
  readonly stream: boolean;
  /** `store` (default true): kept, and its chain continued, or stateless. */
  readonly store: boolean;
  readonly previousResponseId: string | null;
  /** `conversation`: a stored conversation of the account to continue. */
  readonly conversationId: string | null;
  /** The extension `user_id`: whose conversation the chain is. */
  readonly userId: string | null;
  readonly echo: ResponseEcho;
}

/** A function's (and a JSON schema format's) name, as OpenAI allows it. */
const functionName = /^[a-zA-Z0-9_-]{1,64}$/;

function isImageUrl(url: string): boolean {
  return /^(https?:\/\/|data:)/i.test(url);
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
      case 'input_image': {
        if (role !== 'user') break;
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
        parts.push({
          type: 'image_url',
          image_url: { url: part.image_url, ...(detail === undefined ? {} : { detail }) },
        });
        return;
      }
      case 'input_file': {
        if (role !== 'user') break;
        if (part.file_data === undefined) {
          throw new InvalidParameterError(
            `${field}.file_data`,
            `'${field}' must give 'file_data' (base64): this platform has no Files API, so a 'file_id' or 'file_url' cannot be read.`,
          );
        }
        parts.push({
          type: 'file',
          file: {
            file_data: part.file_data,
            ...(part.filename === undefined ? {} : { filename: part.filename }),
          },
        });
        return;
      }
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

function requiredText(value: string | null | undefined, param: string): string {
  if (value === undefined || value === null || value === '') {
    throw new MissingParameterError(param);
  }
  return value;
}

/** The turns and listed items of `input` (a string is one user message). */
function inputOf(input: ResponseRequestBody['input']): {
  turns: ChatTurn[];
  paths: string[];
  items: InputItemResource[];
} {
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
  const turns: ChatTurn[] = [];
  const paths: string[] = [];
  const items: InputItemResource[] = [];
  /** The assistant turn that function calls right after an assistant item join. */
  let openAssistant: { text: string; toolCalls: ToolCall[]; index: number } | null = null;
  const closeAssistant = () => {
    if (openAssistant === null) return;
    turns[openAssistant.index] = {
      role: 'assistant',
      content: openAssistant.text,
      ...(openAssistant.toolCalls.length > 0 ? { toolCalls: openAssistant.toolCalls } : {}),
    };
    openAssistant = null;
  };
  const startAssistant = (text: string, path: string) => {
    closeAssistant();
    openAssistant = { text, toolCalls: [], index: turns.length };
    turns.push({ role: 'assistant', content: text });
    paths.push(path);
  };
  input.forEach((item, index) => {
    const at = `input[${index}]`;
    const type = item.type ?? 'message';
    if (type === 'message') {
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
        startAssistant(text, at);
        items.push({
          id,
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
        });
        return;
      }
      closeAssistant();
      turns.push({ role, content: text, ...(parts === undefined ? {} : { parts }) });
      paths.push(at);
      items.push({
        id,
        type: 'message',
        role: item.role === 'developer' ? 'developer' : role,
        status: 'completed',
        content:
          typeof item.content === 'string'
            ? [{ type: 'input_text', text: item.content }]
            : item.content.map(listedPart),
      });
      return;
    }
    if (type === 'function_call') {
      const callId = requiredText(item.call_id, `${at}.call_id`);
      const name = requiredText(item.name, `${at}.name`);
      const args = item.arguments ?? '';
      if (openAssistant === null) startAssistant('', at);
      openAssistant!.toolCalls.push({
        id: callId,
        type: 'function',
        function: { name, arguments: args },
      });
      items.push({
        id: typeof item.id === 'string' && item.id !== '' ? item.id : `fc_${randomBase62(22)}`,
        type: 'function_call',
        call_id: callId,
        name,
        arguments: args,
        status: 'completed',
      });
      return;
    }
    if (type === 'function_call_output') {
      const callId = requiredText(item.call_id, `${at}.call_id`);
      const text = outputText(item.output, at);
      closeAssistant();
      turns.push({ role: 'tool', content: text, toolCallId: callId });
      paths.push(at);
      items.push({
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
      return;
    }
    // The model's own reasoning from an earlier OpenAI answer: context for OpenAI's models only.
    if (type === 'reasoning') return;
    throw new InvalidParameterError(
      `${at}.type`,
      `Input item type '${type}' is not supported; use message, function_call or function_call_output items (item references and the items of OpenAI's built-in tools are not).`,
    );
  });
  closeAssistant();
  return { turns, paths, items };
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

function checkSchemaSize(schema: unknown, param: string): void {
  if (schema !== undefined && schema !== null && JSON.stringify(schema).length > maxSchemaText) {
    throw new InvalidParameterError(
      param,
      `'${param}' is longer than ${maxSchemaText} characters as JSON text.`,
    );
  }
}

/** Function tools as the model interface takes them; any other tool type is a 400 naming it. */
function toolsOf(tools: readonly ToolBody[]): FunctionTool[] {
  return tools.map((tool, index) => {
    const at = `tools[${index}]`;
    if (tool.type !== 'function') {
      throw new InvalidParameterError(
        `${at}.type`,
        `Tool type '${tool.type}' is one OpenAI runs on its own servers; this platform cannot run it. Only 'function' tools are supported (your code runs them).`,
      );
    }
    const name = requiredText(tool.name, `${at}.name`);
    if (!functionName.test(name)) {
      throw new InvalidParameterError(
        `${at}.name`,
        `'${at}.name' must be 1 to 64 letters, digits, '_' or '-'.`,
      );
    }
    checkSchemaSize(tool.parameters, `${at}.parameters`);
    return {
      type: 'function',
      function: {
        name,
        ...(tool.description === undefined || tool.description === null
          ? {}
          : { description: tool.description }),
        ...(tool.parameters === undefined || tool.parameters === null
          ? {}
          : { parameters: tool.parameters }),
        ...(tool.strict === undefined || tool.strict === null ? {} : { strict: tool.strict }),
      },
    };
  });
}

/** `tool_choice` in Chat Completions' shape; undefined when there is nothing to choose from. */
function toolChoiceOf(
  choice: ToolChoiceBody | undefined,
  tools: readonly FunctionTool[],
): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (typeof choice === 'string') {
    if (tools.length > 0) return choice;
    if (choice === 'required') {
      throw new InvalidParameterError('tool_choice', "'tool_choice' needs 'tools' to choose from.");
    }
    // `auto` and `none` without tools change nothing (Chat Completions upstreams refuse them).
    return undefined;
  }
  if (choice.type !== 'function') {
    throw new InvalidParameterError(
      'tool_choice.type',
      `'tool_choice' of type '${choice.type}' is not supported; use "auto", "none", "required" or {"type": "function", "name": …}.`,
    );
  }
  const name = requiredText(choice.name, 'tool_choice.name');
  if (!tools.some((tool) => tool.function.name === name)) {
    throw new InvalidParameterError(
      'tool_choice.name',
      `'tool_choice' names the function '${name}', which is not one of 'tools'.`,
    );
  }
  return { type: 'function', function: { name } };
}

/** `text.format` as Chat Completions' `response_format` (none for plain text, the default). */
function responseFormatOf(format: TextFormatBody | null | undefined): ResponseFormat | undefined {
  if (format === undefined || format === null || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type !== 'json_schema') {
    throw new InvalidParameterError(
      'text.format.type',
      `'text.format.type' must be text, json_object or json_schema, not '${format.type}'.`,
    );
  }
  const name = requiredText(format.name, 'text.format.name');
  if (!functionName.test(name)) {
    throw new InvalidParameterError(
      'text.format.name',
      "'text.format.name' must be 1 to 64 letters, digits, '_' or '-'.",
    );
  }
  if (format.schema === undefined) throw new MissingParameterError('text.format.schema');
  checkSchemaSize(format.schema, 'text.format.schema');
  return {
    type: 'json_schema',
    json_schema: {
      name,
      schema: format.schema,
      ...(format.description === undefined ? {} : { description: format.description }),
      ...(format.strict === undefined || format.strict === null ? {} : { strict: format.strict }),
    },
  };
}

/** `text.format` as a response repeats it. */
function echoedFormat(format: TextFormatBody | null | undefined): Record<string, unknown> {
  if (format === undefined || format === null || format.type === 'text') return { type: 'text' };
  if (format.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    name: format.name,
    schema: format.schema,
    ...(format.description === undefined ? {} : { description: format.description }),
    strict: format.strict ?? null,
  };
}

/** The conversation `conversation` names (a string or `{id}`), or null. */
function conversationIdOf(conversation: ResponseRequestBody['conversation']): string | null {
  if (conversation === undefined || conversation === null) return null;
  return typeof conversation === 'string' ? conversation : conversation.id;
}

/**
 * The chat turn a request asks for, every field checked (each refusal a 400 naming it). Fields
 * of OpenAI's request that are not read here are ignored (docs: the Responses API).
 */
export function responseCallOf(body: ResponseRequestBody): ResponseCall {
  const store = body.store !== false;
  const previousResponseId = body.previous_response_id ?? null;
  const named = conversationIdOf(body.conversation);
  if (named !== null && body.conversation_id !== undefined && body.conversation_id !== named) {
    throw new InvalidParameterError(
      'conversation_id',
      "'conversation_id' and 'conversation' name different conversations.",
    );
  }
  const conversationId = named ?? body.conversation_id ?? null;
  if (body.prompt !== undefined && body.prompt !== null) {
    throw new InvalidParameterError(
      'prompt',
      "'prompt' (a prompt stored in OpenAI's dashboard) is not supported; send 'instructions' and 'input'.",
    );
  }
  if (conversationId !== null && previousResponseId !== null) {
    throw new InvalidParameterError(
      'conversation',
      "'conversation' and 'previous_response_id' cannot be used together.",
    );
  }
  if (conversationId !== null && !store) {
    throw new InvalidParameterError(
      'store',
      "'store: false' cannot be used with 'conversation', which stores the turn in it.",
    );
  }
  if (body.metadata !== undefined && body.metadata !== null) {
    assertSafeKeys(body.metadata, 'metadata');
  }
  const input = inputOf(body.input);
  const instructions = body.instructions ?? null;
  const turns: ChatTurn[] =
    instructions === null || instructions === ''
      ? input.turns
      : [{ role: 'system', content: instructions }, ...input.turns];
  const paths =
    instructions === null || instructions === '' ? input.paths : ['instructions', ...input.paths];
  const tools = toolsOf(body.tools ?? []);
  const toolChoice = toolChoiceOf(body.tool_choice, tools);
  const responseFormat = responseFormatOf(body.text?.format);
  const effort = body.reasoning?.effort ?? undefined;
  const verbosity = body.text?.verbosity ?? undefined;
  const params: ChatParams = {
    ...(tools.length === 0 ? {} : { tools }),
    ...(toolChoice === undefined ? {} : { tool_choice: toolChoice }),
    ...(body.parallel_tool_calls === undefined ||
    body.parallel_tool_calls === null ||
    tools.length === 0
      ? {}
      : { parallel_tool_calls: body.parallel_tool_calls }),
    ...(responseFormat === undefined ? {} : { response_format: responseFormat }),
    ...(body.top_p === undefined || body.top_p === null ? {} : { top_p: body.top_p }),
    ...(effort === undefined ? {} : { reasoning_effort: effort }),
    ...(verbosity === undefined ? {} : { verbosity }),
    ...(body.user === undefined ? {} : { user: body.user }),
  };
  return {
    turns,
    paths,
    params,
    inputItems: input.items,
    requestedModel: body.model,
    maxTokens: body.max_output_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    stream: body.stream === true,
    store,
    previousResponseId,
    conversationId,
    userId: body.user_id ?? null,
    echo: {
      instructions,
      max_output_tokens: body.max_output_tokens ?? null,
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      previous_response_id: previousResponseId,
      reasoning:
        body.reasoning === undefined || body.reasoning === null
          ? null
          : { effort: body.reasoning.effort ?? null, summary: body.reasoning.summary ?? null },
      store,
      temperature: body.temperature ?? null,
      text: {
        format: echoedFormat(body.text?.format),
        ...(verbosity === undefined ? {} : { verbosity }),
      },
      tool_choice: body.tool_choice ?? 'auto',
      tools: tools.map((tool) => ({
        type: 'function',
        name: tool.function.name,
        description: tool.function.description ?? null,
        parameters: tool.function.parameters ?? null,
        strict: tool.function.strict ?? null,
      })),
      top_p: body.top_p ?? null,
      ...(body.user === undefined ? {} : { user: body.user }),
      metadata: { ...(body.metadata ?? {}) },
    },
  };
}

/**
 * The chat service names the fields of its own request (`messages[3].content[1]`,
 * `response_format`, `tool_choice.function.name`); a Responses client sent other ones. An error
 * naming one is given the client's name for it (in `param` and in the message), by `paths`, the
 * field each turn was read from. Other errors are returned as they are.
 */
export function withClientParams(error: unknown, paths: readonly string[]): unknown {
  if (!(error instanceof AppError) || error.param === null) return error;
  const renamed = clientParam(error.param, paths);
  if (renamed === error.param) return error;
  return new AppError(error.code, error.message.split(error.param).join(renamed), {
    param: renamed,
    details: error.details,
    headers: error.headers,
    cause: error.cause,
  });
}

function clientParam(param: string, paths: readonly string[]): string {
  const turn = /^messages\[(\d+)\](.*)$/.exec(param);
  if (turn !== null) {
    const rest = turn[2]!
      .replace(/^(\.content\[\d+\])\.image_url\.url$/, '$1.image_url')
      .replace(/^\.tool_call_id$/, '.call_id');
    return `${paths[Number(turn[1])] ?? 'input'}${rest}`;
  }
  if (param === 'messages') return 'input';
  if (param.startsWith('response_format')) return 'text.format';
  if (param === 'reasoning_effort') return 'reasoning.effort';
  if (param === 'tool_choice.function.name') return 'tool_choice.name';
  const tool = /^(tools\[\d+\])\.function\.(.*)$/.exec(param);
  if (tool !== null) return `${tool[1]!}.${tool[2]!}`;
  return param;
}
