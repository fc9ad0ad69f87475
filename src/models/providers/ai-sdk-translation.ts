// OpenAI's Chat Completions request (the platform's message model, ../spec.ts) translated to the
// AI SDK's call options (LanguageModelV3) for the providers reached through their AI SDK packages
// (Anthropic, Google), driven by the table of what each provider takes (./provider-parameters.ts):
// every parameter it cannot honour refused before any upstream call (400 naming it), the rest
// mapped to call options and provider options; tools, tool_choice and response_format; and the
// SDK's warnings that a parameter was dropped after all turned into the same refusal. The prompt
// is ./ai-sdk-prompt.ts, the answers ./ai-sdk-results.ts. docs/message-model.md has
// the table per provider for readers.
import { signalOf } from '../../net/hang-up.js';
import type {
  JSONSchema7,
  LanguageModelV3CallOptions,
  LanguageModelV3FunctionTool,
  LanguageModelV3ToolChoice,
  SharedV3ProviderOptions,
  SharedV3Warning,
} from '@ai-sdk/provider';
import { InvalidParameterError } from '../../errors/app-error.js';
import type { ChatParams, GenerationRequest } from '../spec.js';
import { PromptBuilder } from './ai-sdk-prompt.js';
import { cannotHonour, profileOf, type TranslationTarget } from './ai-sdk-target.js';
import {
  providerProfiles,
  type AiSdkProvider,
  type CallOption,
  type ParameterCall,
  type ParameterRule,
  type ProviderProfile,
} from './provider-parameters.js';

const isSet = (value: unknown) => value !== undefined && value !== null;

/** A provider's table read once: its rules in order, and its parameters by SDK warning feature. */
interface CompiledTable {
  readonly rules: ReadonlyArray<readonly [string, ParameterRule]>;
  readonly warned: ReadonlyMap<string, string>;
}

function compile(profile: ProviderProfile): CompiledTable {
  const rules = Object.entries(profile.parameters);
  const warned = new Map<string, string>();
  for (const [name, rule] of rules)
    if (rule.warnedAs !== undefined) warned.set(rule.warnedAs, name);
  return { rules, warned };
}

const tables: Readonly<Record<AiSdkProvider, CompiledTable>> = {
  anthropic: compile(providerProfiles.anthropic),
  google: compile(providerProfiles.google),
};

/** The value the request sets for a parameter: the temperature is a field of its own. */
function valueOf(request: GenerationRequest, params: ChatParams, name: string): unknown {
  return name === 'temperature' ? request.temperature : params[name];
}

/** The parameters the request sets, with the target's rule for each (unlisted ones ignored). */
function* setParameters(request: GenerationRequest, target: TranslationTarget) {
  const params = request.params ?? {};
  const call: ParameterCall = { params, modelId: target.modelId };
  for (const [name, rule] of tables[target.provider].rules) {
    const value = valueOf(request, params, name);
    if (isSet(value)) yield { name, rule, value, call };
  }
}

/**
 * Refuses, before any upstream call, every parameter the target provider cannot honour (or that
 * its AI SDK package would drop with a warning), in the order of its table.
 */
export function checkParams(request: GenerationRequest, target: TranslationTarget): void {
  for (const { name, rule, value, call } of setParameters(request, target)) {
    rule.check?.(value, call);
    const why = rule.refuse?.(value, call) ?? null;
    if (why !== null) throw cannotHonour(target, name, why);
  }
}

/** The call options and provider options the request's parameters become. */
function parameterOptions(request: GenerationRequest, target: TranslationTarget) {
  const options: Partial<Record<CallOption, unknown>> = {};
  const providerOptions: Record<string, Record<string, unknown>> = {};
  for (const { rule, value, call } of setParameters(request, target)) {
    if (rule.option !== undefined) options[rule.option] = rule.convert?.(value) ?? value;
    const more = rule.providerOptions?.(value, call);
    for (const [provider, values] of Object.entries(more ?? {})) {
      providerOptions[provider] = { ...providerOptions[provider], ...values };
    }
  }
  return {
    options: options as Pick<LanguageModelV3CallOptions, CallOption>,
    providerOptions:
      Object.keys(providerOptions).length === 0
        ? undefined
        : (providerOptions as SharedV3ProviderOptions),
  };
}

/**
 * The refusal a call's SDK warnings amount to, or null: a parameter the client set was dropped or
 * altered after all (what the table cannot know beforehand, as a model that rejects sampling
 * parameters), so the call is answered 400 naming it instead of with an answer that ignores it.
 * `strict` (tool schemas) is not among them: it is ignored where the model cannot enforce it
 * (documented).
 */
export function refusalOfWarnings(
  warnings: readonly SharedV3Warning[],
  request: GenerationRequest,
  target: TranslationTarget,
): InvalidParameterError | null {
  const params = request.params ?? {};
  for (const warning of warnings) {
    if (warning.type !== 'unsupported') continue;
    const param = tables[target.provider].warned.get(warning.feature);
    if (param === undefined || !isSet(params[param])) continue;
    const details = warning.details === undefined ? '' : ` (${warning.details})`;
    return new InvalidParameterError(
      param,
      `Model '${target.modelName}' (${profileOf(target).name}) cannot honour '${param}'${details}.`,
    );
  }
  return null;
}

function toolChoiceOf(choice: ChatParams['tool_choice']): LanguageModelV3ToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (typeof choice === 'object') return { type: 'tool', toolName: choice.function.name };
  return { type: choice };
}

function responseFormatOf(
  request: GenerationRequest,
  target: TranslationTarget,
): LanguageModelV3CallOptions['responseFormat'] {
  if (request.responseSchema !== undefined) {
    return { type: 'json', schema: request.responseSchema, name: 'result' };
  }
  const format = request.params?.response_format;
  if (format === undefined || format === null || format.type === 'text') return undefined;
  const anyObject = profileOf(target).jsonModeSchema;
  if (format.type === 'json_object') {
    return anyObject === undefined ? { type: 'json' } : { type: 'json', schema: anyObject };
  }
  const { name, description, schema } = format.json_schema;
  const jsonSchema = (schema as JSONSchema7 | undefined) ?? anyObject;
  return {
    type: 'json',
    name,
    ...(description === undefined ? {} : { description }),
    ...(jsonSchema === undefined ? {} : { schema: jsonSchema }),
  };
}

function toolsOf(params: ChatParams): LanguageModelV3FunctionTool[] {
  return (params.tools ?? []).map((tool) => ({
    type: 'function',
    name: tool.function.name,
    ...(tool.function.description === undefined ? {} : { description: tool.function.description }),
    inputSchema: (tool.function.parameters as JSONSchema7 | undefined) ?? {
      type: 'object',
      properties: {},
    },
    ...(typeof tool.function.strict === 'boolean' ? { strict: tool.function.strict } : {}),
  }));
}

/** Everything of a call but its abort signal: the prompt, sampling, tools and output format. */
export async function toCallOptions(
  request: GenerationRequest,
  target: TranslationTarget,
): Promise<Omit<LanguageModelV3CallOptions, 'abortSignal'>> {
  checkParams(request, target);
  const params = request.params ?? {};
  const tools = toolsOf(params);
  const toolChoice = tools.length === 0 ? undefined : toolChoiceOf(params.tool_choice);
  const responseFormat = responseFormatOf(request, target);
  const { options, providerOptions } = parameterOptions(request, target);
  const prompt = await new PromptBuilder(target, signalOf(request.signal)).build(request.messages);
  return {
    prompt,
    maxOutputTokens: request.maxTokens,
    ...options,
    ...(tools.length === 0 ? {} : { tools }),
    ...(toolChoice === undefined ? {} : { toolChoice }),
    ...(responseFormat === undefined ? {} : { responseFormat }),
    ...(providerOptions === undefined ? {} : { providerOptions }),
  };
}
