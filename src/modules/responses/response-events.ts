// A response's events, from the chat service's stream events: OpenAI's Responses event sequence
// (`response.created` … `response.completed`, each with its `sequence_number`), and a whole answer
// as the `Response` its stream would have ended with. Plain values; the request side is
// responses-call.ts.
import type { AppError } from '../../errors/app-error.js';
import type { ChatOutcome, ChatStreamEvent } from '../chat/chat-service.js';
import {
  ending,
  failureCode,
  responseBody,
  responseIdOf,
  type ResponseFrame,
  type ResponseObject,
} from './response-object.js';
import {
  itemJson,
  refusalPart,
  textPart,
  type CallItem,
  type MessageItem,
  type StreamItem,
} from './response-items.js';
import type { ResponseEcho } from './responses-request.js';

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
      case 'start':
        this.start(event, emit);
        break;
      case 'relayed':
        // Only a Chat Completions stream asks for an upstream's own chunks.
        break;
      case 'delta':
        if (event.text !== '') this.text(event.text, emit);
        break;
      case 'refusal':
        if (event.text !== '') this.refusal(event.text, emit);
        break;
      case 'tool-call':
        this.toolCall(event, emit);
        break;
      case 'end':
        this.end(event.outcome, emit);
        break;
      case 'error':
        this.fail(event.error, emit);
        break;
    }
    return out;
  }

  private start(event: Extract<ChatStreamEvent, { type: 'start' }>, emit: Emit): void {
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
  }

  private end(outcome: ChatOutcome, emit: Emit): void {
    const { status, incompleteReason } = ending(outcome.finishReason);
    // An answer with nothing in it is still one message, with empty text.
    if (this.items.length === 0) this.openText(emit);
    this.close(emit, status === 'incomplete' ? 'incomplete' : 'completed');
    this.final = responseBody(this.requireFrame(), {
      status,
      output: this.items.map(itemJson),
      usage: outcome.usage,
      completedAt: Math.max(this.createdAt, Math.floor(this.now() / 1000)),
      incompleteReason,
    });
    emit(status === 'completed' ? 'response.completed' : 'response.incomplete', {
      response: this.final,
    });
  }

  private fail(error: AppError, emit: Emit): void {
    emit('error', { code: error.code, message: error.message, param: error.param });
    if (this.frame === null) return;
    for (const item of this.items) if (item.status === 'in_progress') item.status = 'incomplete';
    this.final = responseBody(this.frame, {
      status: 'failed',
      output: this.items.map(itemJson),
      error: { code: failureCode(error), message: error.message },
    });
    emit('response.failed', { response: this.final });
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
