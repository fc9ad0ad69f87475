// A response of the Responses API, from the chat service's outcome or stream events: OpenAI's
// `Response` object, the Responses event sequence (`response.created` … `response.completed`,
// each with its `sequence_number`), and the pages of a response's input items. Plain values; the
// request side is responses-dialect.ts.
import type { AppError } from '../../errors/app-error.js';
import type { FinishReason, TokenUsage } from '../../models/spec.js';
import type { ChatOutcome, ChatStreamEvent } from '../chat/chat-service.js';
import type { InputItemResource, ResponseEcho } from './responses-dialect.js';

/** A response's id, from the id of the stored answer (its message item keeps that id). */
export function responseIdOf(messageId: string): string {
  return `resp_${messageId.slice('msg_'.length)}`;
}

/** What a response says about itself beyond its output, fixed when it starts. */
export interface ResponseFrame {
  readonly id: string;
  /** Unix seconds. */
  readonly createdAt: number;
  readonly model: string;
  /** The conversation its turns are stored in (null: not stored). */
  readonly conversationId: string | null;
  readonly echo: ResponseEcho;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

interface ResponseState {
  readonly status: ResponseStatus;
  readonly output: readonly Record<string, unknown>[];
  readonly usage?: TokenUsage | undefined;
  readonly completedAt?: number | undefined;
  readonly incompleteReason?: 'max_output_tokens' | 'content_filter' | undefined;
  readonly error?: { code: string; message: string } | undefined;
}

export function usageJson(usage: TokenUsage) {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens ?? 0, cache_write_tokens: 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** OpenAI's `Response` object, in its field order. */
export function responseBody(frame: ResponseFrame, state: ResponseState) {
  const { echo } = frame;
  return {
    id: frame.id,
    object: 'response' as const,
    created_at: frame.createdAt,
    status: state.status,
    completed_at: state.completedAt ?? null,
    error: state.error ?? null,
    incomplete_details:
      state.incompleteReason === undefined ? null : { reason: state.incompleteReason },
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    model: frame.model,
    output: state.output,
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: echo.previous_response_id,
    reasoning: echo.reasoning,
    store: echo.store,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    ...(state.usage === undefined ? {} : { usage: usageJson(state.usage) }),
    ...(echo.user === undefined ? {} : { user: echo.user }),
    metadata: echo.metadata,
    conversation: frame.conversationId === null ? null : { id: frame.conversationId },
  };
}

export type ResponseObject = ReturnType<typeof responseBody>;

/** A response's status, and why it is incomplete, from its finish reason. */
function ending(reason: FinishReason): {
  status: 'completed' | 'incomplete';
  incompleteReason?: 'max_output_tokens' | 'content_filter';
} {
  if (reason === 'length') return { status: 'incomplete', incompleteReason: 'max_output_tokens' };
  if (reason === 'content_filter') {
    return { status: 'incomplete', incompleteReason: 'content_filter' };
  }
  return { status: 'completed' };
}

/** A ResponseErrorCode of OpenAI's schema for a failure. */
function failureCode(error: AppError): string {
  return error.code === 'rate_limit_exceeded' ? 'rate_limit_exceeded' : 'server_error';
}

type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

interface MessageItem {
  readonly kind: 'message';
  readonly id: string;
  readonly outputIndex: number;
  text: string;
  refusal: string;
  /** Content indexes of the text and refusal parts, once opened. */
  textIndex: number | null;
  refusalIndex: number | null;
  parts: number;
  status: ItemStatus;
}

interface CallItem {
  readonly kind: 'call';
  readonly id: string;
  readonly outputIndex: number;
  /** The tool call's index in the model's stream. */
  readonly index: number;
  callId: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}

type StreamItem = MessageItem | CallItem;

function itemJson(item: StreamItem): Record<string, unknown> {
  if (item.kind === 'call') {
    return {
      id: item.id,
      type: 'function_call',
      status: item.status,
      arguments: item.arguments,
      call_id: item.callId,
      name: item.name,
    };
  }
  const content: Array<{ index: number; part: Record<string, unknown> }> = [];
  if (item.textIndex !== null) content.push({ index: item.textIndex, part: textPart(item.text) });
  if (item.refusalIndex !== null) {
    content.push({ index: item.refusalIndex, part: refusalPart(item.refusal) });
  }
  return {
    id: item.id,
    type: 'message',
    status: item.status,
    content: content.sort((a, b) => a.index - b.index).map(({ part }) => part),
    role: 'assistant',
  };
}

function textPart(text: string) {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

function refusalPart(refusal: string) {
  return { type: 'refusal', refusal };
}

/**
 * One response's events, from the chat service's: OpenAI's Responses event sequence with a
 * `sequence_number` on each. Output items open as their first piece arrives (a message for text
 * or a refusal, a function call per tool call) and close when the next one opens or the answer
 * ends; the `response.completed` (or `response.incomplete`) event carries the whole response,
 * `final`. A failure after the start is an `error` event, then `response.failed`.
 */
export class ResponseEvents {
  private sequence = 0;
  private frame: ResponseFrame | null = null;
  private readonly items: StreamItem[] = [];
  private open: StreamItem | null = null;
  private messages = 0;
  private calls = 0;
  private base = '';
  private messageId = '';
  /** The whole response, once it ended (completed, incomplete or failed). */
  final: ResponseObject | null = null;

  constructor(
    private readonly echo: ResponseEcho,
    private readonly createdAt: number,
    /** Epoch milliseconds, for `completed_at`. */
    private readonly now: () => number = Date.now,
  ) {}

  /** The response's id, once the answer started. */
  get responseId(): string | null {
    return this.frame?.id ?? null;
  }

  /** The stored answer's message id, once the answer started. */
  get answerMessageId(): string {
    return this.messageId;
  }

  next(event: ChatStreamEvent): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    const emit = (type: string, fields: Record<string, unknown>) => {
      out.push({ type, sequence_number: this.sequence++, ...fields });
    };
    switch (event.type) {
      case 'start': {
        this.messageId = event.messageId;
        this.base = event.messageId.slice('msg_'.length);
        this.frame = {
          id: responseIdOf(event.messageId),
          createdAt: this.createdAt,
          model: event.model.name,
          conversationId: event.conversationId,
          echo: this.echo,
        };
        const started = responseBody(this.frame, { status: 'in_progress', output: [] });
        emit('response.created', { response: started });
        emit('response.in_progress', { response: started });
        break;
      }
      case 'delta':
        if (event.text !== '') this.text(event.text, emit);
        break;
      case 'refusal':
        if (event.text !== '') this.refusal(event.text, emit);
        break;
      case 'tool-call':
        this.toolCall(event, emit);
        break;
      case 'end': {
        const { status, incompleteReason } = ending(event.outcome.finishReason);
        // An answer with nothing in it is still one message, with empty text.
        if (this.items.length === 0) this.openText(emit);
        this.close(emit, status === 'incomplete' ? 'incomplete' : 'completed');
        this.final = responseBody(this.requireFrame(), {
          status,
          output: this.items.map(itemJson),
          usage: event.outcome.usage,
          completedAt: Math.max(this.createdAt, Math.floor(this.now() / 1000)),
          incompleteReason,
        });
        emit(status === 'completed' ? 'response.completed' : 'response.incomplete', {
          response: this.final,
        });
        break;
      }
      case 'error': {
        const { error } = event;
        emit('error', { code: error.code, message: error.message, param: error.param });
        if (this.frame === null) break;
        for (const item of this.items)
          if (item.status === 'in_progress') item.status = 'incomplete';
        this.final = responseBody(this.frame, {
          status: 'failed',
          output: this.items.map(itemJson),
          error: { code: failureCode(error), message: error.message },
        });
        emit('response.failed', { response: this.final });
        break;
      }
    }
    return out;
  }

  private requireFrame(): ResponseFrame {
    if (this.frame === null) throw new Error('a response event before the start');
    return this.frame;
  }

  /** The open message item, opened (after closing a function call) when there is none. */
  private message(emit: Emit): MessageItem {
    if (this.open?.kind === 'message') return this.open;
    this.close(emit, 'completed');
    const item: MessageItem = {
      kind: 'message',
      id: this.messages === 0 ? this.messageId : `msg_${this.base}_${this.messages}`,
      outputIndex: this.items.length,
      text: '',
      refusal: '',
      textIndex: null,
      refusalIndex: null,
      parts: 0,
      status: 'in_progress',
    };
    this.messages += 1;
    this.items.push(item);
    this.open = item;
    emit('response.output_item.added', { output_index: item.outputIndex, item: itemJson(item) });
    return item;
  }

  private openText(emit: Emit): MessageItem {
    const item = this.message(emit);
    if (item.textIndex === null) {
      item.textIndex = item.parts++;
      emit('response.content_part.added', {
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: item.textIndex,
        part: textPart(''),
      });
    }
    return item;
  }

  private text(text: string, emit: Emit): void {
    const item = this.openText(emit);
    item.text += text;
    emit('response.output_text.delta', {
      item_id: item.id,
      output_index: item.outputIndex,
      content_index: item.textIndex,
      delta: text,
      logprobs: [],
    });
  }

  private refusal(text: string, emit: Emit): void {
    const item = this.message(emit);
    if (item.refusalIndex === null) {
      item.refusalIndex = item.parts++;
      emit('response.content_part.added', {
        item_id: item.id,
        output_index: item.outputIndex,
        content_index: item.refusalIndex,
        part: refusalPart(''),
      });
    }
    item.refusal += text;
    emit('response.refusal.delta', {
      item_id: item.id,
      output_index: item.outputIndex,
      content_index: item.refusalIndex,
      delta: text,
    });
  }

  private toolCall(event: Extract<ChatStreamEvent, { type: 'tool-call' }>, emit: Emit): void {
    let item = this.items.find(
      (candidate): candidate is CallItem =>
        candidate.kind === 'call' && candidate.index === event.index,
    );
    if (item === undefined) {
      this.close(emit, 'completed');
      item = {
        kind: 'call',
        id: `fc_${this.base}_${this.calls}`,
        outputIndex: this.items.length,
        index: event.index,
        callId: event.id ?? '',
        name: event.name ?? '',
        arguments: '',
        status: 'in_progress',
      };
      this.calls += 1;
      this.items.push(item);
      this.open = item;
      emit('response.output_item.added', { output_index: item.outputIndex, item: itemJson(item) });
    } else {
      if (item.callId === '' && event.id !== undefined) item.callId = event.id;
      if (item.name === '' && event.name !== undefined) item.name = event.name;
    }
    if (event.arguments === '') return;
    item.arguments += event.arguments;
    // Providers stream one call after another; a late fragment of a call already closed is kept
    // in the call (and in the final response) without an event of its own.
    if (this.open !== item) return;
    emit('response.function_call_arguments.delta', {
      item_id: item.id,
      output_index: item.outputIndex,
      delta: event.arguments,
    });
  }

  /** Closes the open item: its parts' and its own `done` events. */
  private close(emit: Emit, status: 'completed' | 'incomplete'): void {
    const item = this.open;
    if (item === null) return;
    this.open = null;
    item.status = status;
    if (item.kind === 'call') {
      emit('response.function_call_arguments.done', {
        item_id: item.id,
        output_index: item.outputIndex,
        name: item.name,
        arguments: item.arguments,
      });
    } else {
      const parts = [
        { index: item.textIndex, kind: 'text' as const },
        { index: item.refusalIndex, kind: 'refusal' as const },
      ]
        .filter((part): part is { index: number; kind: 'text' | 'refusal' } => part.index !== null)
        .sort((a, b) => a.index - b.index);
      for (const part of parts) {
        const where = {
          item_id: item.id,
          output_index: item.outputIndex,
          content_index: part.index,
        };
        if (part.kind === 'text') {
          emit('response.output_text.done', { ...where, text: item.text, logprobs: [] });
          emit('response.content_part.done', { ...where, part: textPart(item.text) });
        } else {
          emit('response.refusal.done', { ...where, refusal: item.refusal });
          emit('response.content_part.done', { ...where, part: refusalPart(item.refusal) });
        }
      }
    }
    emit('response.output_item.done', { output_index: item.outputIndex, item: itemJson(item) });
  }
}

type Emit = (type: string, fields: Record<string, unknown>) => void;

/**
 * A whole answer as a `Response`: the same items, ids and statuses its stream would have had
 * (its text, its refusal, then its function calls).
 */
export function responseOfOutcome(
  echo: ResponseEcho,
  createdAt: number,
  outcome: ChatOutcome,
  now?: () => number,
): ResponseObject {
  const events = new ResponseEvents(echo, createdAt, now);
  events.next({
    type: 'start',
    conversationId: outcome.conversationId,
    messageId: outcome.messageId,
    model: outcome.model,
  });
  events.next({ type: 'delta', text: outcome.text });
  if (outcome.refusal !== undefined) events.next({ type: 'refusal', text: outcome.refusal });
  (outcome.toolCalls ?? []).forEach((call, index) => {
    events.next({
      type: 'tool-call',
      index,
      id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
    });
  });
  events.next({ type: 'end', outcome });
  return events.final!;
}

// ---------------------------------------------------------------------------------------------
// Listing input items

export interface ItemListQuery {
  readonly after?: string | undefined;
  readonly limit: number;
  readonly order: 'asc' | 'desc';
}

/** A page of a response's input items (OpenAI's `ResponseItemList`), after the `after` item. */
export function itemListPage(items: readonly InputItemResource[], query: ItemListQuery) {
  const ordered = query.order === 'asc' ? [...items] : [...items].reverse();
  const start =
    query.after === undefined ? 0 : ordered.findIndex((item) => item.id === query.after) + 1;
  const data = start === 0 && query.after !== undefined ? [] : ordered.slice(start);
  const page = data.slice(0, query.limit);
  return {
    object: 'list' as const,
    data: page,
    first_id: page[0]?.id ?? '',
    last_id: page[page.length - 1]?.id ?? '',
    has_more: data.length > page.length,
  };
}
