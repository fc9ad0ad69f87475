// OpenAI's Chat Completions shapes (the platform's message model, ../spec.ts) translated to the AI
// SDK's specification interface (LanguageModelV3) and back, for the providers reached through their
// AI SDK packages (Anthropic, Google): the prompt (system, content parts, tool calls and results),
// the call options (tools, tool_choice, response_format, sampling), the refusals of what a provider
// cannot honour (400 naming the field, before any upstream call), and the results (tool calls,
// finish reasons, cache and reasoning tokens, streamed tool-call deltas). docs/fragments/vendors.md
// has the table per provider.
import type {
  JSONSchema7,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FilePart,
  LanguageModelV3FinishReason,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3TextPart,
  LanguageModelV3ToolCallPart,
  LanguageModelV3ToolChoice,
  LanguageModelV3ToolResultPart,
  LanguageModelV3Usage,
  SharedV3ProviderOptions,
  SharedV3Warning,
} from '@ai-sdk/provider';
import type { RemoteModelDefinition } from '../../config/config.js';
import { InvalidParameterError } from '../../errors/app-error.js';
import {
  RequestAbortedError,
  type ChatParams,
  type ChatTurn,
  type ContentPart,
  type FinishReason,
  type GenerationRequest,
  type StreamPart,
  type ToolCall,
} from '../spec.js';

/** The bytes of an image a provider cannot fetch itself (see ./fetched-images.ts). */
export interface FetchedImage {
  readonly data: Uint8Array;
  readonly mediaType: string;
}

/** Fetches an image URL through the platform's address policy; throws a message safe to show. */
export type ImageFetcher = (url: string, signal: AbortSignal) => Promise<FetchedImage>;

/** What the translation needs to know of the model it translates for. */
export interface TranslationTarget {
  readonly provider: RemoteModelDefinition['provider'];
  /** The provider's own model id (some parameters depend on the model generation). */
  readonly modelId: string;
  /** The catalog name, for messages. */
  readonly modelName: string;
  /** The provider model's `supportedUrls`: URLs it fetches itself, by media type. */
  readonly supportedUrls: Readonly<Record<string, RegExp[]>>;
  /** Absent: an image URL the provider cannot fetch is refused (send a data URL). */
  readonly fetchImage?: ImageFetcher | undefined;
}

type FunctionToolCall = Extract<LanguageModelV3Content, { type: 'tool-call' }>;

const providerNames: Partial<Record<RemoteModelDefinition['provider'], string>> = {
  anthropic: 'Anthropic',
  google: 'Google',
  openai: 'OpenAI',
};

function providerName(target: TranslationTarget): string {
  return providerNames[target.provider] ?? target.provider;
}

/** The Gemini 2.5 models of Google's Developer API, which take no penalties (the SDK drops them). */
const gemini25 = /(^|\/)gemini-2\.5(?:[.-]|$)/i;

// ---------------------------------------------------------------------------------------------
// Parameters: what each provider honours, refuses or ignores.
// ---------------------------------------------------------------------------------------------

/**
 * OpenAI request fields that ask for something neither Anthropic nor Google can give: refused
 * rather than dropped (the client would otherwise get an answer that ignores them, untold).
 */
const refusedEverywhere: Readonly<Record<string, string>> = {
  audio: 'spoken answers (`audio`) are OpenAI-only; use the speech endpoints',
  prediction: 'predicted outputs are OpenAI-only',
  web_search_options: "web search is OpenAI's built-in tool; use the platform's WebAgent",
  functions: 'the deprecated `functions` field is not translated; send `tools`',
  function_call: 'the deprecated `function_call` field is not translated; send `tool_choice`',
  verbosity: 'there is no verbosity setting',
};

function refuse(target: TranslationTarget, param: string, why: string): never {
  throw new InvalidParameterError(
    param,
    `Model '${target.modelName}' (${providerName(target)}) cannot honour '${param}': ${why}.`,
  );
}

const isSet = (value: unknown) => value !== undefined && value !== null;

/**
 * Refuses, before any upstream call, every parameter the target provider cannot honour (or that
 * its AI SDK package would drop with a warning). Parameters without meaning there (user,
 * metadata, store, service_tier, unknown fields) are ignored.
 */
export function checkParams(request: GenerationRequest, target: TranslationTarget): void {
  const params = request.params ?? {};
  const anthropic = target.provider === 'anthropic';
  const google = target.provider === 'google';
  const openai = target.provider === 'openai';

  if (anthropic && request.temperature !== undefined && request.temperature > 1) {
    refuse(
      target,
      'temperature',
      `Anthropic takes a temperature from 0 to 1, not ${request.temperature}`,
    );
  }
  const n = params.n;
  if (typeof n === 'number' && n > 1) {
    refuse(target, 'n', 'one choice per request only; send several requests');
  }
  if (!openai && params.logit_bias !== undefined && params.logit_bias !== null) {
    if (Object.keys(params.logit_bias).length > 0) {
      refuse(target, 'logit_bias', 'the provider takes no token biases');
    }
  }
  // Log probabilities are not carried back by this path (Anthropic and Google return none).
  if (params.logprobs === true) refuse(target, 'logprobs', 'no log probabilities are returned');
  if (typeof params.top_logprobs === 'number' && params.top_logprobs > 0) {
    refuse(target, 'top_logprobs', 'no log probabilities are returned');
  }
  if (anthropic) {
    if (isSet(params.seed)) refuse(target, 'seed', 'Anthropic has no sampling seed');
    if (isSet(params.presence_penalty)) {
      refuse(target, 'presence_penalty', 'Anthropic has no presence penalty');
    }
    if (isSet(params.frequency_penalty)) {
      refuse(target, 'frequency_penalty', 'Anthropic has no frequency penalty');
    }
  }
  if (google && gemini25.test(target.modelId)) {
    if (isSet(params.presence_penalty)) {
      refuse(target, 'presence_penalty', 'Gemini 2.5 models take no presence penalty');
    }
    if (isSet(params.frequency_penalty)) {
      refuse(target, 'frequency_penalty', 'Gemini 2.5 models take no frequency penalty');
    }
  }
  if (!openai) {
    for (const [field, why] of Object.entries(refusedEverywhere)) {
      if (isSet(params[field])) refuse(target, field, why);
    }
    const modalities = params.modalities;
    if (Array.isArray(modalities) && modalities.some((modality) => modality !== 'text')) {
      refuse(target, 'modalities', 'the answer can only be text');
    }
  }
  const tools = params.tools ?? [];
  const choice = params.tool_choice;
  if (choice !== undefined && choice !== null && typeof choice === 'object') {
    const name = choice.function.name;
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
  const toolsInPlay = tools.length > 0 && choice !== 'none';
  if (params.parallel_tool_calls === false && toolsInPlay && !anthropic && !openai) {
    refuse(
      target,
      'parallel_tool_calls',
      'Gemini cannot be told to call at most one function per answer (leave parallel_tool_calls unset, or use tool_choice naming one function)',
    );
  }
  if (isSet(params.reasoning_effort)) reasoningOptions(params.reasoning_effort, target);
}

/** The provider option that carries `reasoning_effort`; refuses values without an equivalent. */
function reasoningOptions(
  effort: ChatParams['reasoning_effort'],
  target: TranslationTarget,
): SharedV3ProviderOptions {
  const value = String(effort);
  switch (target.provider) {
    case 'anthropic': {
      const efforts = ['low', 'medium', 'high', 'xhigh'];
      if (!efforts.includes(value)) {
        refuse(target, 'reasoning_effort', `Anthropic's effort is one of ${efforts.join(', ')}`);
      }
      return { anthropic: { effort: value } };
    }
    case 'google': {
      if (gemini25.test(target.modelId)) {
        // Gemini 2.5 takes a thinking budget in tokens rather than a level.
        const budgets: Record<string, number> = {
          none: 0,
          minimal: 128,
          low: 1024,
          medium: 2048,
          high: 4096,
        };
        const budget = budgets[value];
        if (budget === undefined) {
          refuse(target, 'reasoning_effort', `one of ${Object.keys(budgets).join(', ')}`);
        }
        return { google: { thinkingConfig: { thinkingBudget: budget } } };
      }
      const levels = ['minimal', 'low', 'medium', 'high'];
      if (!levels.includes(value)) {
        refuse(
          target,
          'reasoning_effort',
          `Gemini's thinking level is one of ${levels.join(', ')}`,
        );
      }
      return { google: { thinkingConfig: { thinkingLevel: value } } };
    }
    case 'openai':
      return { openai: { reasoningEffort: value } };
    case 'openai-compatible':
    case 'deepgram':
      refuse(target, 'reasoning_effort', 'this provider takes no reasoning effort');
  }
}

/**
 * The SDK's warnings that mean a parameter the client set was dropped or altered after all (what
 * the checks above cannot know beforehand, as a model that rejects sampling parameters): the
 * call is answered 400 naming it instead of with an answer that ignores it. `strict` (tool
 * schemas) is not among them: it is ignored where the model cannot enforce it (documented).
 */
const warnedParams: Readonly<Record<string, string>> = {
  topP: 'top_p',
  seed: 'seed',
  presencePenalty: 'presence_penalty',
  frequencyPenalty: 'frequency_penalty',
  stopSequences: 'stop',
  responseFormat: 'response_format',
  toolChoice: 'tool_choice',
  'providerOptions.anthropic.disableParallelToolUse': 'parallel_tool_calls',
  'providerOptions.anthropic.effort': 'reasoning_effort',
};

/** The refusal a call's SDK warnings amount to, or null. */
export function refusalOfWarnings(
  warnings: readonly SharedV3Warning[],
  request: GenerationRequest,
  target: TranslationTarget,
): InvalidParameterError | null {
  const params = request.params ?? {};
  for (const warning of warnings) {
    if (warning.type !== 'unsupported') continue;
    const param = warnedParams[warning.feature];
    if (param === undefined || !isSet(params[param])) continue;
    const details = warning.details === undefined ? '' : ` (${warning.details})`;
    return new InvalidParameterError(
      param,
      `Model '${target.modelName}' (${providerName(target)}) cannot honour '${param}'${details}.`,
    );
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// The prompt.
// ---------------------------------------------------------------------------------------------

/** Fetched image bytes one request may hold in memory, over all its image URLs. */
const maxFetchedBytesPerRequest = 20 * 1024 * 1024;

const imageTypesByExtension: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  bmp: 'image/bmp',
};

/** The media type an image URL's path names ('image/*' when it names none). */
function imageTypeOfUrl(url: URL): string {
  const extension = /\.([a-z0-9]+)$/i.exec(url.pathname)?.[1]?.toLowerCase();
  return (extension === undefined ? undefined : imageTypesByExtension[extension]) ?? 'image/*';
}

/** Whether the provider fetches this URL itself (its `supportedUrls`, as the AI SDK matches them). */
function fetchedByProvider(target: TranslationTarget, mediaType: string, url: string): boolean {
  const lowerUrl = url.toLowerCase();
  const lowerType = mediaType.toLowerCase();
  return Object.entries(target.supportedUrls).some(([key, patterns]) => {
    const prefix = key === '*' || key === '*/*' ? '' : key.toLowerCase().replace(/\*$/, '');
    return lowerType.startsWith(prefix) && patterns.some((pattern) => pattern.test(lowerUrl));
  });
}

interface DataUrl {
  readonly mediaType: string;
  /** Base64 (as the AI SDK takes a string), or the bytes of a percent-encoded data URL. */
  readonly data: string | Uint8Array;
}

const base64Text = /^[A-Za-z0-9+/]*={0,2}$/;

/** `data:<type>[;base64],<data>`; null when `url` is not a data URL. */
function parseDataUrl(url: string, param: string): DataUrl | null {
  if (!url.startsWith('data:')) return null;
  const comma = url.indexOf(',');
  if (comma < 0) throw new InvalidParameterError(param, 'The data URL has no data (no comma).');
  const [mediaType = '', ...flags] = url.slice(5, comma).split(';');
  const body = url.slice(comma + 1);
  if (flags.some((flag) => flag.trim().toLowerCase() === 'base64')) {
    if (!base64Text.test(body)) {
      throw new InvalidParameterError(
        param,
        'The data URL says base64 but its data is not base64.',
      );
    }
    return { mediaType: mediaType.trim().toLowerCase(), data: body };
  }
  return {
    mediaType: mediaType.trim().toLowerCase() || 'text/plain',
    data: new TextEncoder().encode(decodeURIComponent(body)),
  };
}

/** Media types each provider takes as a file (others are refused here, not by the provider). */
function fileAccepted(target: TranslationTarget, mediaType: string): boolean {
  if (target.provider === 'anthropic') {
    return (
      mediaType.startsWith('image/') ||
      mediaType === 'application/pdf' ||
      mediaType === 'text/plain'
    );
  }
  return mediaType.includes('/');
}

const audioTypes: Readonly<Record<string, string>> = {
  wav: 'audio/wav',
  mp3: 'audio/mp3',
  aac: 'audio/aac',
  flac: 'audio/flac',
  ogg: 'audio/ogg',
  aiff: 'audio/aiff',
};

const fileTypesByExtension: Readonly<Record<string, string>> = {
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  html: 'text/html',
  json: 'application/json',
  ...imageTypesByExtension,
};

/** Builds the prompt; fetches, when a provider needs their bytes, the images it cannot fetch. */
class PromptBuilder {
  private fetchedBytes = 0;

  constructor(
    private readonly target: TranslationTarget,
    private readonly signal: AbortSignal,
  ) {}

  async build(messages: readonly ChatTurn[]): Promise<LanguageModelV3Prompt> {
    // System turns go first, in order, wherever they were: both providers take one system prompt
    // (Google refuses a system message after the conversation began).
    const system: LanguageModelV3Message[] = [];
    const rest: LanguageModelV3Message[] = [];
    const toolNames = new Map<string, string>();
    for (const [index, turn] of messages.entries()) {
      switch (turn.role) {
        case 'system':
          system.push({ role: 'system', content: turn.content });
          break;
        case 'user':
          rest.push({ role: 'user', content: await this.userContent(turn, index) });
          break;
        case 'assistant':
          rest.push({ role: 'assistant', content: assistantContent(turn, index, toolNames) });
          break;
        case 'tool': {
          const part = toolResult(turn, index, toolNames);
          const last = rest.at(-1);
          // Consecutive tool turns answer one assistant turn: one tool message.
          if (last?.role === 'tool') last.content.push(part);
          else rest.push({ role: 'tool', content: [part] });
          break;
        }
      }
    }
    return [...system, ...rest];
  }

  private async userContent(
    turn: ChatTurn,
    index: number,
  ): Promise<Array<LanguageModelV3TextPart | LanguageModelV3FilePart>> {
    if (turn.parts === undefined) return [{ type: 'text', text: turn.content }];
    return Promise.all(
      turn.parts.map((part, j) => this.userPart(part, `messages[${index}].content[${j}]`)),
    );
  }

  private async userPart(
    part: ContentPart,
    param: string,
  ): Promise<LanguageModelV3TextPart | LanguageModelV3FilePart> {
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text };
      case 'image_url':
        return this.image(part.image_url.url, `${param}.image_url.url`);
      case 'input_audio': {
        const format = part.input_audio.format.toLowerCase();
        const mediaType = audioTypes[format];
        if (this.target.provider === 'anthropic') {
          refuse(this.target, param, 'Anthropic models take no audio input');
        }
        if (mediaType === undefined) {
          throw new InvalidParameterError(
            `${param}.input_audio.format`,
            `Audio format '${part.input_audio.format}' is not one of ${Object.keys(audioTypes).join(', ')}.`,
          );
        }
        const data = part.input_audio.data;
        if (!base64Text.test(data)) {
          throw new InvalidParameterError(`${param}.input_audio.data`, 'The audio is not base64.');
        }
        return { type: 'file', mediaType, data };
      }
      case 'file':
        return this.file(part.file, param);
    }
  }

  private async image(url: string, param: string): Promise<LanguageModelV3FilePart> {
    const inline = parseDataUrl(url, param);
    if (inline !== null) {
      if (!inline.mediaType.startsWith('image/')) {
        throw new InvalidParameterError(
          param,
          `The data URL holds '${inline.mediaType}', not an image (data:image/png;base64,…).`,
        );
      }
      return { type: 'file', mediaType: inline.mediaType, data: inline.data };
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new InvalidParameterError(param, 'The image URL is neither an http(s) nor a data URL.');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new InvalidParameterError(param, 'The image URL is neither an http(s) nor a data URL.');
    }
    const mediaType = imageTypeOfUrl(parsed);
    if (fetchedByProvider(this.target, mediaType, url)) {
      return { type: 'file', mediaType, data: parsed };
    }
    const fetchImage = this.target.fetchImage;
    if (fetchImage === undefined) {
      refuse(
        this.target,
        param,
        'the provider needs the image itself and this service does not fetch image URLs; send the image as a data URL (data:image/png;base64,…)',
      );
    }
    let image: FetchedImage;
    try {
      image = await fetchImage(url, this.signal);
    } catch (error) {
      if (this.signal.aborted) throw new RequestAbortedError();
      const reason = error instanceof Error ? error.message : String(error);
      throw new InvalidParameterError(
        param,
        `The image could not be fetched for model '${this.target.modelName}', whose provider needs its bytes: ${reason} Send the image as a data URL instead.`,
      );
    }
    this.fetchedBytes += image.data.length;
    if (this.fetchedBytes > maxFetchedBytesPerRequest) {
      throw new InvalidParameterError(
        param,
        `The images fetched for one request may hold ${maxFetchedBytesPerRequest} bytes in all; send fewer or smaller images, or data URLs.`,
      );
    }
    return { type: 'file', mediaType: image.mediaType, data: image.data };
  }

  private file(file: Extract<ContentPart, { type: 'file' }>['file'], param: string) {
    if (file.file_data === undefined) {
      throw new InvalidParameterError(
        `${param}.file.file_id`,
        `OpenAI file ids mean nothing to ${providerName(this.target)}; send the file's content as file_data (a data URL).`,
      );
    }
    const extension = /\.([a-z0-9]+)$/i.exec(file.filename ?? '')?.[1]?.toLowerCase();
    const inline = parseDataUrl(file.file_data, `${param}.file.file_data`) ?? {
      // Bare base64, as some clients send it: the file name says what it is.
      mediaType: (extension === undefined ? undefined : fileTypesByExtension[extension]) ?? '',
      data: file.file_data,
    };
    if (typeof inline.data === 'string' && !base64Text.test(inline.data)) {
      throw new InvalidParameterError(`${param}.file.file_data`, 'The file data is not base64.');
    }
    if (!fileAccepted(this.target, inline.mediaType)) {
      refuse(
        this.target,
        `${param}.file.file_data`,
        inline.mediaType === ''
          ? 'its media type is unknown; send a data URL (data:application/pdf;base64,…)'
          : `${providerName(this.target)} takes no '${inline.mediaType}' files (images, PDF and plain text only)`,
      );
    }
    const part: LanguageModelV3FilePart = {
      type: 'file',
      mediaType: inline.mediaType,
      data: inline.data,
    };
    return file.filename === undefined ? part : { ...part, filename: file.filename };
  }
}

function assistantContent(
  turn: ChatTurn,
  index: number,
  toolNames: Map<string, string>,
): Array<LanguageModelV3TextPart | LanguageModelV3ToolCallPart> {
  const calls = turn.toolCalls ?? [];
  const content: Array<LanguageModelV3TextPart | LanguageModelV3ToolCallPart> = [];
  // A pure tool call carries no text; providers refuse an empty text block.
  if (turn.content !== '' || calls.length === 0) content.push({ type: 'text', text: turn.content });
  calls.forEach((call, j) => {
    toolNames.set(call.id, call.function.name);
    content.push({
      type: 'tool-call',
      toolCallId: call.id,
      toolName: call.function.name,
      input: parseArguments(call, `messages[${index}].tool_calls[${j}].function.arguments`),
    });
  });
  return content;
}

/** A call's arguments as the JSON object both providers require. */
function parseArguments(call: ToolCall, param: string): unknown {
  if (call.function.arguments.trim() === '') return {};
  let input: unknown;
  try {
    input = JSON.parse(call.function.arguments);
  } catch {
    throw new InvalidParameterError(
      param,
      `The arguments of '${call.function.name}' are not JSON.`,
    );
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidParameterError(
      param,
      `The arguments of '${call.function.name}' must be a JSON object.`,
    );
  }
  return input;
}

function toolResult(
  turn: ChatTurn,
  index: number,
  toolNames: ReadonlyMap<string, string>,
): LanguageModelV3ToolResultPart {
  const id = turn.toolCallId ?? '';
  const toolName = toolNames.get(id);
  if (toolName === undefined) {
    throw new InvalidParameterError(
      `messages[${index}].tool_call_id`,
      `The tool message answers '${id}', which is not the id of a tool call of an earlier assistant message.`,
    );
  }
  return {
    type: 'tool-result',
    toolCallId: id,
    toolName,
    output: { type: 'text', value: turn.content },
  };
}

// ---------------------------------------------------------------------------------------------
// The call options.
// ---------------------------------------------------------------------------------------------

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
  // Anthropic has no JSON mode without a schema (its SDK would drop it): any JSON object, then.
  const anyObject: JSONSchema7 | undefined =
    target.provider === 'anthropic' ? { type: 'object' } : undefined;
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

function providerOptionsOf(
  params: ChatParams,
  target: TranslationTarget,
): SharedV3ProviderOptions | undefined {
  const options: Record<string, Record<string, unknown>> = {};
  const add = (more: SharedV3ProviderOptions) => {
    for (const [provider, values] of Object.entries(more)) {
      options[provider] = { ...options[provider], ...values };
    }
  };
  if (params.parallel_tool_calls === false) {
    if (target.provider === 'anthropic') add({ anthropic: { disableParallelToolUse: true } });
    if (target.provider === 'openai') add({ openai: { parallelToolCalls: false } });
  }
  if (isSet(params.reasoning_effort)) add(reasoningOptions(params.reasoning_effort, target));
  if (target.provider === 'openai') {
    if (isSet(params.user)) add({ openai: { user: params.user } });
    if (isSet(params.logit_bias)) add({ openai: { logitBias: params.logit_bias } });
  }
  return Object.keys(options).length === 0 ? undefined : (options as SharedV3ProviderOptions);
}

/** Everything of a call but its abort signal: the prompt, sampling, tools and output format. */
export async function toCallOptions(
  request: GenerationRequest,
  target: TranslationTarget,
): Promise<Omit<LanguageModelV3CallOptions, 'abortSignal'>> {
  checkParams(request, target);
  const params = request.params ?? {};
  const tools = (params.tools ?? []).map((tool): LanguageModelV3FunctionTool => ({
    type: 'function',
    name: tool.function.name,
    ...(tool.function.description === undefined ? {} : { description: tool.function.description }),
    inputSchema: (tool.function.parameters as JSONSchema7 | undefined) ?? {
      type: 'object',
      properties: {},
    },
    ...(typeof tool.function.strict === 'boolean' ? { strict: tool.function.strict } : {}),
  }));
  const toolChoice = tools.length === 0 ? undefined : toolChoiceOf(params.tool_choice);
  const stop = params.stop;
  const responseFormat = responseFormatOf(request, target);
  const providerOptions = providerOptionsOf(params, target);
  const prompt = await new PromptBuilder(target, request.signal).build(request.messages);
  return {
    prompt,
    maxOutputTokens: request.maxTokens,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(isSet(params.top_p) ? { topP: params.top_p } : {}),
    ...(stop === undefined || stop === null
      ? {}
      : { stopSequences: typeof stop === 'string' ? [stop] : [...stop] }),
    ...(isSet(params.seed) ? { seed: params.seed } : {}),
    ...(isSet(params.presence_penalty) ? { presencePenalty: params.presence_penalty } : {}),
    ...(isSet(params.frequency_penalty) ? { frequencyPenalty: params.frequency_penalty } : {}),
    ...(tools.length === 0 ? {} : { tools }),
    ...(toolChoice === undefined ? {} : { toolChoice }),
    ...(responseFormat === undefined ? {} : { responseFormat }),
    ...(providerOptions === undefined ? {} : { providerOptions }),
  };
}

// ---------------------------------------------------------------------------------------------
// Results.
// ---------------------------------------------------------------------------------------------

export function finishReasonOf(
  reason: LanguageModelV3FinishReason['unified'] | undefined,
): FinishReason {
  if (reason === 'stop' || reason === 'length') return reason;
  if (reason === 'content-filter') return 'content_filter';
  if (reason === 'tool-calls') return 'tool_calls';
  return 'other';
}

/** Calls the provider ran itself (server tools) are not the client's to answer. */
function isClientCall(part: { providerExecuted?: boolean | undefined }): boolean {
  return part.providerExecuted !== true;
}

/** The function calls of a generated answer, in OpenAI's shape (arguments as the JSON text). */
export function toolCallsOf(content: readonly LanguageModelV3Content[]): ToolCall[] | undefined {
  const calls = content
    .filter((part): part is FunctionToolCall => part.type === 'tool-call' && isClientCall(part))
    .map((part) => ({
      id: part.toolCallId,
      type: 'function' as const,
      function: { name: part.toolName, arguments: part.input },
    }));
  return calls.length === 0 ? undefined : calls;
}

/** Cache and reasoning tokens, where the provider reported any (a zero is left out). */
export function tokenDetailsOf(usage: LanguageModelV3Usage): {
  cachedTokens?: number;
  reasoningTokens?: number;
} {
  const cached = usage.inputTokens.cacheRead;
  const reasoning = usage.outputTokens.reasoning;
  return {
    ...(cached !== undefined && cached > 0 ? { cachedTokens: cached } : {}),
    ...(reasoning !== undefined && reasoning > 0 ? { reasoningTokens: reasoning } : {}),
  };
}

type ToolCallDelta = Extract<StreamPart, { type: 'tool-call' }>;

/** One delta: the first of a call names it (id, name), the later ones only append arguments. */
function delta(index: number, text: string, id?: string, name?: string): ToolCallDelta {
  return {
    type: 'tool-call',
    index,
    ...(id === undefined ? {} : { id }),
    ...(name === undefined ? {} : { name }),
    arguments: text,
  };
}

/**
 * Streamed tool calls in OpenAI's delta shape: the first delta of a call carries its index, id and
 * name (arguments ''), later ones its argument fragments; a call that arrives whole (no input
 * deltas) is one delta carrying all its arguments. Indexes count the calls from 0 in order.
 */
export class StreamedToolCalls {
  private readonly calls = new Map<string, { index: number; sent: string }>();
  /** Calls the provider runs itself: their parts are not relayed. */
  private readonly skipped = new Set<string>();

  /** The deltas a provider stream part stands for (none for parts that are not tool calls). */
  translate(part: LanguageModelV3StreamPart): ToolCallDelta[] {
    if (part.type === 'tool-input-start') return this.start(part);
    if (part.type === 'tool-input-delta') return this.append(part.id, part.delta);
    if (part.type === 'tool-call') return this.complete(part);
    return [];
  }

  private start(part: Extract<LanguageModelV3StreamPart, { type: 'tool-input-start' }>) {
    if (!isClientCall(part)) {
      this.skipped.add(part.id);
      return [];
    }
    if (this.calls.has(part.id)) return [];
    const index = this.calls.size;
    this.calls.set(part.id, { index, sent: '' });
    return [delta(index, '', part.id, part.toolName)];
  }

  private append(id: string, text: string): ToolCallDelta[] {
    if (this.skipped.has(id) || text === '') return [];
    const call = this.calls.get(id);
    if (call === undefined) {
      const index = this.calls.size;
      this.calls.set(id, { index, sent: text });
      return [delta(index, text, id)];
    }
    call.sent += text;
    return [delta(call.index, text)];
  }

  private complete(part: FunctionToolCall): ToolCallDelta[] {
    if (!isClientCall(part) || this.skipped.has(part.toolCallId)) return [];
    const call = this.calls.get(part.toolCallId);
    if (call === undefined) {
      const index = this.calls.size;
      this.calls.set(part.toolCallId, { index, sent: part.input });
      return [delta(index, part.input, part.toolCallId, part.toolName)];
    }
    // The complete input may add what the deltas did not carry (`{}` for a call without
    // arguments); it never takes back what they sent.
    if (part.input.length > call.sent.length && part.input.startsWith(call.sent)) {
      const rest = part.input.slice(call.sent.length);
      call.sent = part.input;
      return [delta(call.index, rest)];
    }
    return [];
  }

  /** The arguments streamed so far, joined (for counting tokens when the provider does not). */
  argumentsText(): string {
    return [...this.calls.values()].map((call) => call.sent).join('');
  }
}
