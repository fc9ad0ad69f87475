// Tools, structured output and sampling parameters on local GGUF models, on the tiny random-weight
// models the suite generates. Their text is noise, so only what a grammar or a bias forces is
// asserted: function calls written under the call grammar and parsed into tool calls, JSON that
// matches its schema, node-llama-cpp's own function calling on a template that has a call syntax
// (the model pushed to open a call with logit_bias), and each parameter's visible effect.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readGgufFileInfo } from 'node-llama-cpp';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalModelDefinition } from '../src/config/config.js';
import { loadConfig } from '../src/config/load-config.js';
import { AppError } from '../src/errors/app-error.js';
import { NodeLlamaEngine } from '../src/models/local/local-engine.js';
import type {
  ChatModel,
  ChatParams,
  ChatTurn,
  FunctionTool,
  GenerationRequest,
  StreamPart,
} from '../src/models/spec.js';
import { createAjv } from '../src/validation/ajv.js';
import { writeTinyLlamaGguf } from './support/gguf/tiny-llama.js';

/**
 * ChatML with a call syntax of its own, as tool-calling fine-tunes ship theirs: node-llama-cpp
 * reads `<tool_call>name<args>{…}</args>` out of it, so function calling is on for this model.
 */
const toolsTemplate =
  '{%- if tools %}<|im_start|>system\nFunctions:\n{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}<|im_end|>\n{% endif -%}' +
  '{%- for message in messages -%}' +
  "{%- if message.role == 'assistant' and message.tool_calls -%}" +
  '<|im_start|>assistant\n{% if message.content %}{{ message.content }}{% endif %}' +
  '{% for tc in message.tool_calls %}<tool_call>{{ tc.function.name }}<args>{{ tc.function.arguments | tojson }}</args>{% endfor %}<|im_end|>\n' +
  "{% elif message.role == 'tool' -%}" +
  '<|im_start|>tool\n{{ message.content }}<|im_end|>\n' +
  '{% else -%}' +
  '<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n' +
  '{% endif -%}' +
  '{%- endfor -%}' +
  '{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif -%}';

// Bounded values only: the random model never chooses to end a string or a number by itself.
const weather: FunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string', maxLength: 12 },
        unit: { enum: ['c', 'f'] },
      },
      required: ['city', 'unit'],
      additionalProperties: false,
    },
  },
};
const lights: FunctionTool = {
  type: 'function',
  function: {
    name: 'set_lights',
    parameters: {
      type: 'object',
      properties: { on: { type: 'boolean' }, room: { enum: ['hall', 'kitchen'] } },
      required: ['on'],
    },
  },
};
const noArguments: FunctionTool = { type: 'function', function: { name: 'ping' } };
const tools = [weather, lights, noArguments];

const ajv = createAjv();
function expectArgumentsValid(name: string | undefined, args: string): void {
  const tool = tools.find((candidate) => candidate.function.name === name);
  expect(tool, `a call of '${name}'`).toBeDefined();
  const validate = ajv.compile(
    tool!.function.parameters ?? { type: 'object', additionalProperties: false },
  );
  const value: unknown = JSON.parse(args);
  expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
}

const directory = await mkdtemp(path.join(tmpdir(), 'local-tools-'));
const chatMlFile = path.join(directory, 'tiny-chatml.gguf');
const toolsFile = path.join(directory, 'tiny-tools.gguf');
// A context of 2048: the tiny vocabulary spells JSON a byte at a time, and tool lists are JSON.
const contextLength = 2048;

let engine: NodeLlamaEngine;
let chatMl: ChatModel;
let chatMlDefinition: LocalModelDefinition;
let toolsModel: ChatModel;
/** Token ids of the tiny vocabulary (ids are the position in the GGUF's token list). */
let tokenId: (token: string) => number;
let toolsTokenId: (token: string) => number;

beforeAll(async () => {
  await writeTinyLlamaGguf(chatMlFile, { contextLength });
  await writeTinyLlamaGguf(toolsFile, {
    contextLength,
    chatTemplate: toolsTemplate,
    extraControlTokens: ['<tool_call>', '<args>', '</args>'],
  });
  const entry = (name: string, file: string) => ({
    name,
    provider: 'local' as const,
    file,
    max_tokens: 400,
    context_length: contextLength,
    // node-llama-cpp asks for four threads by default; the CI machine has two cores.
    threads: 1,
    parallel: 1,
    queue_size: 8,
  });
  const config = loadConfig({
    env: { LOG_LEVEL: 'silent' },
    overrides: {
      default_model: 'tiny-chatml',
      models: [entry('tiny-chatml', chatMlFile), entry('tiny-tools', toolsFile)],
      speech: { builtin_engines: false },
    },
  });
  const definition = (name: string) =>
    config.models.definitions.find((candidate) => candidate.name === name) as LocalModelDefinition;
  engine = new NodeLlamaEngine({
    gpu: false,
    huggingFaceEndpoint: 'http://127.0.0.1:9',
    huggingFaceToken: () => undefined,
    logger: pino({ level: 'silent' }),
  });
  chatMlDefinition = definition('tiny-chatml');
  chatMl = engine.chatModel(chatMlDefinition);
  toolsModel = engine.chatModel(definition('tiny-tools'));
  const idsOf = async (file: string) => {
    const tokens = (await readGgufFileInfo(file, { logWarnings: false })).metadata.tokenizer.ggml
      .tokens;
    return (token: string) => {
      const id = tokens.indexOf(token);
      if (id === -1) throw new Error(`no token ${token}`);
      return id;
    };
  };
  tokenId = await idsOf(chatMlFile);
  toolsTokenId = await idsOf(toolsFile);
});

afterAll(async () => {
  await engine?.close();
  await rm(directory, { recursive: true, force: true });
});

const ask: readonly ChatTurn[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'What is the weather in Paris?' },
];

function requestOf(
  params: ChatParams,
  options: { messages?: readonly ChatTurn[]; maxTokens?: number; temperature?: number } = {},
): GenerationRequest {
  return {
    messages: options.messages ?? ask,
    maxTokens: options.maxTokens ?? 200,
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    signal: new AbortController().signal,
    fairnessKey: 'account-1',
    params,
  };
}

async function collect(stream: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

/** The 400 a request answers, checking that the model generated nothing for it. */
async function refusalOf(model: ChatModel, request: GenerationRequest): Promise<AppError> {
  const before = engine.stats(chatMlDefinition).generatedTokens;
  const error: unknown = await model.generate(request).then(
    () => new Error('the request was answered'),
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).status, (error as Error).message).toBe(400);
  expect(engine.stats(chatMlDefinition).generatedTokens).toBe(before);
  return error as AppError;
}

const withCallInHistory: readonly ChatTurn[] = [
  { role: 'user', content: 'What is the weather in Paris?' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [
      {
        id: 'call_earlier',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
      },
    ],
  },
  { role: 'tool', toolCallId: 'call_earlier', content: '{"celsius":21}' },
];

describe('a function call forced by the grammar', () => {
  it("is written by the tiny model under tool_choice 'required' and parsed into tool_calls", async () => {
    const result = await chatMl.generate(requestOf({ tools, tool_choice: 'required' }));
    expect(result.finishReason).toBe('tool_calls');
    expect(result.text).toBe('');
    expect(result.toolCalls).toHaveLength(1);
    const [call] = result.toolCalls!;
    expect(call!.id).toMatch(/^call_[A-Za-z0-9_-]+$/);
    expect(call!.type).toBe('function');
    expectArgumentsValid(call!.function.name, call!.function.arguments);
    expect(result.usage.completionTokens).toBeGreaterThan(0);
  });

  it('calls the function tool_choice names, with arguments its schema accepts', async () => {
    for (const name of ['get_weather', 'set_lights', 'ping']) {
      const result = await chatMl.generate(
        requestOf({ tools, tool_choice: { type: 'function', function: { name } } }),
      );
      expect(result.finishReason).toBe('tool_calls');
      expect(result.toolCalls?.map((call) => call.function.name)).toEqual([name]);
      expectArgumentsValid(name, result.toolCalls![0]!.function.arguments);
    }
  });

  it('streams the call as one tool-call part, then the finish', async () => {
    const parts = await collect(
      chatMl.stream(
        requestOf({ tools, tool_choice: { type: 'function', function: { name: 'get_weather' } } }),
      ),
    );
    expect(parts.map((part) => part.type)).toEqual(['tool-call', 'finish']);
    const [call, finish] = parts as [
      Extract<StreamPart, { type: 'tool-call' }>,
      Extract<StreamPart, { type: 'finish' }>,
    ];
    expect(call).toMatchObject({ index: 0, name: 'get_weather' });
    expect(call.id).toMatch(/^call_/);
    expectArgumentsValid(call.name, call.arguments);
    expect(finish.finishReason).toBe('tool_calls');
  });

  it('follows a conversation that holds an earlier call and its result', async () => {
    const result = await chatMl.generate(
      requestOf({ tools, tool_choice: 'required' }, { messages: withCallInHistory }),
    );
    expect(result.finishReason).toBe('tool_calls');
    expectArgumentsValid(
      result.toolCalls![0]!.function.name,
      result.toolCalls![0]!.function.arguments,
    );
  });

  it('says when max_tokens ends the call before it is written', async () => {
    const error = await chatMl
      .generate(requestOf({ tools: [weather], tool_choice: 'required' }, { maxTokens: 4 }))
      .then(
        () => null,
        (failure: unknown) => failure,
      );
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).message).toContain('raise max_tokens');
  });
});

describe('tool turns and free text', () => {
  it("accepts a tool result as the last message and continues after it (tool_choice 'none')", async () => {
    const result = await chatMl.generate(
      requestOf({ tools, tool_choice: 'none' }, { messages: withCallInHistory, maxTokens: 6 }),
    );
    expect(result.finishReason).toBe('length');
    expect(result.text).not.toBe('');
    expect(result.toolCalls).toBeUndefined();
  });
});

describe('structured output', () => {
  it('answers JSON matching a json_schema response_format (references and alternatives included)', async () => {
    const schema = {
      type: 'object',
      properties: {
        answer: { type: 'string', maxLength: 10 },
        mood: { $ref: '#/$defs/Mood' },
        score: { anyOf: [{ type: 'boolean' }, { type: 'null' }] },
        tags: { type: 'array', items: { enum: ['a', 'b'] }, maxItems: 2 },
      },
      required: ['answer', 'mood', 'score', 'tags'],
      additionalProperties: false,
      $defs: { Mood: { enum: ['calm', 'busy'] } },
    };
    const validate = ajv.compile(schema);
    for (const stream of [false, true]) {
      const request = requestOf({
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'reply', strict: true, schema },
        },
      });
      let text = '';
      if (stream) {
        for (const part of await collect(chatMl.stream(request))) {
          if (part.type === 'text') text += part.text;
        }
      } else {
        const result = await chatMl.generate(request);
        expect(result.finishReason).toBe('stop');
        text = result.text;
      }
      const value: unknown = JSON.parse(text);
      expect(validate(value), `${text}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });
});

describe('what a local model cannot do answers 400 before generating', () => {
  it("refuses tool_choice 'auto' on a template without a call syntax, pointing to a forced call", async () => {
    const error = await refusalOf(chatMl, requestOf({ tools }));
    expect(error.param).toBe('tools');
    expect(error.message).toContain('cannot call functions');
    expect(error.message).toContain('tool_choice "required"');
  });

  it('refuses images, naming the message', async () => {
    const error = await refusalOf(
      chatMl,
      requestOf(
        {},
        {
          messages: [
            {
              role: 'user',
              content: 'What is in this picture?',
              parts: [
                { type: 'text', text: 'What is in this picture?' },
                { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              ],
            },
          ],
        },
      ),
    );
    expect(error.param).toBe('messages[0].content');
  });

  it.each<[string, ChatParams]>([
    ['logprobs', { logprobs: true }],
    ['top_logprobs', { top_logprobs: 3 }],
    ['n', { n: 2 }],
    ['reasoning_effort', { reasoning_effort: 'high' }],
    ['logit_bias', { logit_bias: { '999999': 5 } }],
    [
      'tools[0].function.parameters',
      {
        tools: [{ type: 'function', function: { name: 'f', parameters: { not: {} } } }],
        tool_choice: 'required',
      },
    ],
  ])('refuses %s', async (param, params) => {
    const error = await refusalOf(chatMl, requestOf(params));
    expect(error.param).toBe(param);
  });
});

describe('sampling parameters', () => {
  // At temperature 0 (node-llama-cpp's default) the tiny model's noise is the same every time.
  const plain = () => chatMl.generate(requestOf({}, { maxTokens: 20 }));

  it('stops at a stop sequence, leaving it out', async () => {
    const { text } = await plain();
    const sequence = text.slice(8, 11);
    const stopped = await chatMl.generate(
      requestOf({ stop: ['never-written', sequence] }, { maxTokens: 20 }),
    );
    expect(stopped.finishReason).toBe('stop');
    expect(stopped.text).toBe(text.slice(0, text.indexOf(sequence)));
  });

  it("biases tokens with logit_bias, read as the model's own token ids", async () => {
    const hello = tokenId('\u2581hello');
    const result = await chatMl.generate(
      requestOf({ logit_bias: { [String(hello)]: 100 } }, { maxTokens: 3 }),
    );
    expect(result.text.trim().split(/\s+/)).toEqual(['hello', 'hello', 'hello']);
  });

  it('penalises repeats with frequency_penalty and presence_penalty', async () => {
    const { text } = await plain();
    for (const params of [{ frequency_penalty: 2 }, { presence_penalty: 2 }]) {
      const penalised = await chatMl.generate(requestOf(params, { maxTokens: 20 }));
      expect(penalised.text, JSON.stringify(params)).not.toBe(text);
    }
  });

  it('samples from the top_p nucleus: a tiny one is the most likely token every time', async () => {
    const { text } = await plain();
    const nucleus = await chatMl.generate(
      requestOf({ top_p: 0.000001 }, { maxTokens: 20, temperature: 1 }),
    );
    expect(nucleus.text).toBe(text);
  });

  it('samples reproducibly for a seed', async () => {
    const sample = (seed: number) =>
      chatMl
        .generate(requestOf({ seed }, { maxTokens: 12, temperature: 1 }))
        .then((result) => result.text);
    const first = await sample(11);
    expect(await sample(11)).toBe(first);
    expect(await sample(12)).not.toBe(first);
  });
});

describe("node-llama-cpp's function calling, on a template with a call syntax", () => {
  // The random model never opens a call by itself: logit_bias makes `<tool_call>` its first
  // token, and from there node-llama-cpp's own grammars write the name and the arguments.
  const openCall = () => ({ [String(toolsTokenId('<tool_call>'))]: 100 });

  it("returns the call under tool_choice 'auto' instead of running it", async () => {
    const result = await toolsModel.generate(
      requestOf({ tools, logit_bias: openCall(), parallel_tool_calls: false }),
    );
    expect(result.finishReason).toBe('tool_calls');
    expect(result.text).toBe('');
    expect(result.toolCalls).toHaveLength(1);
    const [call] = result.toolCalls!;
    expect(call!.id).toMatch(/^call_/);
    expectArgumentsValid(call!.function.name, call!.function.arguments);
  });

  it('streams it as tool-call parts, then the finish', async () => {
    const parts = await collect(
      toolsModel.stream(requestOf({ tools, logit_bias: openCall(), parallel_tool_calls: false })),
    );
    expect(parts.map((part) => part.type)).toEqual(['tool-call', 'finish']);
    const call = parts[0] as Extract<StreamPart, { type: 'tool-call' }>;
    expect(call.index).toBe(0);
    expectArgumentsValid(call.name, call.arguments);
    expect(parts[1]).toMatchObject({ finishReason: 'tool_calls' });
  });

  it('continues after a tool result, rendered by the template', async () => {
    const result = await toolsModel.generate(
      requestOf({ tools }, { messages: withCallInHistory, maxTokens: 6 }),
    );
    expect(result.finishReason).toBe('length');
    expect(result.text).not.toBe('');
  });
});
