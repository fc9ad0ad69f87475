// The Messages dialect's translation, directly: a /v1/messages body into the chat turn (system
// blocks, tool results as tool turns first, tools' images after them, error results noted, the
// model's signed thinking dropped, what cannot be translated listed with its field, tool_choice
// and output_config mapped, needs named by Anthropic's fields), an outcome or stream events into
// Anthropic's message and event sequence, its error types, and the pass-through's rewriting.
import { describe, expect, it } from 'vitest';
import type { ModelDefinition } from '../../config/config.js';
import { AppError } from '../../errors/app-error.js';
import { UpstreamError } from '../../models/spec.js';
import type { ChatOutcome, ChatStreamEvent } from '../chat/chat-service.js';
import {
  anthropicErrorBody,
  anthropicStopReason,
  forwardedHeaders,
  messageBody,
  messageEventStream,
  messageEventsOf,
  messagesCallOf,
  passedThroughEvent,
  refuseUntranslatable,
  toolInput,
  translatePrompt,
  type MessageEvent,
  type MessagesRequestBody,
} from './anthropic-messages-dialect.js';

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

const request = (fields: Partial<MessagesRequestBody>): MessagesRequestBody => ({
  model: 'fake-tools',
  max_tokens: 100,
  messages: [{ role: 'user', content: 'Hi' }],
  ...fields,
});

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

describe('a Messages request', () => {
  it('becomes turns: system blocks joined, tool results first as tool turns, then the rest', () => {
    const call = messagesCallOf(
      request({
        system: [
          { type: 'text', text: 'Be brief.' },
          { type: 'text', text: 'Be kind.' },
        ],
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Let me see.', signature: 'sig' },
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
              { type: 'tool_use', id: 'toolu_2', name: 'get_map', input: {} },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny.' },
              {
                type: 'tool_result',
                tool_use_id: 'toolu_2',
                is_error: true,
                content: [
                  { type: 'text', text: 'No map;' },
                  { type: 'text', text: 'here is a photo.' },
                  {
                    type: 'image',
                    source: { type: 'base64', media_type: 'image/png', data: 'AAAA' },
                  },
                ],
              },
              { type: 'text', text: 'And tomorrow?' },
            ],
          },
        ],
      }),
    );
    expect(call.messages).toEqual([
      { role: 'system', content: 'Be brief.\nBe kind.' },
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: 'Checking.',
        toolCalls: [
          {
            id: 'toolu_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          { id: 'toolu_2', type: 'function', function: { name: 'get_map', arguments: '{}' } },
        ],
      },
      { role: 'tool', content: 'Sunny.', toolCallId: 'toolu_1' },
      { role: 'tool', content: 'Error: No map;\nhere is a photo.', toolCallId: 'toolu_2' },
      {
        role: 'user',
        content: 'And tomorrow?',
        parts: [
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          { type: 'text', text: 'And tomorrow?' },
        ],
      },
    ]);
    expect(call.untranslatable).toEqual([]);
    expect(call.needs.map((need) => [need.capability, need.param])).toEqual([
      ['tools', 'messages[1]'],
      ['vision', 'messages[2].content[1].content[2]'],
    ]);
  });

  it('maps tools, tool_choice, stop sequences, top_p, metadata and output_config', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } } };
    const call = messagesCallOf(
      request({
        tools: [{ name: 'get_weather', description: 'Weather.', input_schema: schema }],
        tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
        stop_sequences: ['END'],
        top_p: 0.5,
        temperature: 0.2,
        metadata: { user_id: 'u-1' },
        output_config: { format: { type: 'json_schema', schema }, effort: 'low' },
        stream: true,
      }),
    );
    expect(call.params).toEqual({
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather.', parameters: schema },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      reasoning_effort: 'low',
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'output', schema, strict: true },
      },
      stop: ['END'],
      top_p: 0.5,
      user: 'u-1',
    });
    expect(call).toMatchObject({ maxTokens: 100, temperature: 0.2, stream: true, persist: false });
    expect(call.needs.map((need) => need.param)).toEqual(['tools', 'output_config.format']);
    const tools = [{ name: 'get_weather', input_schema: schema }];
    expect(messagesCallOf(request({ tools, tool_choice: { type: 'any' } })).params).toMatchObject({
      tool_choice: 'required',
    });
    // tool_choice without tools means nothing to Anthropic, and is not sent to OpenAI.
    expect(messagesCallOf(request({ tool_choice: { type: 'auto' } })).params).toEqual({});
    expect(
      thrown(() => messagesCallOf(request({ tools, tool_choice: { type: 'tool', name: 'x' } })))
        .param,
    ).toBe('tool_choice.name');
  });

  it('lists what only Anthropic can act on, and refuses the first for another model', () => {
    const call = messagesCallOf(
      request({
        top_k: 5,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: [{ name: 'web_search', type: 'web_search_20250305' }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'file', file_id: 'file_1' } },
              { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
              { type: 'search_result', source: 'x', title: 'y', content: [] },
            ],
          },
          { role: 'assistant', content: 'The answer is' },
        ],
      }),
    );
    expect(call.untranslatable.map((item) => item.param)).toEqual([
      'messages[0].content[0].source.type',
      'messages[0].content[1].source.type',
      'messages[0].content[2].type',
      'messages[1].role',
      'tools[0].type',
      'thinking.type',
      'top_k',
    ]);
    const error = thrown(() => refuseUntranslatable(call, 'fake-tools'));
    expect(error.status).toBe(400);
    expect(error.param).toBe('messages[0].content[0].source.type');
    expect(error.message).toContain("Model 'fake-tools'");
    // Adaptive thinking and a disabled one leave nothing behind.
    for (const type of ['adaptive', 'disabled']) {
      expect(messagesCallOf(request({ thinking: { type } })).untranslatable).toEqual([]);
    }
  });

  it('refuses what Anthropic refuses too, whatever the model', () => {
    expect(
      thrown(() =>
        translatePrompt({
          model: 'x',
          messages: [{ role: 'system', content: 'no' }],
        }),
      ).param,
    ).toBe('messages[0].role');
    expect(
      thrown(() =>
        translatePrompt({
          model: 'x',
          messages: [
            {
              role: 'user',
              content: [{ type: 'tool_use', id: 't', name: 'n', input: {} }],
            },
          ],
        }),
      ).param,
    ).toBe('messages[0].content[0].type');
    expect(
      thrown(() => translatePrompt({ model: 'x', messages: [], tools: [{ name: 'f' }] })).param,
    ).toBe('tools[0].input_schema');
  });

  it('reads a document as a file part or as text', () => {
    const { messages } = translatePrompt({
      model: 'x',
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'document',
              title: 'report.pdf',
              source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
            },
            {
              type: 'document',
              source: { type: 'text', media_type: 'text/plain', data: 'Notes.' },
            },
          ],
        },
      ],
    });
    expect(messages[0]!.parts).toEqual([
      {
        type: 'file',
        file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'report.pdf' },
      },
      { type: 'text', text: 'Notes.' },
    ]);
  });

  it('is stored with the extensions, stateless without them', () => {
    expect(messagesCallOf(request({ user_id: 'ann' }))).toMatchObject({
      persist: true,
      userId: 'ann',
      conversationId: null,
    });
    expect(messagesCallOf(request({}))).toMatchObject({ persist: false, userId: null });
  });
});

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
