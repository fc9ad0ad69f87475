import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../errors/app-error.js';
import type { ChatParams, ChatTurn, FunctionTool, GenerationRequest } from '../spec.js';
import { forcedCallOf, planLocalGeneration } from './local-request.js';

const weather: FunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
    },
  },
};
const clock: FunctionTool = { type: 'function', function: { name: 'get_time' } };

function requestOf(
  params: ChatParams = {},
  messages: readonly ChatTurn[] = [{ role: 'user', content: 'Hi' }],
): GenerationRequest {
  return {
    messages,
    maxTokens: 16,
    signal: new AbortController().signal,
    fairnessKey: 'account',
    params,
  };
}

function refusal(request: GenerationRequest): InvalidParameterError {
  try {
    planLocalGeneration(request);
  } catch (error) {
    if (error instanceof InvalidParameterError) return error;
    throw error;
  }
  throw new Error('the request was accepted');
}

describe('planning a local generation', () => {
  it('renders tool calls and their results inside the model response that made them', () => {
    const plan = planLocalGeneration(
      requestOf({ tools: [weather], tool_choice: 'none' }, [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris and the time?' },
        {
          role: 'assistant',
          content: 'Looking.',
          toolCalls: [
            {
              id: 'call_a',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', toolCallId: 'call_a', content: '{"celsius":21}' },
        { role: 'tool', toolCallId: 'call_b', content: 'noon' },
      ]),
    );
    expect(plan.output).toEqual({ kind: 'text' });
    // The last message is a tool result: the model continues the response that made the calls.
    expect(plan.history).toEqual([
      { type: 'system', text: 'Be brief.' },
      { type: 'user', text: 'Weather in Paris and the time?' },
      {
        type: 'model',
        response: [
          'Looking.',
          {
            type: 'functionCall',
            name: 'get_weather',
            params: { city: 'Paris' },
            result: { celsius: 21 },
          },
          { type: 'functionCall', name: 'get_time', params: {}, result: 'noon' },
        ],
      },
    ]);
  });

  it('opens an empty model response after a user message', () => {
    const plan = planLocalGeneration(requestOf());
    expect(plan.history).toEqual([
      { type: 'user', text: 'Hi' },
      { type: 'model', response: [] },
    ]);
  });

  it('forces a call with a grammar of one alternative per function, and says so to the model', () => {
    const plan = planLocalGeneration(
      requestOf({ tools: [weather, clock], tool_choice: 'required' }, [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ]),
    );
    expect(plan.output).toMatchObject({
      kind: 'forced-call',
      names: new Set(['get_weather', 'get_time']),
      schema: {
        oneOf: [
          {
            type: 'object',
            properties: {
              name: { const: 'get_weather' },
              arguments: { type: 'object', properties: { city: { type: 'string' } } },
            },
          },
          {
            type: 'object',
            properties: {
              name: { const: 'get_time' },
              arguments: { type: 'object', properties: {}, additionalProperties: false },
            },
          },
        ],
      },
    });
    expect(plan.history[0]).toEqual({ type: 'system', text: 'Be brief.' });
    expect(plan.history[1]).toMatchObject({ type: 'system' });
    expect((plan.history[1] as { text: string }).text).toContain('"name":"get_weather"');
  });

  it('forces the named function only', () => {
    const plan = planLocalGeneration(
      requestOf({
        tools: [weather, clock],
        tool_choice: { type: 'function', function: { name: 'get_time' } },
      }),
    );
    expect(plan.output).toMatchObject({
      kind: 'forced-call',
      names: new Set(['get_time']),
      schema: { type: 'object', properties: { name: { const: 'get_time' } } },
    });
  });

  it("hands tools under tool_choice 'auto' to node-llama-cpp's function calling", () => {
    const plan = planLocalGeneration(requestOf({ tools: [weather], parallel_tool_calls: false }));
    expect(plan.output).toEqual({
      kind: 'functions',
      functions: {
        get_weather: {
          description: 'The weather in a city',
          params: {
            type: 'object',
            properties: { city: { type: 'string' } },
            additionalProperties: false,
          },
        },
      },
      maxParallelCalls: 1,
    });
  });

  it('maps the sampling parameters node-llama-cpp has, and ignores user and metadata', () => {
    const plan = planLocalGeneration(
      requestOf({
        top_p: 0.5,
        seed: 7,
        stop: 'END',
        presence_penalty: 0.5,
        frequency_penalty: 0.25,
        logit_bias: { '42': -100 },
        user: 'someone',
        metadata: { a: 'b' },
        some_future_field: true,
      }),
    );
    expect(plan.sampling).toEqual({
      topP: 0.5,
      seed: 7,
      stop: ['END'],
      presencePenalty: 0.5,
      frequencyPenalty: 0.25,
      logitBias: new Map([[42, -100]]),
    });
  });

  it('asks for any JSON for json_object and for the schema for json_schema', () => {
    expect(
      planLocalGeneration(requestOf({ response_format: { type: 'json_object' } })).output,
    ).toEqual({ kind: 'json', schema: undefined });
    expect(
      planLocalGeneration(
        requestOf({
          response_format: {
            type: 'json_schema',
            json_schema: {
              name: 'x',
              schema: { type: 'object', properties: { a: { type: 'boolean' } } },
            },
          },
        }),
      ).output,
    ).toEqual({
      kind: 'json',
      schema: {
        type: 'object',
        properties: { a: { type: 'boolean' } },
        additionalProperties: false,
      },
    });
  });

  it.each<[string, ChatParams, string]>([
    ['logprobs', { logprobs: true }, 'logprobs'],
    ['top_logprobs', { top_logprobs: 2 }, 'top_logprobs'],
    ['n above one', { n: 2 }, 'n'],
    ['reasoning_effort', { reasoning_effort: 'low' }, 'reasoning_effort'],
    ['audio output', { modalities: ['text', 'audio'] }, 'modalities'],
    [
      'a function not among tools',
      { tools: [weather], tool_choice: { type: 'function', function: { name: 'nope' } } },
      'tool_choice',
    ],
    ['a forced call without tools', { tool_choice: 'required' }, 'tool_choice'],
    [
      'JSON output beside free tool calls',
      { tools: [weather], response_format: { type: 'json_object' } },
      'response_format',
    ],
    [
      'a schema the grammar cannot express',
      {
        tools: [{ type: 'function', function: { name: 'f', parameters: { not: {} } } }],
        tool_choice: 'required',
      },
      'tools[0].function.parameters',
    ],
    ['a logit_bias key that is no token id', { logit_bias: { hello: 1 } }, 'logit_bias'],
    ['an empty stop sequence', { stop: [''] }, 'stop'],
  ])('refuses %s with a 400 naming it', (_, params, param) => {
    const error = refusal(requestOf(params));
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });

  it('refuses images, naming the message, and tool results that answer no call', () => {
    expect(
      refusal(
        requestOf({}, [
          {
            role: 'user',
            content: 'What is this?',
            parts: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
            ],
          },
        ]),
      ).param,
    ).toBe('messages[0].content');
    expect(
      refusal(
        requestOf({}, [
          { role: 'user', content: 'Hi' },
          { role: 'tool', toolCallId: 'call_unknown', content: '1' },
        ]),
      ).param,
    ).toBe('messages[1].tool_call_id');
  });

  it('parses a forced call, and nothing that is not one', () => {
    const names = new Set(['get_weather']);
    const call = forcedCallOf('{"name": "get_weather", "arguments": {"city": "Oslo"}}', names);
    expect(call).toMatchObject({
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
    });
    expect(call?.id).toMatch(/^call_[A-Za-z0-9_-]{16}$/);
    expect(forcedCallOf('{"name": "get_weather", "arguments": {"ci', names)).toBeNull();
    expect(forcedCallOf('{"name": "other", "arguments": {}}', names)).toBeNull();
  });
});
