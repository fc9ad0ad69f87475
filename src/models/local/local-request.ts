// What a local generation is asked to do, read from the request before any model work: the
// conversation as node-llama-cpp chat history (tool calls and their results included), how the
// output is constrained (free text, a JSON grammar, a forced function call, or node-llama-cpp's
// function calling), and the sampling parameters it honours. Anything a local model cannot do is
// a 400 naming the field, thrown before the request waits for the model.
import { randomBytes } from 'node:crypto';
import type {
  ChatHistoryItem,
  ChatModelFunctionCall,
  ChatModelFunctions,
  GbnfJsonSchema,
} from 'node-llama-cpp';
import { InvalidParameterError } from '../../errors/app-error.js';
import type { ChatParams, ChatTurn, FunctionTool, GenerationRequest, ToolCall } from '../spec.js';
import { grammarSchemaOf, toGrammarSchema, withDefinitions } from './json-schema-grammar.js';

export type LocalOutput =
  /** Free text. */
  | { readonly kind: 'text' }
  /** Text under a grammar: JSON matching `schema`, or any JSON when it is undefined. */
  | { readonly kind: 'json'; readonly schema: GbnfJsonSchema | undefined }
  /** `{"name": …, "arguments": …}` under a grammar, parsed into one tool call. */
  | {
      readonly kind: 'forced-call';
      readonly schema: GbnfJsonSchema;
      readonly names: ReadonlySet<string>;
    }
  /** node-llama-cpp's function calling: the model chooses between text and calls. */
  | {
      readonly kind: 'functions';
      readonly functions: ChatModelFunctions;
      readonly maxParallelCalls: number | undefined;
    };

export interface LocalSampling {
  readonly topP?: number;
  readonly seed?: number;
  readonly stop?: readonly string[];
  readonly presencePenalty?: number;
  readonly frequencyPenalty?: number;
  /** OpenAI's logit_bias, read as the local model's own token ids. */
  readonly logitBias?: ReadonlyMap<number, number>;
}

export interface LocalPlan {
  /** The conversation, ending with the model response to generate (or to continue). */
  readonly history: ChatHistoryItem[];
  readonly output: LocalOutput;
  readonly sampling: LocalSampling;
}

/** Parameters a local model cannot honour: each answers 400 when the request sets it. */
const refused: ReadonlyArray<{
  readonly field: string;
  readonly applies: (value: unknown) => boolean;
  readonly why: string;
}> = [
  {
    field: 'logprobs',
    applies: (value) => value === true,
    why: 'Local models do not report log probabilities.',
  },
  {
    field: 'top_logprobs',
    applies: (value) => value !== undefined && value !== null,
    why: 'Local models do not report log probabilities.',
  },
  {
    field: 'n',
    applies: (value) => typeof value === 'number' && value > 1,
    why: 'Local models generate one choice per request; send the request again for another.',
  },
  {
    field: 'reasoning_effort',
    applies: (value) => value !== undefined && value !== null,
    why: 'Local models have no reasoning effort setting.',
  },
  {
    field: 'modalities',
    applies: (value) => Array.isArray(value) && value.some((modality) => modality !== 'text'),
    why: 'Local models answer in text only.',
  },
  {
    field: 'audio',
    applies: (value) => value !== undefined && value !== null,
    why: 'Local models answer in text only.',
  },
  {
    field: 'prediction',
    applies: (value) => value !== undefined && value !== null,
    why: 'Local models do not take predicted outputs.',
  },
  {
    field: 'web_search_options',
    applies: (value) => value !== undefined && value !== null,
    why: 'Local models do not search the web.',
  },
];

/** OpenAI's id shape for tool calls, random per call. */
export function newToolCallId(): string {
  return `call_${randomBytes(12).toString('base64url')}`;
}

export function planLocalGeneration(request: GenerationRequest): LocalPlan {
  const params: ChatParams = request.params ?? {};
  for (const { field, applies, why } of refused) {
    if (applies(params[field])) throw new InvalidParameterError(field, why);
  }
  const history = historyOf(request.messages);
  const output = outputOf(request, params);
  if (output.kind === 'forced-call') {
    insertSystemText(history, forcedCallInstructions(params));
  }
  return { history, output, sampling: samplingOf(params) };
}

function historyOf(messages: readonly ChatTurn[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  /** Calls of earlier assistant turns by id, waiting for their tool results. */
  const calls = new Map<string, ChatModelFunctionCall>();
  messages.forEach((message, index) => {
    if (message.parts?.some((part) => part.type !== 'text') === true) {
      throw new InvalidParameterError(
        `messages[${index}].content`,
        'Local models read text only: images, audio and files cannot be sent to them.',
      );
    }
    switch (message.role) {
      case 'system':
        history.push({ type: 'system', text: message.content });
        return;
      case 'user':
        history.push({ type: 'user', text: message.content });
        return;
      case 'assistant': {
        const response: Array<string | ChatModelFunctionCall> = [];
        if (message.content !== '') response.push(message.content);
        for (const call of message.toolCalls ?? []) {
          const item: ChatModelFunctionCall = {
            type: 'functionCall',
            name: call.function.name,
            params: jsonOrText(call.function.arguments),
            result: undefined,
          };
          calls.set(call.id, item);
          response.push(item);
        }
        history.push({ type: 'model', response });
        return;
      }
      case 'tool': {
        const call = message.toolCallId === undefined ? undefined : calls.get(message.toolCallId);
        if (call === undefined) {
          throw new InvalidParameterError(
            `messages[${index}].tool_call_id`,
            "A tool result must answer a call of an earlier assistant message (its 'tool_calls[].id').",
          );
        }
        // The chat wrapper renders a call and its result together, in the model's response.
        call.result = jsonOrText(message.content);
        return;
      }
    }
  });
  const last = messages[messages.length - 1];
  if (last?.role === 'user') {
    history.push({ type: 'model', response: [] });
  } else if (last?.role === 'tool') {
    // The model continues the response that made the calls, now followed by their results.
    if (history[history.length - 1]?.type !== 'model') {
      throw new InvalidParameterError(
        `messages[${messages.length - 1}]`,
        'Tool results must directly follow the assistant message whose calls they answer.',
      );
    }
  } else {
    throw new InvalidParameterError(
      `messages[${Math.max(0, messages.length - 1)}].role`,
      "The last message must be the user's (role 'user') or a tool result (role 'tool').",
    );
  }
  return history;
}

/** Arguments and results as the values they encode, so the template renders them as JSON. */
function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function outputOf(request: GenerationRequest, params: ChatParams): LocalOutput {
  const tools = params.tools ?? [];
  tools.forEach((tool, index) => {
    if ((tool as { type?: unknown }).type !== 'function') {
      throw new InvalidParameterError(
        `tools[${index}].type`,
        "Local models call functions only (type 'function').",
      );
    }
  });
  const choice = params.tool_choice ?? (tools.length > 0 ? 'auto' : 'none');
  if (choice !== 'none' && choice !== 'auto' && tools.length === 0) {
    throw new InvalidParameterError(
      'tool_choice',
      "A 'tool_choice' that asks for a call needs 'tools'.",
    );
  }

  if (choice === 'required' || typeof choice === 'object') {
    const chosen =
      choice === 'required'
        ? tools.map((tool, index) => ({ tool, index }))
        : tools
            .map((tool, index) => ({ tool, index }))
            .filter(({ tool }) => tool.function.name === choice.function.name);
    if (chosen.length === 0) {
      throw new InvalidParameterError(
        'tool_choice',
        `'tool_choice' names the function '${typeof choice === 'object' ? choice.function.name : ''}', which is not among 'tools'.`,
      );
    }
    return {
      kind: 'forced-call',
      schema: callSchema(chosen),
      names: new Set(chosen.map(({ tool }) => tool.function.name)),
    };
  }

  const format = params.response_format;
  const schema = responseSchemaOf(request, params);
  if (choice === 'auto' && tools.length > 0) {
    if (schema !== null) {
      throw new InvalidParameterError(
        format !== undefined && format.type !== 'text' ? 'response_format' : 'tools',
        "Local models cannot combine 'tools' (tool_choice 'auto') with a JSON response format: node-llama-cpp's function calling and grammars exclude each other. Use tool_choice 'required' or a named function to force a call, or send the request without tools.",
      );
    }
    const functions: Record<string, ChatModelFunctions[string]> = {};
    tools.forEach((tool, index) => {
      const { name, description, parameters } = tool.function;
      functions[name] = {
        ...(description === undefined ? {} : { description }),
        ...(parameters === undefined
          ? {}
          : { params: grammarSchemaOf(parameters, `tools[${index}].function.parameters`) }),
      };
    });
    return {
      kind: 'functions',
      functions,
      maxParallelCalls: params.parallel_tool_calls === false ? 1 : undefined,
    };
  }
  return schema === null ? { kind: 'text' } : { kind: 'json', schema };
}

/**
 * The JSON the answer must match: the platform's own schema (agents) first, else the client's
 * response_format. Null for free text; undefined schema for any JSON (json_object).
 */
function responseSchemaOf(
  request: GenerationRequest,
  params: ChatParams,
): GbnfJsonSchema | undefined | null {
  if (request.responseSchema !== undefined) {
    return grammarSchemaOf(request.responseSchema, 'response_format');
  }
  const format = params.response_format;
  if (format === undefined || format.type === 'text') return null;
  if (format.type === 'json_object') return undefined;
  if (format.type === 'json_schema') {
    const schema = format.json_schema.schema;
    // OpenAI reads a missing schema as "any JSON".
    return schema === undefined
      ? undefined
      : grammarSchemaOf(schema, 'response_format.json_schema.schema');
  }
  throw new InvalidParameterError(
    'response_format.type',
    "Local models take response_format 'text', 'json_object' or 'json_schema'.",
  );
}

/** OpenAI reads a function without `parameters` as one that takes none. */
const noParameters = { type: 'object', properties: {}, additionalProperties: false } as const;

/**
 * `{"name": <one of the names>, "arguments": <that function's parameters>}`: one alternative per
 * function (oneOf), so the grammar ties the arguments to the name the model wrote. Each function's
 * definitions are renamed apart and hoisted to the root, where the grammar generator looks.
 */
function callSchema(chosen: ReadonlyArray<{ tool: FunctionTool; index: number }>): GbnfJsonSchema {
  const definitions: Record<string, GbnfJsonSchema> = {};
  const alternatives = chosen.map(({ tool, index }) => {
    const parameters = tool.function.parameters ?? noParameters;
    const translated = toGrammarSchema(parameters, {
      param: `tools[${index}].function.parameters`,
      definitionPrefix: `f${index}_`,
    });
    Object.assign(definitions, translated.definitions);
    return {
      type: 'object',
      properties: { name: { const: tool.function.name }, arguments: translated.schema },
      required: ['name', 'arguments'],
      additionalProperties: false,
    } as const satisfies GbnfJsonSchema;
  });
  const root: GbnfJsonSchema =
    alternatives.length === 1 ? alternatives[0]! : { oneOf: alternatives };
  return withDefinitions(root, definitions);
}

/** Tells the model what the forcing grammar will make it write anyway, so the values fit. */
function forcedCallInstructions(params: ChatParams): string {
  const choice = params.tool_choice;
  const tools = (params.tools ?? []).filter(
    (tool) => typeof choice !== 'object' || tool.function.name === choice.function.name,
  );
  const listed = tools.map(({ function: { name, description, parameters } }) => ({
    name,
    ...(description === undefined ? {} : { description }),
    parameters: parameters ?? noParameters,
  }));
  return (
    (typeof choice === 'object'
      ? `Call the function '${choice.function.name}' now.`
      : 'Call one of the functions below now.') +
    ' Answer with only a JSON object {"name": <the function\'s name>, "arguments": <its arguments>}.' +
    `\nFunctions: ${JSON.stringify(listed)}`
  );
}

/** Adds a system text after the conversation's opening system messages. */
function insertSystemText(history: ChatHistoryItem[], text: string): void {
  const firstOther = history.findIndex((item) => item.type !== 'system');
  history.splice(firstOther === -1 ? history.length : firstOther, 0, { type: 'system', text });
}

function samplingOf(params: ChatParams): LocalSampling {
  const stop = params.stop === undefined ? undefined : [params.stop].flat();
  if (stop?.some((trigger) => typeof trigger !== 'string' || trigger === '') === true) {
    throw new InvalidParameterError(
      'stop',
      "'stop' must be a string or a list of non-empty strings.",
    );
  }
  let logitBias: Map<number, number> | undefined;
  if (params.logit_bias !== undefined && params.logit_bias !== null) {
    logitBias = new Map();
    for (const [key, bias] of Object.entries(params.logit_bias)) {
      const token = Number(key);
      if (!/^\d+$/.test(key) || !Number.isSafeInteger(token) || typeof bias !== 'number') {
        throw new InvalidParameterError(
          'logit_bias',
          "'logit_bias' maps token ids (the local model's own) to numbers.",
        );
      }
      logitBias.set(token, bias);
    }
  }
  return {
    ...(typeof params.top_p === 'number' ? { topP: params.top_p } : {}),
    ...(typeof params.seed === 'number' ? { seed: params.seed } : {}),
    ...(stop === undefined || stop.length === 0 ? {} : { stop }),
    ...(typeof params.presence_penalty === 'number'
      ? { presencePenalty: params.presence_penalty }
      : {}),
    ...(typeof params.frequency_penalty === 'number'
      ? { frequencyPenalty: params.frequency_penalty }
      : {}),
    ...(logitBias === undefined || logitBias.size === 0 ? {} : { logitBias }),
  };
}

/** The tool call a forced generation wrote, or null when it is not complete JSON of that shape. */
export function forcedCallOf(text: string, names: ReadonlySet<string>): ToolCall | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { name, arguments: args } = value as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || !names.has(name)) return null;
  return {
    id: newToolCallId(),
    type: 'function',
    function: { name, arguments: JSON.stringify(args ?? {}) },
  };
}
