// The Messages dialect's request side, directly: a /v1/messages body into the chat turn (system
// blocks, tool results as tool turns first, tools' images after them, error results noted, the
// model's signed thinking dropped, what cannot be translated listed with its field, tool_choice
// and output_config mapped, needs named by Anthropic's fields).
import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors/app-error.js';
import { messagesCallOf, refuseUntranslatable, translatePrompt } from './anthropic-call.js';
import type { MessagesRequestBody } from './anthropic-request.js';

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
