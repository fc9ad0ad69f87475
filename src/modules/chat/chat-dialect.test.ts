// The contract's own dialect (/v1/chat), directly: a body into a stored turn, and each stream event
// into the contract's events (a refusal shows nothing yet; an error is the last event).
import { describe, expect, it } from 'vitest';
import type { ModelDefinition } from '../../config/config.js';
import { AppError } from '../../errors/app-error.js';
import { chatCallOf, chatDialect } from './chat-dialect.js';
import type { ChatOutcome, ChatStreamEvent } from './chat-service.js';
import type { EventBatch } from './turn-dialect.js';

const model = { name: 'unit-chat' } as ModelDefinition;

const outcome: ChatOutcome = {
  text: 'Hi there.',
  finishReason: 'stop',
  usage: { promptTokens: 5, completionTokens: 2 },
  model,
  conversationId: 'conv_1',
  messageId: 'msg_1',
  latencyMs: 7,
};

describe('a /v1/chat body', () => {
  it('asks for a stored turn of its conversation, tools as the only parameters', () => {
    const tools = [{ type: 'function' as const, function: { name: 'look', parameters: {} } }];
    const call = chatCallOf({
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      user_id: 'user-1',
      conversation_id: 'conv_1',
      max_tokens: 20,
      stream: true,
      tools,
    });
    expect(call).toEqual({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      params: { tools },
      requestedModel: undefined,
      maxTokens: 20,
      temperature: undefined,
      stream: true,
      persist: true,
      userId: 'user-1',
      conversationId: 'conv_1',
    });
    expect(chatCallOf({ messages: [{ role: 'user', content: 'x' }], user_id: 'u' })).toMatchObject({
      params: undefined,
      stream: false,
      conversationId: null,
    });
  });
});

describe("the contract's events", () => {
  it('start, deltas and tool-call pieces, then end with the whole answer; a refusal shows nothing', () => {
    const mapping = chatDialect.stream(chatCallOf({ messages: [], user_id: 'u' }), () => {});
    const batches = (
      [
        { type: 'start', conversationId: 'conv_1', messageId: 'msg_1', model },
        { type: 'delta', text: 'Hi' },
        { type: 'refusal', text: 'No.' },
        { type: 'tool-call', index: 0, id: 'call_1', name: 'look', arguments: '{"q":' },
        { type: 'tool-call', index: 0, arguments: '1}' },
        { type: 'end', outcome },
      ] satisfies ChatStreamEvent[]
    ).map((event) => mapping.next(event) as EventBatch);
    expect(batches.map((batch) => batch.events.map((event) => event.data))).toEqual([
      [{ type: 'start', conversation_id: 'conv_1', message_id: 'msg_1', model: 'unit-chat' }],
      [{ type: 'delta', content: 'Hi' }],
      [],
      [{ type: 'tool_call', index: 0, id: 'call_1', name: 'look', arguments: '{"q":' }],
      [{ type: 'tool_call', index: 0, arguments: '1}' }],
      [
        {
          type: 'end',
          message: 'Hi there.',
          conversation_id: 'conv_1',
          message_id: 'msg_1',
          model: 'unit-chat',
          usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
          finish_reason: 'stop',
          latency_ms: 7,
        },
      ],
    ]);
    expect(batches.every((batch) => !batch.last)).toBe(true);
    expect(batches.flatMap((batch) => batch.events).every((event) => !event.event)).toBe(true);
  });

  it("ends with an error event in the contract's error body", () => {
    const mapping = chatDialect.stream(chatCallOf({ messages: [], user_id: 'u' }), () => {});
    const error = new AppError('upstream_error', 'The model failed.');
    const batch = mapping.next({ type: 'error', error }) as EventBatch;
    expect(batch).toEqual({
      events: [{ data: { type: 'error', error: error.toBody().error } }],
      last: true,
    });
  });
});
