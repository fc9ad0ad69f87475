// Which of OpenAI's request parameters each provider reached through the AI SDK takes, and how each
// maps, declared per provider as data (as LiteLLM declares each provider's supported parameters)
// rather than as an if-chain: a parameter a provider takes becomes an AI SDK call option or
// provider option; a value it cannot honour is refused (400 naming the parameter, before any
// upstream call: ./ai-sdk-translation.ts); a parameter its table does not list is ignored (user,
// metadata, store, service_tier, unknown fields). Also what each takes as input (audio, files) and
// how it is asked for JSON. OpenAI and OpenAI-compatible upstreams are not here: the lean client
// passes their parameters through unchanged (./openai-compatible-wire.ts). docs/message-model.md
// has the same table for readers: change both together.
import type {
  JSONSchema7,
  LanguageModelV3CallOptions,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import { InvalidParameterError } from '../../errors/app-error.js';
import type { ChatParams } from '../spec.js';

/** The providers whose chat models are reached through their AI SDK packages. */
export type AiSdkProvider = 'anthropic' | 'google';

/** What a rule sees besides the parameter's value. */
export interface ParameterCall {
  /** The request's other parameters (a rule may depend on its tools). */
  readonly params: ChatParams;
  /** The provider's own model id (some rules depend on the model's generation). */
  readonly modelId: string;
}

/** The AI SDK call options a parameter can become. */
export type CallOption = keyof Pick<
  LanguageModelV3CallOptions,
  'temperature' | 'topP' | 'stopSequences' | 'seed' | 'presencePenalty' | 'frequencyPenalty'
>;

/** What a provider does with one parameter the request sets (not undefined or null). */
export interface ParameterRule {
  /** Checks the value against the rest of the request, throwing a 400 of its own if it does not fit. */
  readonly check?: (value: unknown, call: ParameterCall) => void;
  /** Why the provider cannot honour this value (the 400 names the parameter), or null. */
  readonly refuse?: (value: unknown, call: ParameterCall) => string | null;
  /** The call option the value becomes, and how (as it is when `convert` is absent). */
  readonly option?: CallOption;
  readonly convert?: (value: unknown) => unknown;
  /** The provider options the value becomes (undefined: none). */
  readonly providerOptions?: (
    value: unknown,
    call: ParameterCall,
  ) => SharedV3ProviderOptions | undefined;
  /**
   * The AI SDK's `unsupported` warning feature that says the provider dropped the parameter after
   * all (what the rules cannot know beforehand): the call is refused rather than answered
   * without it.
   */
  readonly warnedAs?: string;
}

/** A provider's parameters (checked in this order), its inputs, and how it is asked for JSON. */
export interface ProviderProfile {
  /** How messages name the provider. */
  readonly name: string;
  readonly parameters: Readonly<Record<string, ParameterRule>>;
  /** Whether it takes audio in a user message (`input_audio`). */
  readonly audioInput: boolean;
  /** The files it takes (others are refused here, not by the provider), as messages say it. */
  readonly files: { readonly accepts: (mediaType: string) => boolean; readonly described: string };
  /** The schema sent for JSON mode without one (`json_object`), where the provider needs one. */
  readonly jsonModeSchema?: JSONSchema7;
}

const always =
  (why: string): NonNullable<ParameterRule['refuse']> =>
  () =>
    why;

/** A sampling parameter taken as the SDK's call option of the same meaning. */
const sampling = (option: CallOption): ParameterRule => ({ option, warnedAs: option });

/** The Gemini 2.5 models of Google's Developer API, which take no penalties (the SDK drops them). */
const gemini25 = /(^|\/)gemini-2\.5(?:[.-]|$)/i;

const noLogprobs = 'no log probabilities are returned';

/** tool_choice names one of the request's tools, and 'required' has some to require. */
function checkToolChoice(choice: unknown, { params }: ParameterCall): void {
  const tools = params.tools ?? [];
  if (typeof choice === 'object' && choice !== null) {
    const name = (choice as { function: { name: string } }).function.name;
    if (!tools.some((tool) => tool.function.name === name)) {
      throw new InvalidParameterError(
        'tool_choice.function.name',
        `tool_choice names the function '${name}', which is not among the request's tools.`,
      );
    }
  } else if (choice === 'required' && tools.length === 0) {
    throw new InvalidParameterError(
      'tool_choice',
      "tool_choice 'required' needs at least one function in 'tools'.",
    );
  }
}

/** Whether the request offers tools the model may call. */
const toolsInPlay = (params: ChatParams) =>
  (params.tools ?? []).length > 0 && params.tool_choice !== 'none';

/** What neither provider can give: OpenAI's own features and several choices or logprobs. */
const openAiOnly: Readonly<Record<string, ParameterRule>> = {
  audio: { refuse: always('spoken answers (`audio`) are OpenAI-only; use the speech endpoints') },
  prediction: { refuse: always('predicted outputs are OpenAI-only') },
  web_search_options: {
    refuse: always("web search is OpenAI's built-in tool; use the platform's WebAgent"),
  },
  functions: { refuse: always('the deprecated `functions` field is not translated; send `tools`') },
  function_call: {
    refuse: always('the deprecated `function_call` field is not translated; send `tool_choice`'),
  },
  verbosity: { refuse: always('there is no verbosity setting') },
  modalities: {
    refuse: (modalities) =>
      Array.isArray(modalities) && modalities.some((modality) => modality !== 'text')
        ? 'the answer can only be text'
        : null,
  },
};

const oneChoice: ParameterRule = {
  refuse: (n) =>
    typeof n === 'number' && n > 1 ? 'one choice per request only; send several requests' : null,
};
const noTokenBias: ParameterRule = {
  refuse: (bias) =>
    Object.keys(bias as object).length > 0 ? 'the provider takes no token biases' : null,
};
// Log probabilities are not carried back by this path (Anthropic and Google return none).
const noLogprobsAsked: ParameterRule = { refuse: (asked) => (asked === true ? noLogprobs : null) };
const noTopLogprobs: ParameterRule = {
  refuse: (top) => (typeof top === 'number' && top > 0 ? noLogprobs : null),
};
const stop: ParameterRule = {
  ...sampling('stopSequences'),
  convert: (value) => (typeof value === 'string' ? [value] : [...(value as string[])]),
};
/** Translated by ./ai-sdk-translation.ts for both, the same way. */
const tools: ParameterRule = {};
const toolChoice: ParameterRule = { check: checkToolChoice, warnedAs: 'toolChoice' };
const responseFormat: ParameterRule = { warnedAs: 'responseFormat' };

const anthropicEfforts = ['low', 'medium', 'high', 'xhigh'];

const anthropic: ProviderProfile = {
  name: 'Anthropic',
  parameters: {
    temperature: {
      option: 'temperature',
      refuse: (value) =>
        (value as number) > 1
          ? `Anthropic takes a temperature from 0 to 1, not ${String(value)}`
          : null,
    },
    n: oneChoice,
    logit_bias: noTokenBias,
    logprobs: noLogprobsAsked,
    top_logprobs: noTopLogprobs,
    top_p: sampling('topP'),
    stop,
    seed: { refuse: always('Anthropic has no sampling seed') },
    presence_penalty: { refuse: always('Anthropic has no presence penalty') },
    frequency_penalty: { refuse: always('Anthropic has no frequency penalty') },
    ...openAiOnly,
    tools,
    tool_choice: toolChoice,
    response_format: responseFormat,
    parallel_tool_calls: {
      providerOptions: (parallel) =>
        parallel === false ? { anthropic: { disableParallelToolUse: true } } : undefined,
      warnedAs: 'providerOptions.anthropic.disableParallelToolUse',
    },
    reasoning_effort: {
      refuse: (effort) =>
        anthropicEfforts.includes(String(effort))
          ? null
          : `Anthropic's effort is one of ${anthropicEfforts.join(', ')}`,
      providerOptions: (effort) => ({ anthropic: { effort: String(effort) } }),
      warnedAs: 'providerOptions.anthropic.effort',
    },
  },
  audioInput: false,
  files: {
    accepts: (mediaType) =>
      mediaType.startsWith('image/') ||
      mediaType === 'application/pdf' ||
      mediaType === 'text/plain',
    described: 'images, PDF and plain text only',
  },
  // Anthropic has no JSON mode without a schema (its SDK would drop it): any JSON object, then.
  jsonModeSchema: { type: 'object' },
};

/** Gemini 2.5 takes a thinking budget in tokens rather than a level. */
const gemini25Budgets: Readonly<Record<string, number>> = {
  none: 0,
  minimal: 128,
  low: 1024,
  medium: 2048,
  high: 4096,
};
const geminiLevels = ['minimal', 'low', 'medium', 'high'];

/** A penalty: taken, but by no Gemini 2.5 model. */
const geminiPenalty = (option: CallOption, name: string): ParameterRule => ({
  ...sampling(option),
  refuse: (_value, { modelId }) =>
    gemini25.test(modelId) ? `Gemini 2.5 models take no ${name}` : null,
});

const google: ProviderProfile = {
  name: 'Google',
  parameters: {
    temperature: { option: 'temperature' },
    n: oneChoice,
    logit_bias: noTokenBias,
    logprobs: noLogprobsAsked,
    top_logprobs: noTopLogprobs,
    top_p: sampling('topP'),
    stop,
    seed: sampling('seed'),
    presence_penalty: geminiPenalty('presencePenalty', 'presence penalty'),
    frequency_penalty: geminiPenalty('frequencyPenalty', 'frequency penalty'),
    ...openAiOnly,
    tools,
    tool_choice: toolChoice,
    response_format: responseFormat,
    parallel_tool_calls: {
      refuse: (parallel, { params }) =>
        parallel === false && toolsInPlay(params)
          ? 'Gemini cannot be told to call at most one function per answer (leave parallel_tool_calls unset, or use tool_choice naming one function)'
          : null,
    },
    reasoning_effort: {
      refuse: (effort, { modelId }) => {
        if (gemini25.test(modelId)) {
          return Object.hasOwn(gemini25Budgets, String(effort))
            ? null
            : `one of ${Object.keys(gemini25Budgets).join(', ')}`;
        }
        return geminiLevels.includes(String(effort))
          ? null
          : `Gemini's thinking level is one of ${geminiLevels.join(', ')}`;
      },
      providerOptions: (effort, { modelId }) => ({
        google: {
          thinkingConfig: gemini25.test(modelId)
            ? { thinkingBudget: gemini25Budgets[String(effort)] }
            : { thinkingLevel: String(effort) },
        },
      }),
    },
  },
  audioInput: true,
  files: {
    accepts: (mediaType) => mediaType.includes('/'),
    described: 'media types of the form type/subtype only',
  },
};

/** Each AI SDK provider's profile. */
export const providerProfiles: Readonly<Record<AiSdkProvider, ProviderProfile>> = {
  anthropic,
  google,
};
