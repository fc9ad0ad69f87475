// The Messages dialect's answer side, directly: an outcome or stream events into Anthropic's
// message and event sequence, its error types, and the pass-through's rewriting.
import { describe, expect, it } from 'vitest';
import type { ModelDefinition } from '../../config/config.js';
import { AppError } from '../../errors/app-error.js';
import { UpstreamError } from '../../models/spec.js';
import type { ChatOutcome, ChatStreamEvent } from '../chat/chat-service.js';
import { messageBody, toolInput } from './anthropic-answer.js';
import { anthropicErrorBody } from './anthropic-errors.js';
import { messageEventStream, messageEventsOf, type MessageEvent } from './anthropic-events.js';
import { anthropicStopReason } from './anthropic-finish.js';
import { forwardedHeaders, passedThroughEvent } from './messages-passthrough.js';

const model = { name: 'fake-tools' } as ModelDefinition;

function outcome(overrides: Partial<ChatOutcome> = {}): ChatOutcome {
  return {
    text: 'Hello there.',
    finishReason: 'stop',
    usage: { promptTokens: 12, completionTokens: 3 },
    model,
    conversationId: null,
    messageId: 'msg_abc123',
    latencyMs: 40,
    ...overrides,
  };
}

function thrown(action: () => unknown): AppError {
  try {
    action();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('nothing was thrown');
}

/** The events a sequence of stream events becomes, up to the one a stream ends with. */
function eventsFor(events: ChatStreamEvent[]): MessageEvent[] {
  const stream = messageEventStream();
  const all: MessageEvent[] = [];
  for (const event of events) {
    const { events: translated, last } = messageEventsOf(stream, event, 'req_1');
    all.push(...translated);
    if (last) break;
  }
  return all;
}

describe("Anthropic's answers", () => {
  it('are a message with text and tool_use blocks, usage without the cached input', () => {
    expect(
      messageBody(
        outcome({
          text: '',
          finishReason: 'tool_calls',
          usage: { promptTokens: 30, completionTokens: 5, cachedTokens: 10 },
          toolCalls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        }),
      ),
    ).toEqual({
      id: 'msg_abc123',
      type: 'message',
      role: 'assistant',
      model: 'fake-tools',
      content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 5, cache_read_input_tokens: 10 },
    });
    expect(messageBody(outcome({ conversationId: 'conv_1' }))).toMatchObject({
      content: [{ type: 'text', text: 'Hello there.' }],
      stop_reason: 'end_turn',
      conversation_id: 'conv_1',
      message_id: 'msg_abc123',
    });
    expect(messageBody(outcome({ text: '', refusal: 'No.' })).content).toEqual([
      { type: 'text', text: 'No.' },
    ]);
  });

  it("map finish reasons to Anthropic's stop reasons", () => {
    expect(
      ['stop', 'length', 'tool_calls', 'content_filter', 'other'].map((reason) =>
        anthropicStopReason(reason as ChatOutcome['finishReason']),
      ),
    ).toEqual(['end_turn', 'max_tokens', 'tool_use', 'refusal', 'end_turn']);
  });

  it('read arguments that are not a JSON object as an empty input', () => {
    expect(toolInput('{"a":1}')).toEqual({ a: 1 });
    expect(toolInput('')).toEqual({});
    expect(toolInput('[1]')).toEqual({});
    expect(toolInput('{"a":')).toEqual({});
  });

  it('stream as Anthropic does: blocks opened, filled and closed in turn, then the stop', () => {
    const events = eventsFor([
      { type: 'start', conversationId: null, messageId: 'msg_s', model },
      { type: 'delta', text: 'Let me ' },
      { type: 'delta', text: 'check.' },
      { type: 'tool-call', index: 0, id: 'call_a', name: 'get_weather', arguments: '' },
      { type: 'tool-call', index: 0, arguments: '{"city":' },
      { type: 'tool-call', index: 0, arguments: '"Paris"}' },
      { type: 'tool-call', index: 1, id: 'call_b', name: 'get_time', arguments: '{}' },
      {
        type: 'end',
        outcome: outcome({
          finishReason: 'tool_calls',
          usage: { promptTokens: 9, completionTokens: 4 },
        }),
      },
    ]);
    expect(events.map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[0]!.data).toMatchObject({
      type: 'message_start',
      message: { id: 'msg_s', model: 'fake-tools', content: [], stop_reason: null },
    });
    expect(events[5]!.data).toEqual({
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'call_a', name: 'get_weather', input: {} },
    });
    expect(events[7]!.data).toEqual({
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'input_json_delta', partial_json: '"Paris"}' },
    });
    expect(events[12]!.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 9, output_tokens: 4 },
    });
  });

  it("end a failed stream with Anthropic's error event", () => {
    const events = eventsFor([
      { type: 'start', conversationId: null, messageId: 'msg_e', model },
      { type: 'delta', text: 'Half' },
      { type: 'error', error: new UpstreamError('upstream_timeout', 'Too slow.') },
      { type: 'delta', text: 'never sent' },
    ]);
    expect(events.at(-1)).toEqual({
      event: 'error',
      data: {
        type: 'error',
        error: { type: 'api_error', message: 'Too slow.', code: 'upstream_timeout', param: null },
        request_id: 'req_1',
      },
    });
    expect(events).toHaveLength(4);
  });
});

describe("Anthropic's errors and the pass-through", () => {
  it('keep the status and take the error type Anthropic gives it', () => {
    const typeOf = (error: AppError) => anthropicErrorBody(error, 'req_1').error.type;
    expect(typeOf(new AppError('invalid_parameter', 'x'))).toBe('invalid_request_error');
    expect(typeOf(new AppError('missing_api_key', 'x'))).toBe('authentication_error');
    expect(typeOf(new AppError('insufficient_permissions', 'x'))).toBe('permission_error');
    expect(typeOf(new AppError('not_found', 'x'))).toBe('not_found_error');
    expect(typeOf(new AppError('rate_limit_exceeded', 'x'))).toBe('rate_limit_error');
    expect(typeOf(new AppError('internal_error', 'x'))).toBe('api_error');
    expect(typeOf(new UpstreamError('upstream_error', 'x'))).toBe('api_error');
    expect(typeOf(new UpstreamError('model_unavailable', 'x'))).toBe('overloaded_error');
    expect(
      anthropicErrorBody(
        new AppError('rate_limit_exceeded', 'Slow down.', { details: { limit: 5 } }),
        'req_9',
      ),
    ).toEqual({
      type: 'error',
      error: {
        limit: 5,
        type: 'rate_limit_error',
        message: 'Slow down.',
        code: 'rate_limit_exceeded',
        param: null,
      },
      request_id: 'req_9',
    });
  });

  it('rewrites only message_start of a passed-through stream', () => {
    const start = passedThroughEvent(
      {
        event: 'message_start',
        data: { type: 'message_start', message: { id: 'msg_up', model: 'claude-x', content: [] } },
      },
      'msg_platform',
      'claude-fake',
    );
    expect(start.data).toEqual({
      type: 'message_start',
      message: { id: 'msg_platform', model: 'claude-fake', content: [] },
    });
    const ping = { event: 'ping', data: { type: 'ping' } };
    expect(passedThroughEvent(ping, 'msg_platform', 'claude-fake')).toBe(ping);
  });

  it("forwards Anthropic's version and beta headers, refusing values that are not header-safe", () => {
    expect(forwardedHeaders({ 'anthropic-version': '2023-06-01' })).toEqual({
      version: '2023-06-01',
      beta: undefined,
    });
    expect(
      forwardedHeaders({ 'anthropic-beta': 'prompt-caching-2024-07-31, files-api-2025-04-14' })
        .beta,
    ).toBe('prompt-caching-2024-07-31, files-api-2025-04-14');
    expect(thrown(() => forwardedHeaders({ 'anthropic-version': 'a\u00e9' })).param).toBe(
      'anthropic-version',
    );
    expect(thrown(() => forwardedHeaders({ 'anthropic-beta': ['a', 'b'] })).status).toBe(400);
  });
});
