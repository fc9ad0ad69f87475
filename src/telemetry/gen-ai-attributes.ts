// The attributes of GenAI spans and metrics (OpenTelemetry's GenAI semantic conventions) from a
// model's definition, a request, and the usage it reported; and the `error.type` of a failure.
import type * as Api from '@opentelemetry/api';
import type {
  LocalModelDefinition,
  ModelDefinition,
  RemoteModelDefinition,
} from '../config/config.js';
import {
  RequestAbortedError,
  UpstreamError,
  type GenerationRequest,
  type TokenUsage,
} from '../models/spec.js';

export type Attributes = Record<string, Api.AttributeValue>;
export type Operation = 'chat' | 'embeddings';

/** `gen_ai.provider.name` of each configured provider (the conventions' well-known values). */
const providerNames: Readonly<Record<string, string>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  google: 'gcp.gemini',
  'openai-compatible': 'openai',
  local: 'llama.cpp',
};

/** Where a provider answers when its model names no base URL. */
const defaultHosts: Readonly<Record<string, string>> = {
  openai: 'https://api.openai.com',
  anthropic: 'https://api.anthropic.com',
  google: 'https://generativelanguage.googleapis.com',
};

/** Longest message text put on a span when content capture is on. */
const maxCapturedChars = 16_384;

export function serverOf(url: URL): Attributes {
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { 'server.address': url.hostname, 'server.port': port };
}

function upstreamUrl(definition: ModelDefinition): URL | null {
  if (definition.provider === 'local') return null;
  const remote = definition as RemoteModelDefinition;
  const base = remote.baseUrl ?? defaultHosts[remote.provider];
  if (base === undefined) return null;
  try {
    return new URL(base);
  } catch {
    return null;
  }
}

/** What every span and metric of one model's calls carries. */
export function modelAttributes(operation: Operation, definition: ModelDefinition): Attributes {
  const url = upstreamUrl(definition);
  return {
    'gen_ai.operation.name': operation,
    'gen_ai.provider.name': providerNames[definition.provider] ?? definition.provider,
    'gen_ai.request.model': (definition as RemoteModelDefinition | LocalModelDefinition).model,
    'platform.model': definition.name,
    ...(url === null ? {} : serverOf(url)),
  };
}

export function requestAttributes(
  request: Pick<GenerationRequest, 'maxTokens' | 'temperature' | 'params' | 'attribution'>,
  stream: boolean,
): Attributes {
  const attributes: Attributes = {
    'gen_ai.request.max_tokens': request.maxTokens,
    'gen_ai.request.stream': stream,
  };
  const params = request.params;
  const temperature = request.temperature;
  if (temperature !== undefined) attributes['gen_ai.request.temperature'] = temperature;
  if (params?.top_p !== undefined) attributes['gen_ai.request.top_p'] = params.top_p;
  if (params?.seed !== undefined) attributes['gen_ai.request.seed'] = params.seed;
  if (params?.presence_penalty !== undefined) {
    attributes['gen_ai.request.presence_penalty'] = params.presence_penalty;
  }
  if (params?.frequency_penalty !== undefined) {
    attributes['gen_ai.request.frequency_penalty'] = params.frequency_penalty;
  }
  if (params?.stop !== undefined) {
    attributes['gen_ai.request.stop_sequences'] =
      typeof params.stop === 'string' ? [params.stop] : [...params.stop];
  }
  const attribution = request.attribution;
  if (attribution !== undefined) {
    attributes['platform.account.id'] = attribution.accountId;
    if (attribution.apiKeyId !== null) attributes['platform.api_key.id'] = attribution.apiKeyId;
    if (attribution.endUser !== null) attributes['user.id'] = attribution.endUser;
    if (attribution.executionId) attributes['platform.execution.id'] = attribution.executionId;
  }
  return attributes;
}

export function usageAttributes(usage: TokenUsage): Attributes {
  const attributes: Attributes = {
    'gen_ai.usage.input_tokens': usage.promptTokens,
    'gen_ai.usage.output_tokens': usage.completionTokens,
  };
  if (usage.cachedTokens !== undefined) {
    attributes['gen_ai.usage.cache_read.input_tokens'] = usage.cachedTokens;
  }
  if (usage.cacheWriteTokens !== undefined) {
    attributes['gen_ai.usage.cache_creation.input_tokens'] = usage.cacheWriteTokens;
  }
  if (usage.reasoningTokens !== undefined) {
    attributes['gen_ai.usage.reasoning.output_tokens'] = usage.reasoningTokens;
  }
  return attributes;
}

/** `error.type`: the upstream's status, a connection error's code, or the platform's error code. */
export function errorTypeOf(error: unknown): string {
  if (error instanceof RequestAbortedError) return 'cancelled';
  if (error instanceof UpstreamError) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : '_OTHER';
}

const cut = (text: string) =>
  text.length > maxCapturedChars ? `${text.slice(0, maxCapturedChars)}…` : text;

export function inputMessages(messages: GenerationRequest['messages']): string {
  return JSON.stringify(
    messages.map((turn) => ({
      role: turn.role,
      parts: [{ type: 'text', content: cut(turn.content) }],
    })),
  );
}

export function outputMessages(text: string, finishReason: string): string {
  return JSON.stringify([
    {
      role: 'assistant',
      parts: [{ type: 'text', content: cut(text) }],
      finish_reason: finishReason,
    },
  ]);
}
