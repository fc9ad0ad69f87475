// The Responses dialect's request side, directly: a request body into the chat turn (its
// turns and the fields they came from, tools, formats and references checked), and the chat
// service's errors named by the client's fields.
import { describe, expect, it } from 'vitest';
import { AppError, InvalidParameterError } from '../../errors/app-error.js';
import { responseCallOf } from './responses-call.js';
import { withClientParams } from './responses-errors.js';

describe('reading a Responses request', () => {
  it('reads text input as one user turn, instructions as the system turn', () => {
    const call = responseCallOf({ input: 'Hi', instructions: 'Be brief.' });
    expect(call.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(call.paths).toEqual(['instructions', 'input']);
    expect(call.persist).toBe(true);
    expect(call.params).toEqual({});
  });

  it('joins an assistant message and the function calls after it into one turn', () => {
    const call = responseCallOf({
      input: [
        { role: 'developer', content: 'Rules.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Go' }] },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        {
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Calling.', annotations: [] }],
        },
        { type: 'function_call', call_id: 'c1', name: 'a', arguments: '{}' },
        { type: 'function_call', call_id: 'c2', name: 'b', arguments: '{"x":1}' },
        { type: 'function_call_output', call_id: 'c1', output: 'one' },
        {
          type: 'function_call_output',
          call_id: 'c2',
          output: [
            { type: 'input_text', text: 't' },
            { type: 'input_text', text: 'wo' },
          ],
        },
      ],
    });
    expect(call.messages).toEqual([
      { role: 'system', content: 'Rules.' },
      { role: 'user', content: 'Go' },
      {
        role: 'assistant',
        content: 'Calling.',
        toolCalls: [
          { id: 'c1', type: 'function', function: { name: 'a', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'b', arguments: '{"x":1}' } },
        ],
      },
      { role: 'tool', content: 'one', toolCallId: 'c1' },
      { role: 'tool', content: 'two', toolCallId: 'c2' },
    ]);
    expect(call.paths).toEqual(['input[0]', 'input[1]', 'input[3]', 'input[6]', 'input[7]']);
    // The reasoning item is skipped; every other item is listed, with an id.
    expect(call.inputItems.map((item) => [item.type, item.role ?? null])).toEqual([
      ['message', 'developer'],
      ['message', 'user'],
      ['message', 'assistant'],
      ['function_call', null],
      ['function_call', null],
      ['function_call_output', null],
      ['function_call_output', null],
    ]);
    expect(call.inputItems.every((item) => item.id.length > 3)).toBe(true);
  });

  it('maps tools, tool_choice, text.format and reasoning to Chat Completions parameters', () => {
    const call = responseCallOf({
      input: 'x',
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: true }],
      tool_choice: { type: 'function', name: 'f' },
      parallel_tool_calls: false,
      text: { format: { type: 'json_schema', name: 'r', schema: { type: 'object' } } },
      reasoning: { effort: 'low' },
      top_p: 0.5,
      user: 'u1',
      metadata: { a: 'b' },
    });
    expect(call.params).toEqual({
      tools: [
        { type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } },
      ],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'r', schema: { type: 'object' } },
      },
      top_p: 0.5,
      reasoning_effort: 'low',
      user: 'u1',
    });
    expect(call.echo.tools).toEqual([
      {
        type: 'function',
        name: 'f',
        description: null,
        parameters: { type: 'object' },
        strict: true,
      },
    ]);
    // `auto` without tools is dropped (Chat Completions upstreams refuse it); `required` is not.
    expect(responseCallOf({ input: 'x', tool_choice: 'auto' }).params).toEqual({});
    expect(() => responseCallOf({ input: 'x', tool_choice: 'required' })).toThrow(
      InvalidParameterError,
    );
  });

  it.each([
    [{ tools: [{ type: 'file_search' }] }, 'tools[0].type'],
    [{ tools: [{ type: 'function', name: 'bad name' }] }, 'tools[0].name'],
    [{ tool_choice: { type: 'web_search_preview' } }, 'tool_choice.type'],
    [{ text: { format: { type: 'json_schema', name: 'r' } } }, 'text.format.schema'],
    [{ input: [{ role: 'tool', content: 'x' }] }, 'input[0].role'],
    [
      {
        input: [
          { role: 'system', content: [{ type: 'input_image', image_url: 'https://a/b.png' }] },
        ],
      },
      'input[0].content[0].type',
    ],
    [
      { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'ftp://a' }] }] },
      'input[0].content[0].image_url',
    ],
    [
      { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] },
      'input[0].content[0].file_data',
    ],
    [{ input: [{ type: 'function_call', name: 'f' }] }, 'input[0].call_id'],
    [
      {
        input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image' }] }],
      },
      'input[0].output[0].type',
    ],
    [{ input: [{ type: 'computer_call' }] }, 'input[0].type'],
    [{ previous_response_id: 'resp_1', conversation: 'conv_1' }, 'conversation'],
    [{ conversation: { id: 'conv_1' }, store: false }, 'store'],
    [{ metadata: { constructor: 'x' } }, 'metadata.constructor'],
  ])('refuses %j naming %s', (fields, param) => {
    try {
      responseCallOf({ input: 'x', ...(fields as Record<string, unknown>) });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).param).toBe(param);
    }
  });
});

describe("the chat service's errors in the client's names", () => {
  const paths = ['instructions', 'input[0]', 'input[2]'];
  it.each([
    ['messages[2].content[1]', 'input[2].content[1]'],
    ['messages[2].content[0].image_url.url', 'input[2].content[0].image_url'],
    ['messages[1].tool_call_id', 'input[0].call_id'],
    ['response_format', 'text.format'],
    ['reasoning_effort', 'reasoning.effort'],
    ['tools[3].function.parameters', 'tools[3].parameters'],
    ['tool_choice.function.name', 'tool_choice.name'],
    ['messages', 'input'],
  ])('%s becomes %s', (param, renamed) => {
    const error = withClientParams(
      new InvalidParameterError(param, `'${param}' is wrong.`),
      paths,
    ) as AppError;
    expect(error.param).toBe(renamed);
    expect(error.message).toBe(`'${renamed}' is wrong.`);
    expect(error.code).toBe('invalid_parameter');
  });

  it('leaves other errors alone', () => {
    const error = new InvalidParameterError('temperature', 'x');
    expect(withClientParams(error, paths)).toBe(error);
    const plain = new Error('x');
    expect(withClientParams(plain, paths)).toBe(plain);
  });
});
