// A streamed answer as Anthropic's event sequence: message_start; per content block
// content_block_start, its deltas (text_delta, input_json_delta) and content_block_stop;
// message_delta (stop reason, usage) and message_stop — or `event: error` when it fails midway.
import type { ChatStreamEvent } from '../chat/chat-service.js';
import { storedIds } from './anthropic-answer.js';
import { anthropicErrorBody } from './anthropic-errors.js';
import { anthropicStopReason, anthropicUsage } from './anthropic-finish.js';
import type { Json } from './anthropic-request.js';

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

/** message_start: the message without content (the input is counted as the model answers). */
function messageStart(start: Extract<ChatStreamEvent, { type: 'start' }>): MessageEvent {
  return event('message_start', {
    message: {
      id: start.messageId,
      type: 'message',
      role: 'assistant',
      model: start.model.name,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0 },
      ...storedIds(start.conversationId, start.messageId),
    },
  });
}

/** A piece of a tool call: its tool_use block opened on its first, its input's JSON as deltas. */
function toolUseEvents(
  stream: MessageEventStream,
  call: Extract<ChatStreamEvent, { type: 'tool-call' }>,
  requestId: string,
  events: MessageEvent[],
): void {
  let index = stream.calls.get(call.index);
  if (index === undefined) {
    index = openBlock(
      stream,
      {
        type: 'tool_use',
        id: call.id ?? `toolu_${requestId}_${call.index}`,
        name: call.name ?? '',
        input: {},
      },
      events,
    );
    stream.calls.set(call.index, index);
  }
  // A server interleaving parallel calls' deltas: each still lands on its call's block.
  if (call.arguments !== '') {
    events.push(
      event('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: call.arguments },
      }),
    );
  }
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
      events.push(messageStart(chatEvent));
      break;
    case 'relayed':
      // Only a Chat Completions stream asks for an upstream's own chunks.
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
    case 'tool-call':
      toolUseEvents(stream, chatEvent, requestId, events);
      break;
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
