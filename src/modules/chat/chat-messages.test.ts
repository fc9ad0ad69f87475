// Messages between their forms: OpenAI's message shape to the model's turn (text parts joined,
// other parts kept), a turn to what is stored and back, the model parameters /v1/chat takes, and
// the inline-data bound of a stored turn (bytes, at the limit and one past it).
import { describe, expect, it } from 'vitest';
import { appErrorOf } from '../../../test/support/unit/errors.js';
import { turnOfMessage } from '../../models/openai-messages.js';
import type { ChatTurn } from '../../models/spec.js';
import type { StoredMessage } from '../conversations/conversation.js';
import { turnOfStored } from '../../models/openai-messages.js';
import { checkStorable, paramsOf, storedFieldsOf } from './chat-messages.js';

const image = { type: 'image_url', image_url: { url: 'https://img.example/a.png' } } as const;
const call = {
  id: 'call_1',
  type: 'function',
  function: { name: 'f', arguments: '{"a":1}' },
} as const;

describe('turnOfMessage', () => {
  it('joins text parts into the text, and keeps the parts only when one is not text', () => {
    expect(
      turnOfMessage(
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        0,
      ),
    ).toEqual({ role: 'user', content: 'ab' });
    const parts = [{ type: 'text', text: 'see ' } as const, image];
    expect(turnOfMessage({ role: 'user', content: parts, name: 'ann' }, 0)).toEqual({
      role: 'user',
      content: 'see ',
      parts,
      name: 'ann',
    });
  });

  it('takes an assistant turn that only calls tools, and a tool result', () => {
    expect(turnOfMessage({ role: 'assistant', content: null, tool_calls: [call] }, 1)).toEqual({
      role: 'assistant',
      content: '',
      toolCalls: [call],
    });
    expect(
      turnOfMessage(
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '42' }] },
        2,
      ),
    ).toEqual({ role: 'tool', content: '42', toolCallId: 'call_1' });
  });
});

describe('stored turns', () => {
  const stored = (turn: ChatTurn): StoredMessage => ({
    id: 'msg_1',
    conversationId: 'conv_1',
    seq: 1,
    ...storedFieldsOf(turn),
    model: null,
    promptTokens: null,
    completionTokens: null,
    latencyMs: null,
    finishReason: null,
    createdAt: '2026-01-01T00:00:00.000Z',
  });

  it.each<[string, ChatTurn]>([
    ['text', { role: 'user', content: 'hi' }],
    ['parts and a name', { role: 'user', content: 'x', parts: [image], name: 'bo' }],
    ['tool calls', { role: 'assistant', content: '', toolCalls: [call] }],
    ['a tool result', { role: 'tool', content: '{}', toolCallId: 'call_1' }],
  ])('reads back %s as the turn it was', (_name, turn) => {
    expect(turnOfStored(stored(turn))).toEqual(turn);
  });

  it('stores an empty list of tool calls as none', () => {
    expect(storedFieldsOf({ role: 'assistant', content: 'x', toolCalls: [] }).toolCalls).toBeNull();
  });
});

describe('checkStorable', () => {
  const withUrl = (url: string): ChatTurn[] => [
    { role: 'system', content: 'be brief' },
    {
      role: 'user',
      content: '',
      parts: [
        { type: 'text', text: '' },
        { type: 'image_url', image_url: { url } },
      ],
    },
  ];

  it('keeps inline data up to the limit and refuses a byte more with 413 naming the field', async () => {
    const limit = 2048;
    const prefix = 'data:image/png;base64,';
    expect(() =>
      checkStorable(withUrl(prefix + 'A'.repeat(limit - prefix.length)), limit),
    ).not.toThrow();
    const error = await appErrorOf(() =>
      checkStorable(withUrl(prefix + 'A'.repeat(limit - prefix.length + 1)), limit),
    );
    expect(error).toMatchObject({
      code: 'payload_too_large',
      status: 413,
      param: 'messages[1].content[1].image_url.url',
    });
    expect(error.message).toContain(`is ${limit + 1} bytes, more than the ${limit}`);
  });

  it('counts UTF-8 bytes, not characters', async () => {
    // 700 three-byte characters: 700 characters, 2100 bytes.
    const url = `https://img.example/${'€'.repeat(700)}`;
    expect(url.length).toBeLessThan(1024);
    const error = await appErrorOf(() => checkStorable(withUrl(url), 1024));
    expect(error).toMatchObject({ code: 'payload_too_large' });
  });

  it('bounds audio and file data as well', async () => {
    const big = 'A'.repeat(2000);
    for (const [part, field] of [
      [{ type: 'input_audio', input_audio: { data: big, format: 'wav' } }, 'input_audio.data'],
      [{ type: 'file', file: { file_data: big } }, 'file.file_data'],
    ] as const) {
      const error = await appErrorOf(() =>
        checkStorable([{ role: 'user', content: '', parts: [part] }], 1024),
      );
      expect(error).toMatchObject({ param: `messages[0].content[0].${field}` });
    }
    expect(() =>
      checkStorable(
        [{ role: 'user', content: '', parts: [{ type: 'file', file: { file_id: 'f' } }] }],
        1024,
      ),
    ).not.toThrow();
  });
});

describe('paramsOf', () => {
  const tool = (parameters?: Record<string, unknown>) => ({
    type: 'function' as const,
    function: { name: 'f', ...(parameters === undefined ? {} : { parameters }) },
  });

  it('is undefined without tools or formats, and passes them as given otherwise', () => {
    expect(paramsOf({}, 100)).toBeUndefined();
    const format = { type: 'json_object' } as const;
    expect(
      paramsOf({ tools: [tool()], tool_choice: 'required', response_format: format }, 100),
    ).toEqual({
      tools: [tool()],
      tool_choice: 'required',
      response_format: format,
    });
  });

  it('bounds a client JSON Schema by its JSON text', async () => {
    const schema = { type: 'object', description: '' };
    const length = JSON.stringify(schema).length;
    expect(() => paramsOf({ tools: [tool(schema)] }, length)).not.toThrow();
    const error = await appErrorOf(() => paramsOf({ tools: [tool(schema)] }, length - 1));
    expect(error).toMatchObject({
      code: 'invalid_parameter',
      param: 'tools[0].function.parameters',
    });
    const format = { type: 'json_schema', json_schema: { name: 'r', schema } } as const;
    const formatError = await appErrorOf(() => paramsOf({ response_format: format }, length - 1));
    expect(formatError).toMatchObject({ param: 'response_format.json_schema.schema' });
  });

  it("refuses a tool_choice without tools, or naming a function that isn't one", async () => {
    expect(await appErrorOf(() => paramsOf({ tool_choice: 'none' }, 100))).toMatchObject({
      param: 'tool_choice',
    });
    expect(
      await appErrorOf(() =>
        paramsOf(
          { tools: [tool()], tool_choice: { type: 'function', function: { name: 'g' } } },
          100,
        ),
      ),
    ).toMatchObject({ param: 'tool_choice.function.name' });
  });
});
