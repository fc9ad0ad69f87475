// The prompt of a call to an AI SDK provider (Anthropic, Google) from OpenAI's Chat Completions
// turns (the platform's message model, ../spec.ts): system turns first, content parts (text,
// images, audio, files) checked against what the provider takes (./provider-parameters.ts), image
// URLs it cannot fetch itself fetched here, and tool calls and their results paired by id.
import type {
  LanguageModelV3FilePart,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3TextPart,
  LanguageModelV3ToolCallPart,
  LanguageModelV3ToolResultPart,
} from '@ai-sdk/provider';
import { InvalidParameterError } from '../../errors/app-error.js';
import { RequestAbortedError, type ChatTurn, type ContentPart, type ToolCall } from '../spec.js';
import {
  cannotHonour,
  profileOf,
  type FetchedImage,
  type TranslationTarget,
} from './ai-sdk-target.js';

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
export class PromptBuilder {
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
        const profile = profileOf(this.target);
        if (!profile.audioInput)
          throw cannotHonour(this.target, param, `${profile.name} models take no audio input`);
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
      throw cannotHonour(
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
        `OpenAI file ids mean nothing to ${profileOf(this.target).name}; send the file's content as file_data (a data URL).`,
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
    const { name, files } = profileOf(this.target);
    if (!files.accepts(inline.mediaType)) {
      throw cannotHonour(
        this.target,
        `${param}.file.file_data`,
        inline.mediaType === ''
          ? 'its media type is unknown; send a data URL (data:application/pdf;base64,…)'
          : `${name} takes no '${inline.mediaType}' files (${files.described})`,
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
