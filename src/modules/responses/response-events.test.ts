// The Responses dialect's answer side, directly: an outcome or stream events into a `Response`
// and OpenAI's event sequence, and the pages of a response's input items.
import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors/app-error.js';
import type { ModelDefinition } from '../../config/config.js';
import type { ChatOutcome, ChatStreamEvent } from '../chat/chat-service.js';
import { itemListPage } from './input-item-list.js';
import { responseOfOutcome, ResponseEvents } from './response-events.js';
import { responseCallOf } from './responses-call.js';
import type { InputItemResource } from './responses-request.js';

const model = { name: 'm' } as ModelDefinition;
const echo = responseCallOf({ input: 'x' }).echo;

function outcome(fields: Partial<ChatOutcome>): ChatOutcome {
  return {
    text: '',
    finishReason: 'stop',
    usage: { promptTokens: 3, completionTokens: 2 },
    model,
    conversationId: null,
    messageId: 'msg_abc',
    latencyMs: 1,
    ...fields,
  };
}

describe('a Response and its events', () => {
  it('is a message for text, function calls after it, with ids from the answer', () => {
    const response = responseOfOutcome(
      echo,
      100,
      outcome({
        text: 'Let me check.',
        finishReason: 'tool_calls',
        toolCalls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      }),
      () => 101_000,
    );
    expect(response).toMatchObject({
      id: 'resp_abc',
      created_at: 100,
      completed_at: 101,
      status: 'completed',
      output: [
        {
          id: 'msg_abc',
          type: 'message',
          content: [{ type: 'output_text', text: 'Let me check.' }],
        },
        { id: 'fc_abc_0', type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      ],
      usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
      conversation: null,
    });
  });

  it('is incomplete when the token limit cut it, with a refusal part when the model refused', () => {
    const response = responseOfOutcome(
      echo,
      1,
      outcome({ text: 'Partial', refusal: 'No.', finishReason: 'length' }),
    );
    expect(response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [
        {
          status: 'incomplete',
          content: [
            { type: 'output_text', text: 'Partial' },
            { type: 'refusal', refusal: 'No.' },
          ],
        },
      ],
    });
  });

  it('streams text after a function call as a second message item, every event numbered', () => {
    const events = new ResponseEvents(echo, 1, () => 2000);
    const script: ChatStreamEvent[] = [
      { type: 'start', conversationId: 'conv_1', messageId: 'msg_xyz', model },
      { type: 'tool-call', index: 0, id: 'c1', name: 'f', arguments: '' },
      { type: 'tool-call', index: 0, arguments: '{"a":' },
      { type: 'tool-call', index: 0, arguments: '1}' },
      { type: 'delta', text: 'Done' },
      { type: 'end', outcome: outcome({ text: 'Done', messageId: 'msg_xyz' }) },
    ];
    const all = script.flatMap((event) => events.next(event));
    expect(all.map((event) => event.sequence_number)).toEqual(all.map((_, index) => index));
    expect(all.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.final?.output).toEqual([
      {
        id: 'fc_xyz_0',
        type: 'function_call',
        status: 'completed',
        arguments: '{"a":1}',
        call_id: 'c1',
        name: 'f',
      },
      {
        id: 'msg_xyz',
        type: 'message',
        status: 'completed',
        content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Done' }],
        role: 'assistant',
      },
    ]);
    expect(events.final?.conversation).toEqual({ id: 'conv_1' });
  });

  it('ends a failed stream with an error event and response.failed', () => {
    const events = new ResponseEvents(echo, 1);
    events.next({ type: 'start', conversationId: null, messageId: 'msg_q', model });
    events.next({ type: 'delta', text: 'Hal' });
    const failure = new AppError('upstream_error', 'The model failed.');
    expect(events.next({ type: 'error', error: failure })).toMatchObject([
      { type: 'error', code: 'upstream_error', message: 'The model failed.', param: null },
      {
        type: 'response.failed',
        response: {
          status: 'failed',
          error: { code: 'server_error', message: 'The model failed.' },
          output: [{ status: 'incomplete', content: [{ text: 'Hal' }] }],
        },
      },
    ]);
  });
});

describe('a page of input items', () => {
  const items: InputItemResource[] = ['a', 'b', 'c'].map((id) => ({ id, type: 'message' }));
  it('lists newest first, and pages after an id', () => {
    expect(itemListPage(items, { limit: 2, order: 'desc' })).toEqual({
      object: 'list',
      data: [items[2], items[1]],
      first_id: 'c',
      last_id: 'b',
      has_more: true,
    });
    expect(itemListPage(items, { limit: 2, order: 'desc', after: 'b' })).toMatchObject({
      data: [items[0]],
      has_more: false,
    });
    expect(itemListPage(items, { limit: 5, order: 'asc', after: 'nope' })).toMatchObject({
      data: [],
      first_id: '',
      has_more: false,
    });
  });
});
