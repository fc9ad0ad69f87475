// Anthropic's Messages API dialect, translated: a /v1/messages body into the chat turn the service
// runs (OpenAI's message model, docs/message-model.md), and the turn's outcome or stream events
// into Anthropic's message object and its event sequence; Anthropic's error shape; and, for a
// model of the `anthropic` provider, the answer passed through with only its id and model
// rewritten. Plain functions over plain values; the HTTP side is messages.routes.ts.
import { AppError, InvalidParameterError } from '../../errors/app-error.js';
import type { CapabilityNeed } from '../../models/capabilities.js';
import type { PassthroughEvent } from '../../models/providers/anthropic-passthrough.js';
import type {
  ChatParams,
  ChatTurn,
  ContentPart,
  FinishReason,
  FunctionTool,
  TokenUsage,
  ToolCall,
  ToolChoice,
} from '../../models/spec.js';
import type { ChatOutcome, ChatStreamEvent } from '../chat/chat-service.js';

type Json = Record<string, unknown>;

/** A content block as Anthropic's clients send it (messages.schemas.ts checks its bounds). */
export interface RequestBlock {
  readonly type: string;
  readonly text?: string | undefined;
  /** An object for images and documents (the schema checks it); anything for other blocks. */
  readonly source?: unknown;
  readonly title?: string | null | undefined;
  readonly id?: string | undefined;
  readonly name?: string | undefined;
  readonly input?: unknown;
  readonly tool_use_id?: string | undefined;
  readonly content?: string | readonly RequestBlock[] | undefined;
  readonly is_error?: boolean | undefined;
  readonly [field: string]: unknown;
}

export interface RequestMessage {
  readonly role: string;
  readonly content: string | readonly RequestBlock[];
}

export interface RequestTool {
  readonly name: string;
  readonly type?: string | undefined;
  readonly description?: string | undefined;
  readonly input_schema?: Json | undefined;
  readonly [field: string]: unknown;
}

export interface RequestToolChoice {
  readonly type: string;
  readonly name?: string | undefined;
  readonly disable_parallel_tool_use?: boolean | undefined;
}

/** What /v1/messages/count_tokens reads: the prompt without the answer's parameters. */
export interface PromptBody {
  readonly model: string;
  readonly messages: readonly RequestMessage[];
  readonly system?: string | readonly RequestBlock[] | undefined;
  readonly tools?: readonly RequestTool[] | undefined;
  readonly tool_choice?: RequestToolChoice | undefined;
  readonly thinking?: { readonly type: string; readonly [field: string]: unknown } | undefined;
  readonly output_config?: OutputConfig | undefined;
  /** The platform's extensions: store the turn in a conversation. */
  readonly user_id?: string | undefined;
  readonly conversation_id?: string | undefined;
  readonly [field: string]: unknown;
}

/** Anthropic's output settings: a JSON schema the answer follows, the effort spent. */
export interface OutputConfig {
  readonly format?:
    { readonly type: string; readonly schema?: Json | undefined } | null | undefined;
  readonly effort?: string | null | undefined;
}

/** A Messages request: the fields the service reads, and every other one kept. */
export interface MessagesRequestBody extends PromptBody {
  readonly max_tokens: number;
  readonly stop_sequences?: readonly string[] | undefined;
  readonly temperature?: number | undefined;
  readonly top_p?: number | undefined;
  readonly top_k?: number | undefined;
  readonly metadata?: { readonly user_id?: string | null | undefined } | undefined;
  readonly stream?: boolean | undefined;
}

/** Something of the request the translation cannot carry to a model of another provider. */
export interface Untranslatable {
  readonly param: string;
  readonly why: string;
}

/** The prompt as the service's turns, and what translating it left behind. */
export interface TranslatedPrompt {
  readonly messages: ChatTurn[];
  readonly params: ChatParams;
  /** Refused (400) when the request is translated; nothing when it is passed through. */
  readonly untranslatable: Untranslatable[];
  /** What the request needs of its model beyond text, named by its Anthropic fields. */
  readonly needs: CapabilityNeed[];
}

/** The chat turn a Messages request asks for, before routing picks its model. */
export interface MessagesCall extends TranslatedPrompt {
  /** Stored in a conversation (the extensions `user_id` or `conversation_id`), or stateless. */
  readonly persist: boolean;
  readonly userId: string | null;
  readonly conversationId: string | null;
  readonly requestedModel: string;
  readonly maxTokens: number;
  readonly temperature: number | undefined;
  readonly stream: boolean;
}

/** Top-level fields only Anthropic's own API can act on (a refusal when translated). */
const anthropicOnly: Readonly<Record<string, string>> = {
  top_k: 'OpenAI-compatible models take no top_k here',
  mcp_servers: "MCP servers are run by Anthropic's API",
  container: "code-execution containers are Anthropic's",
};

const untranslatableError = (modelName: string, item: Untranslatable) =>
  new InvalidParameterError(
    item.param,
    `Model '${modelName}' is not an Anthropic model, and '${item.param}' cannot be translated for it: ${item.why}. It is passed through only to models of the 'anthropic' provider.`,
  );

/** 400 for the first part of the request a translated call would drop. */
export function refuseUntranslatable(call: TranslatedPrompt, modelName: string): void {
  const first = call.untranslatable[0];
  if (first !== undefined) throw untranslatableError(modelName, first);
}

const dataUrl = (mediaType: unknown, data: unknown) =>
  `data:${typeof mediaType === 'string' ? mediaType : 'application/octet-stream'};base64,${typeof data === 'string' ? data : ''}`;

const sourceOf = (block: RequestBlock): Json =>
  typeof block.source === 'object' && block.source !== null ? (block.source as Json) : {};

/** The image block's source as an image_url part; undefined when it has none (a file id). */
function imagePart(block: RequestBlock): ContentPart | undefined {
  const source = sourceOf(block);
  if (source.type === 'base64' && typeof source.data === 'string') {
    return { type: 'image_url', image_url: { url: dataUrl(source.media_type, source.data) } };
  }
  if (source.type === 'url' && typeof source.url === 'string') {
    return { type: 'image_url', image_url: { url: source.url } };
  }
  return undefined;
}

/** A document block as a file part (base64) or text (a plain-text source). */
function documentPart(block: RequestBlock): ContentPart | undefined {
  const source = sourceOf(block);
  if (source.type === 'base64' && typeof source.data === 'string') {
    const filename = typeof block.title === 'string' ? { filename: block.title } : {};
    return {
      type: 'file',
      file: { file_data: dataUrl(source.media_type, source.data), ...filename },
    };
  }
  if (source.type === 'text' && typeof source.data === 'string') {
    return { type: 'text', text: source.data };
  }
  return undefined;
}

/** Collects what one request needs of its model, each capability once (its first field). */
class Needs {
  private readonly byCapability = new Map<CapabilityNeed['capability'], CapabilityNeed>();
  add(need: CapabilityNeed): void {
    if (!this.byCapability.has(need.capability)) this.byCapability.set(need.capability, need);
  }
  list(): CapabilityNeed[] {
    return [...this.byCapability.values()];
  }
}

const toolsNeed = (param: string): CapabilityNeed => ({
  capability: 'tools',
  param,
  what: 'tool calls and results',
});
const visionNeed = (param: string): CapabilityNeed => ({
  capability: 'vision',
  param,
  what: 'image input',
});

/** The turns of one prompt, its translation's leftovers and needs gathered as it goes. */
class PromptTranslation {
  readonly turns: ChatTurn[] = [];
  readonly untranslatable: Untranslatable[] = [];
  readonly needs = new Needs();

  skip(param: string, why: string): void {
    this.untranslatable.push({ param, why });
  }

  system(system: PromptBody['system']): void {
    if (system === undefined) return;
    const text =
      typeof system === 'string'
        ? system
        : system
            .map((block, index) => {
              if (block.type !== 'text' || typeof block.text !== 'string') {
                throw new InvalidParameterError(
                  `system[${index}].type`,
                  "The system prompt's blocks must be 'text' blocks.",
                );
              }
              return block.text;
            })
            .join('\n');
    if (text !== '') this.turns.push({ role: 'system', content: text });
  }

  message(message: RequestMessage, index: number): void {
    if (message.role !== 'user' && message.role !== 'assistant') {
      throw new InvalidParameterError(
        `messages[${index}].role`,
        `Role '${message.role}' is not a Messages API role; use user or assistant (the system prompt is 'system').`,
      );
    }
    if (typeof message.content === 'string') {
      this.turns.push({ role: message.role, content: message.content });
    } else if (message.role === 'assistant') {
      this.assistant(message.content, index);
    } else {
      this.user(message.content, index);
    }
  }

  /** Text and tool_use blocks: one assistant turn with its function calls. */
  private assistant(blocks: readonly RequestBlock[], index: number): void {
    const texts: string[] = [];
    const toolCalls: ToolCall[] = [];
    blocks.forEach((block, blockIndex) => {
      const param = `messages[${index}].content[${blockIndex}]`;
      switch (block.type) {
        case 'text':
          texts.push(block.text ?? '');
          break;
        case 'tool_use':
          this.needs.add(toolsNeed(`messages[${index}]`));
          toolCalls.push({
            id: block.id ?? '',
            type: 'function',
            function: { name: block.name ?? '', arguments: JSON.stringify(block.input ?? {}) },
          });
          break;
        case 'thinking':
        case 'redacted_thinking':
          // The model's own earlier reasoning, signed for Anthropic: nothing another model reads.
          break;
        default:
          this.skip(`${param}.type`, `a '${block.type}' block is Anthropic's own`);
      }
    });
    this.turns.push({
      role: 'assistant',
      content: texts.join('\n'),
      ...(toolCalls.length === 0 ? {} : { toolCalls }),
    });
  }

  /**
   * Tool results become tool turns (first, as Anthropic requires them to come); the message's
   * other content, and images returned by tools, one user turn after them.
   */
  private user(blocks: readonly RequestBlock[], index: number): void {
    const parts: ContentPart[] = [];
    let hasContent = false;
    blocks.forEach((block, blockIndex) => {
      const param = `messages[${index}].content[${blockIndex}]`;
      switch (block.type) {
        case 'tool_result':
          this.needs.add(toolsNeed(`messages[${index}]`));
          this.toolResult(block, param, parts);
          break;
        case 'tool_use':
          throw new InvalidParameterError(
            `${param}.type`,
            "A 'tool_use' block belongs in an assistant message.",
          );
        default:
          hasContent = true;
          this.contentBlock(block, param, parts);
      }
    });
    if (!hasContent && parts.length === 0) return;
    const text = parts
      .filter((part): part is Extract<ContentPart, { type: 'text' }> => part.type === 'text')
      .map((part) => part.text)
      .join('\n');
    const rich = parts.some((part) => part.type !== 'text');
    this.turns.push({ role: 'user', content: text, ...(rich ? { parts } : {}) });
  }

  /** A text, image or document block of a user message (or of a tool result). */
  private contentBlock(block: RequestBlock, param: string, parts: ContentPart[]): void {
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: block.text ?? '' });
        return;
      case 'image': {
        this.needs.add(visionNeed(param));
        const part = imagePart(block);
        if (part === undefined) {
          this.skip(`${param}.source.type`, 'only base64 and URL images are translated');
        } else parts.push(part);
        return;
      }
      case 'document': {
        const part = documentPart(block);
        if (part === undefined) {
          this.skip(`${param}.source.type`, 'only base64 and plain-text documents are translated');
        } else parts.push(part);
        return;
      }
      default:
        this.skip(`${param}.type`, `a '${block.type}' block is Anthropic's own`);
    }
  }

  private toolResult(block: RequestBlock, param: string, userParts: ContentPart[]): void {
    const texts: string[] = [];
    const content = block.content ?? '';
    if (typeof content === 'string') texts.push(content);
    else {
      content.forEach((inner, innerIndex) => {
        const innerParam = `${param}.content[${innerIndex}]`;
        if (inner.type === 'text') texts.push(inner.text ?? '');
        else if (inner.type === 'image') {
          // A tool turn holds text only: the images a tool returned follow as the user's.
          this.contentBlock(inner, innerParam, userParts);
        } else this.skip(`${innerParam}.type`, `a '${inner.type}' block in a tool result`);
      });
    }
    const text = texts.join('\n');
    this.turns.push({
      role: 'tool',
      content: block.is_error === true ? `Error: ${text}` : text,
      toolCallId: block.tool_use_id ?? '',
    });
  }
}

function functionTools(
  tools: readonly RequestTool[],
  translation: PromptTranslation,
): FunctionTool[] {
  const functions: FunctionTool[] = [];
  tools.forEach((tool, index) => {
    if (tool.type !== undefined && tool.type !== 'custom') {
      translation.skip(`tools[${index}].type`, `'${tool.type}' is a tool Anthropic's API runs`);
      return;
    }
    if (tool.input_schema === undefined) {
      throw new InvalidParameterError(
        `tools[${index}].input_schema`,
        `Tool '${tool.name}' needs an 'input_schema' (the JSON Schema of its input).`,
      );
    }
    functions.push({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        parameters: tool.input_schema,
      },
    });
  });
  return functions;
}

function toolChoiceOf(
  choice: RequestToolChoice | undefined,
  tools: readonly FunctionTool[],
  /** Every tool's name, Anthropic's server tools included. */
  names: readonly string[],
): { tool_choice?: ToolChoice; parallel_tool_calls?: boolean } {
  if (choice === undefined) return {};
  const parallel = choice.disable_parallel_tool_use === true ? { parallel_tool_calls: false } : {};
  switch (choice.type) {
    case 'auto':
    case 'none':
      // OpenAI refuses a tool_choice without tools; Anthropic takes it as meaning nothing.
      return tools.length === 0 ? {} : { tool_choice: choice.type, ...parallel };
    case 'any':
      if (names.length === 0) {
        throw new InvalidParameterError(
          'tool_choice.type',
          "tool_choice 'any' needs at least one tool in 'tools'.",
        );
      }
      return { tool_choice: 'required', ...parallel };
    case 'tool': {
      const name = choice.name ?? '';
      if (!names.includes(name)) {
        throw new InvalidParameterError(
          'tool_choice.name',
          `tool_choice names the tool '${name}', which is not among the request's tools.`,
        );
      }
      return { tool_choice: { type: 'function', function: { name } }, ...parallel };
    }
    default:
      throw new InvalidParameterError(
        'tool_choice.type',
        `tool_choice '${choice.type}' is not one of auto, any, tool, none.`,
      );
  }
}

/** `output_config`: its JSON schema as OpenAI's response_format, its effort as reasoning_effort. */
function outputParams(
  config: OutputConfig | undefined,
): Pick<ChatParams, 'response_format' | 'reasoning_effort'> {
  if (config === undefined) return {};
  const { format, effort } = config;
  const effortParam = effort === undefined || effort === null ? {} : { reasoning_effort: effort };
  if (format === undefined || format === null) return effortParam;
  if (format.type !== 'json_schema' || format.schema === undefined) {
    throw new InvalidParameterError(
      'output_config.format',
      "output_config.format must be { type: 'json_schema', schema: {…} }.",
    );
  }
  return {
    ...effortParam,
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'output', schema: format.schema, strict: true },
    },
  };
}

/** The prompt of a Messages (or count_tokens) request as turns and parameters. */
export function translatePrompt(body: PromptBody): TranslatedPrompt {
  const translation = new PromptTranslation();
  translation.system(body.system);
  body.messages.forEach((message, index) => translation.message(message, index));
  const last = body.messages[body.messages.length - 1];
  if (last?.role === 'assistant') {
    translation.skip(
      `messages[${body.messages.length - 1}].role`,
      "a last assistant message (a prefill of the answer) is Anthropic's",
    );
  }
  const tools = functionTools(body.tools ?? [], translation);
  const names = (body.tools ?? []).map((tool) => tool.name);
  const choice = toolChoiceOf(body.tool_choice, tools, names);
  if (tools.length > 0 && choice.tool_choice !== 'none') {
    translation.needs.add({ capability: 'tools', param: 'tools', what: 'tool calling' });
  }
  // Adaptive thinking leaves it to the model: one that does not think just answers.
  const thinking = body.thinking?.type;
  if (thinking !== undefined && thinking !== 'disabled' && thinking !== 'adaptive') {
    translation.skip('thinking.type', `extended thinking ('${thinking}') is Anthropic's`);
  }
  const output = outputParams(body.output_config);
  if (output.response_format !== undefined) {
    translation.needs.add({
      capability: 'json_schema',
      param: 'output_config.format',
      what: 'JSON-schema output',
    });
  }
  for (const [field, why] of Object.entries(anthropicOnly)) {
    if (body[field] !== undefined && body[field] !== null) translation.skip(field, why);
  }
  return {
    messages: translation.turns,
    params: {
      ...(tools.length === 0 ? {} : { tools }),
      ...choice,
      ...output,
    },
    untranslatable: translation.untranslatable,
    // Tools, then what the turns ask for in their order: the first field asking is named.
    needs: [
      ...translation.needs.list().filter((need) => need.param === 'tools'),
      ...translation.needs.list().filter((need) => need.param !== 'tools'),
    ],
  };
}

/** The chat turn a Messages request asks for. */
export function messagesCallOf(body: MessagesRequestBody): MessagesCall {
  const prompt = translatePrompt(body);
  const stop = body.stop_sequences ?? [];
  const userId = body.metadata?.user_id;
  const params: ChatParams = {
    ...prompt.params,
    ...(stop.length === 0 ? {} : { stop }),
    ...(body.top_p === undefined ? {} : { top_p: body.top_p }),
    ...(typeof userId === 'string' ? { user: userId } : {}),
  };
  return {
    ...prompt,
    params,
    persist: body.user_id !== undefined || body.conversation_id !== undefined,
    userId: body.user_id ?? null,
    conversationId: body.conversation_id ?? null,
    requestedModel: body.model,
    maxTokens: body.max_tokens,
    temperature: body.temperature,
    stream: body.stream === true,
  };
}

/** The tokens a count_tokens request counts: its turns, and its tools as text. */
export function countedTurns(prompt: TranslatedPrompt): ChatTurn[] {
  const tools = prompt.params.tools ?? [];
  return tools.length === 0
    ? prompt.messages
    : [...prompt.messages, { role: 'system', content: JSON.stringify(tools) }];
}

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

export type StopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'refusal';

export function anthropicStopReason(reason: FinishReason): StopReason {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    case 'stop':
    case 'other':
      return 'end_turn';
  }
}

/** Anthropic's usage: its input excludes the tokens its cache served (reported apart). */
export function anthropicUsage(usage: TokenUsage) {
  const cached = usage.cachedTokens;
  return {
    input_tokens: Math.max(0, usage.promptTokens - (cached ?? 0)),
    output_tokens: usage.completionTokens,
    ...(cached === undefined ? {} : { cache_read_input_tokens: cached }),
  };
}

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
function storedIds(conversationId: string | null, messageId: string) {
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

/** One Server-Sent Event of Anthropic's stream: `event: <name>` and its `data:`. */
export interface MessageEvent {
  readonly event: string;
  readonly data: unknown;
}

/** One streamed answer's state: its content blocks so far. */
export interface MessageEventStream {
  /** The open block (its index), or null. */
  open: number | null;
  /** Whether the open block is text (else a tool_use). */
  openIsText: boolean;
  /** The next block's index. */
  next: number;
  /** OpenAI's index of each call → its tool_use block's index. */
  readonly calls: Map<number, number>;
}

export function messageEventStream(): MessageEventStream {
  return { open: null, openIsText: false, next: 0, calls: new Map() };
}

const event = (name: string, data: Json): MessageEvent => ({
  event: name,
  data: { type: name, ...data },
});

function closeBlock(stream: MessageEventStream, events: MessageEvent[]): void {
  if (stream.open === null) return;
  events.push(event('content_block_stop', { index: stream.open }));
  stream.open = null;
}

function openBlock(stream: MessageEventStream, block: Json, events: MessageEvent[]): number {
  closeBlock(stream, events);
  const index = stream.next;
  stream.next += 1;
  stream.open = index;
  stream.openIsText = block.type === 'text';
  events.push(event('content_block_start', { index, content_block: block }));
  return index;
}

/** The text block to append to: the open one when it is text, else a new one. */
function textBlock(stream: MessageEventStream, events: MessageEvent[]): number {
  if (stream.open !== null && stream.openIsText) return stream.open;
  return openBlock(stream, { type: 'text', text: '' }, events);
}

/**
 * The events one stream event becomes, in Anthropic's sequence: message_start; per block
 * content_block_start, its deltas (text_delta, input_json_delta), content_block_stop;
 * message_delta (stop reason, usage) and message_stop. `last`: the stream ends with them (an
 * error, Anthropic's `event: error`).
 */
export function messageEventsOf(
  stream: MessageEventStream,
  chatEvent: ChatStreamEvent,
  requestId: string,
): { events: MessageEvent[]; last: boolean } {
  const events: MessageEvent[] = [];
  switch (chatEvent.type) {
    case 'start':
      // The input is counted by the model as it answers: message_delta reports it.
      events.push(
        event('message_start', {
          message: {
            id: chatEvent.messageId,
            type: 'message',
            role: 'assistant',
            model: chatEvent.model.name,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 0, output_tokens: 0 },
            ...storedIds(chatEvent.conversationId, chatEvent.messageId),
          },
        }),
      );
      break;
    case 'delta':
    case 'refusal': {
      if (chatEvent.text === '') break;
      const index = textBlock(stream, events);
      events.push(
        event('content_block_delta', {
          index,
          delta: { type: 'text_delta', text: chatEvent.text },
        }),
      );
      break;
    }
    case 'tool-call': {
      let index = stream.calls.get(chatEvent.index);
      if (index === undefined) {
        index = openBlock(
          stream,
          {
            type: 'tool_use',
            id: chatEvent.id ?? `toolu_${requestId}_${chatEvent.index}`,
            name: chatEvent.name ?? '',
            input: {},
          },
          events,
        );
        stream.calls.set(chatEvent.index, index);
      }
      // A server interleaving parallel calls' deltas: each still lands on its call's block.
      if (chatEvent.arguments !== '') {
        events.push(
          event('content_block_delta', {
            index,
            delta: { type: 'input_json_delta', partial_json: chatEvent.arguments },
          }),
        );
      }
      break;
    }
    case 'end': {
      closeBlock(stream, events);
      const { outcome } = chatEvent;
      events.push(
        event('message_delta', {
          delta: { stop_reason: anthropicStopReason(outcome.finishReason), stop_sequence: null },
          usage: anthropicUsage(outcome.usage),
        }),
        event('message_stop', {}),
      );
      break;
    }
    case 'error':
      return {
        events: [{ event: 'error', data: anthropicErrorBody(chatEvent.error, requestId) }],
        last: true,
      };
  }
  return { events, last: false };
}

// ---------------------------------------------------------------------------------------------
// Errors, and answers passed through
// ---------------------------------------------------------------------------------------------

/**
 * Anthropic's error type for an error: the catalog's own for 4xx (they are Anthropic's names);
 * a busy or unavailable model is `overloaded_error`; any other failure is `api_error`.
 */
export function anthropicErrorType(error: AppError): string {
  if (error.status === 503) return 'overloaded_error';
  if (error.status >= 500) return 'api_error';
  return error.type;
}

/**
 * Anthropic's error body. The contract's `code` and `param` (and details such as a rate limit's
 * window) ride along inside `error`, where Anthropic's clients ignore them.
 */
export function anthropicErrorBody(error: AppError, requestId: string) {
  return {
    type: 'error' as const,
    error: {
      ...error.details,
      type: anthropicErrorType(error),
      message: error.message,
      code: error.code,
      param: error.param,
    },
    request_id: requestId,
  };
}

/** A passed-through answer under the platform's id and the catalog's model name. */
export function passedThroughMessage(message: Json, id: string, model: string): Json {
  return { ...message, id, model };
}

/** A passed-through event: message_start carries the platform's id and model; others as sent. */
export function passedThroughEvent(
  passed: PassthroughEvent,
  id: string,
  model: string,
): MessageEvent {
  const { data } = passed;
  if (data.type === 'message_start' && typeof data.message === 'object' && data.message !== null) {
    return {
      event: passed.event,
      data: { ...data, message: { ...(data.message as Json), id, model } },
    };
  }
  return passed;
}

/** Anthropic's request headers the pass-through forwards, checked (they become upstream headers). */
export function forwardedHeaders(headers: Readonly<Record<string, unknown>>): {
  version: string | undefined;
  beta: string | undefined;
} {
  const read = (name: string, pattern: RegExp): string | undefined => {
    const value = headers[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !pattern.test(value)) {
      throw new AppError('invalid_parameter', `The '${name}' header is not a valid value.`, {
        param: name,
      });
    }
    return value;
  };
  return {
    version: read('anthropic-version', /^[A-Za-z0-9._-]{1,64}$/),
    beta: read('anthropic-beta', /^[A-Za-z0-9._, -]{1,1024}$/),
  };
}
