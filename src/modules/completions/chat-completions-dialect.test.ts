// The Chat Completions dialect's translation, directly: a request body into the chat turn
// (developer as system, text parts joined, content parts and tool turns kept, parameters passed
// on, unknown roles refused, which limit counts),
// and an outcome or stream events into chat.completion and chat.completion.chunk bodies.
import { describe, expect, it } from 'vitest';
import type { ModelDefinition } from '../../config/config.js';
import { AppError } from '../../errors/app-error.js';
import { UpstreamError } from '../../models/spec.js';
import type { ChatOutcome, ChatStreamEvent } from '../chat/chat-service.js';
import {
  chunkStream,
  chunksOf,
  completionBody,
  completionCallOf,
  openAiFinishReason,
  turnsOf,
} from './chat-completions-dialect.js';

const model = { name: 'gpt-test' } as ModelDefinition;

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

/** The bodies a sequence of events becomes, up to the last one a stream ends with. */
function chunksFor(events: ChatStreamEvent[], includeUsage = false): unknown[] {
  const stream = chunkStream(1_700_000_000, includeUsage);
  const all: unknown[] = [];
  for (const event of events) {
    const { chunks, last } = chunksOf(stream, event);
    all.push(...chunks);
    if (last) break;
  }
  return all;
}

describe('a Chat Completions request', () => {
  it('becomes turns: developer reads as system, text parts are joined, null content is empty', () => {
    expect(
      turnsOf({
        messages: [
          { role: 'developer', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Hel' },
              { type: 'text', text: 'lo' },
            ],
          },
          { role: 'assistant', content: null },
          { role: 'user', content: 'Again?' },
        ],
      }),
    ).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: '' },
      { role: 'user', content: 'Again?' },
    ]);
  });

  it('refuses an unknown role, naming the message', () => {
    const error = thrown(() =>
      turnsOf({
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'function', content: '42' },
        ],
      }),
    );
    expect(error.code).toBe('invalid_parameter');
    expect(error.param).toBe('messages[1].role');
  });

  it('keeps tool calls, tool results and content parts beyond text', () => {
    const call = {
      id: 'call_1',
      type: 'function' as const,
      function: { name: 'f', arguments: '{}' },
    };
    const image = { type: 'image_url' as const, image_url: { url: 'https://example.com/a.png' } };
    expect(
      turnsOf({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'What is this?' }, image] },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' },
        ],
      }),
    ).toEqual([
      {
        role: 'user',
        content: 'What is this?',
        parts: [{ type: 'text', text: 'What is this?' }, image],
      },
      { role: 'assistant', content: '', toolCalls: [call] },
      { role: 'tool', content: '{"ok":true}', toolCallId: 'call_1' },
    ]);
  });

  it('refuses a tool message without the id of its call, and an image in a system message', () => {
    expect(thrown(() => turnsOf({ messages: [{ role: 'tool', content: '42' }] })).param).toBe(
      'messages[0].tool_call_id',
    );
    expect(
      thrown(() =>
        turnsOf({
          messages: [
            { role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://a/b' } }] },
          ],
        }),
      ).param,
    ).toBe('messages[0].content[0]');
  });

  it('passes every other field on as a parameter, unknown ones included, nulls and its own left out', () => {
    const call = completionCallOf({
      model: 'm',
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [{ type: 'function', function: { name: 'f' } }],
      top_p: 0.5,
      stop: ['x'],
      seed: null,
      user_id: 'u',
      some_future_field: { a: [1] },
    });
    expect(call.params).toEqual({
      tools: [{ type: 'function', function: { name: 'f' } }],
      top_p: 0.5,
      stop: ['x'],
      some_future_field: { a: [1] },
    });
  });

  it('is stateless without the extensions, with OpenAI nulls read as absent', () => {
    expect(
      completionCallOf({
        messages: [{ role: 'user', content: 'Hi' }],
        temperature: null,
        max_tokens: null,
        stream: null,
        stream_options: null,
      }),
    ).toEqual({
      messages: [{ role: 'user', content: 'Hi' }],
      params: {},
      persist: false,
      userId: null,
      conversationId: null,
      requestedModel: undefined,
      maxTokens: undefined,
      maxTokensParam: 'max_tokens',
      temperature: undefined,
      stream: false,
      includeUsage: false,
    });
  });

  it('is stored with user_id or conversation_id; max_completion_tokens wins over max_tokens', () => {
    const call = completionCallOf({
      model: 'auto',
      messages: [{ role: 'user', content: 'Hi' }],
      user_id: 'u1',
      conversation_id: 'conv_1',
      temperature: 1.5,
      max_tokens: 100,
      max_completion_tokens: 50,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(call).toMatchObject({
      persist: true,
      userId: 'u1',
      conversationId: 'conv_1',
      requestedModel: 'auto',
      maxTokens: 50,
      maxTokensParam: 'max_completion_tokens',
      temperature: 1.5,
      stream: true,
      includeUsage: true,
    });
    expect(completionCallOf({ messages: [], conversation_id: 'conv_1' }).persist).toBe(true);
    expect(completionCallOf({ messages: [], max_tokens: 100 })).toMatchObject({
      maxTokens: 100,
      maxTokensParam: 'max_tokens',
    });
  });
});

describe('a whole answer', () => {
  it("is a chat.completion with the reply's id under OpenAI's prefix", () => {
    expect(completionBody(outcome(), 1_700_000_000)).toEqual({
      id: 'chatcmpl-abc123',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-test',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello there.', refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
    });
  });

  it('names its conversation and message when stored', () => {
    const body = completionBody(outcome({ conversationId: 'conv_9' }), 0);
    expect(body).toMatchObject({ conversation_id: 'conv_9', message_id: 'msg_abc123' });
  });

  it("reports the finish reasons OpenAI lacks as 'stop'", () => {
    expect(openAiFinishReason('other')).toBe('stop');
    expect(openAiFinishReason('length')).toBe('length');
    expect(openAiFinishReason('content_filter')).toBe('content_filter');
    const body = completionBody(outcome({ finishReason: 'other' }), 0);
    expect(body.choices[0]!.finish_reason).toBe('stop');
  });
});

describe('a streamed answer', () => {
  const start: ChatStreamEvent = {
    type: 'start',
    conversationId: null,
    messageId: 'msg_abc123',
    model,
  };
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id: 'chatcmpl-abc123',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-test',
    choices,
    ...extra,
  });

  it('is role first, content deltas, then the finish, one id for all', () => {
    expect(
      chunksFor([
        start,
        { type: 'delta', text: 'Hel' },
        { type: 'delta', text: 'lo' },
        { type: 'end', outcome: outcome({ finishReason: 'length' }) },
      ]),
    ).toEqual([
      chunk([
        {
          index: 0,
          delta: { role: 'assistant', content: '' },
          logprobs: null,
          finish_reason: null,
        },
      ]),
      chunk([{ index: 0, delta: { content: 'Hel' }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'lo' }, logprobs: null, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'length' }]),
    ]);
  });

  it('ends with a usage chunk without choices when include_usage is asked', () => {
    const chunks = chunksFor([start, { type: 'end', outcome: outcome() }], true);
    expect(chunks).toHaveLength(3);
    expect(chunks[2]).toEqual(
      chunk([], { usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } }),
    );
  });

  it('names its conversation and message in the first chunk when stored', () => {
    const [first, second] = chunksFor([
      { ...start, conversationId: 'conv_9' },
      { type: 'delta', text: 'Hi' },
    ]);
    expect(first).toMatchObject({ conversation_id: 'conv_9', message_id: 'msg_abc123' });
    expect(second).not.toHaveProperty('conversation_id');
  });

  it("ends at an error, sent as the contract's error body", () => {
    const error = new UpstreamError('upstream_error', 'The answer could not be completed.');
    const chunks = chunksFor([
      start,
      { type: 'delta', text: 'Hel' },
      { type: 'error', error },
      { type: 'delta', text: 'never sent' },
    ]);
    expect(chunks).toHaveLength(3);
    expect(chunks[2]).toEqual(error.toBody());
    expect(chunks[2]).toMatchObject({ error: { code: 'upstream_error' } });
  });
});
