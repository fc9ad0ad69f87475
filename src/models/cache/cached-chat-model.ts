// The exact response cache around a chat model: a request that asks the same thing as one answered
// before — the same model, messages (tool calls and results included), tools, tool_choice,
// response_format, seed, sampling parameters and token limit, through the same dialect, for the same
// account — gets the kept answer without an upstream call. The key is a hash of a canonical form
// (object keys sorted), so key order does not matter, and it holds the account: an answer never
// crosses accounts. A streamed request is replayed as the parts it was streamed in (or the kept
// answer in word-sized parts). A hit is one ledger record with `cache_hit` and cost 0.
import { createHash } from 'node:crypto';
import type { CacheConfig } from '../../config/cache-config.js';
import type { ModelDefinition } from '../../config/config.js';
import { meteredUsageOf, noUsage, type UsageMeter } from '../metering.js';
import type {
  ChatModel,
  GenerationRequest,
  GenerationResult,
  StreamPart,
  ToolCall,
} from '../spec.js';
import type { CachedAnswer, ResponseStore } from './response-cache.js';
import { canonicalJson } from '../../validation/canonical-json.js';

/** What a request's answer does not depend on: who the end user is, the client's metadata. */
const notShaping = new Set(['user', 'metadata', 'store', 'stream_options', 'service_tier']);

/** The cache key of a request to `model`, or null when the request must not be cached. */
export function cacheKeyOf(
  model: string,
  request: GenerationRequest,
  settings: { sampled: boolean },
): string | null {
  const params = request.params ?? {};
  // Log probabilities describe one sampling: a kept answer would give the same ones again.
  if (params.logprobs === true) return null;
  const temperature = request.temperature ?? 1;
  if (temperature > 0 && params.seed === undefined && !settings.sampled) return null;
  const shaping = Object.fromEntries(
    Object.entries(params).filter(([field]) => !notShaping.has(field)),
  );
  const form = canonicalJson({
    v: 1,
    account: request.attribution?.accountId ?? request.fairnessKey,
    dialect: request.attribution?.route ?? 'internal',
    model,
    messages: request.messages,
    params: shaping,
    temperature,
    max_tokens: request.maxTokens,
    schema: request.responseSchema ?? null,
  });
  return createHash('sha256').update(form).digest('base64url');
}

/** The answer a stream's parts make up. */
function resultOf(parts: readonly StreamPart[]): GenerationResult | null {
  let text = '';
  let refusal: string | undefined;
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  for (const part of parts) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'refusal') refusal = (refusal ?? '') + part.text;
    else if (part.type === 'tool-call') {
      const call = (calls[part.index] ??= { id: '', name: '', arguments: '' });
      call.id = part.id ?? call.id;
      call.name = part.name ?? call.name;
      call.arguments += part.arguments;
    } else if (part.type === 'finish') {
      const toolCalls: ToolCall[] = calls
        .filter((call) => call !== undefined)
        .map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        }));
      return {
        text,
        finishReason: part.finishReason,
        usage: part.usage,
        ...(toolCalls.length === 0 ? {} : { toolCalls }),
        ...(refusal === undefined ? {} : { refusal }),
        ...(part.systemFingerprint === undefined
          ? {}
          : { systemFingerprint: part.systemFingerprint }),
      };
    }
  }
  return null;
}

/** A kept answer as stream parts: as it was streamed, else its text a word at a time. */
function partsOf(answer: CachedAnswer): readonly StreamPart[] {
  if (answer.parts !== undefined) return answer.parts;
  const { result } = answer;
  const parts: StreamPart[] = (result.text.match(/\s*\S+\s*/g) ?? []).map((text) => ({
    type: 'text',
    text,
  }));
  if (result.refusal !== undefined) parts.push({ type: 'refusal', text: result.refusal });
  (result.toolCalls ?? []).forEach((call, index) => {
    parts.push({
      type: 'tool-call',
      index,
      id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
    });
  });
  parts.push({
    type: 'finish',
    finishReason: result.finishReason,
    usage: result.usage,
    ...(result.systemFingerprint === undefined
      ? {}
      : { systemFingerprint: result.systemFingerprint }),
  });
  return parts;
}

/** The settings of one model: the global `cache` with the entry's own over it. */
export function cacheSettingsOf(global: CacheConfig, definition: ModelDefinition) {
  const own = definition.cache ?? {};
  return {
    enabled: own.enabled ?? global.enabled,
    ttlMs: (own.ttl_s ?? global.ttlSeconds) * 1000,
    sampled: own.sampled ?? global.sampled,
  };
}

/** A hit: told to the client (X-Cache) and recorded at cost 0. */
async function served(
  meter: UsageMeter,
  definition: ModelDefinition,
  request: GenerationRequest,
  answer: CachedAnswer,
): Promise<void> {
  request.attribution?.cached?.(true);
  const ticket = await meter.start({
    definition,
    attribution: request.attribution ?? {
      accountId: request.fairnessKey,
      apiKeyId: null,
      endUser: null,
      route: 'internal',
    },
    worstCase: () => Promise.resolve(noUsage),
  });
  ticket.end({
    status: 'ok',
    usage: meteredUsageOf(answer.result.usage),
    latencyMs: 0,
    cacheHit: true,
  });
}

export function cachedChatModel(
  model: ChatModel,
  definition: ModelDefinition,
  settings: ReturnType<typeof cacheSettingsOf>,
  store: ResponseStore,
  meter: UsageMeter,
  warn: (error: unknown) => void,
): ChatModel {
  /** The request's key; null (told as a miss) when it bypasses the cache or must not be kept. */
  const keyOf = (request: GenerationRequest) => {
    const key = request.cache === 'bypass' ? null : cacheKeyOf(definition.name, request, settings);
    if (key === null) request.attribution?.cached?.(false);
    return key;
  };
  const lookUp = async (key: string): Promise<CachedAnswer | null> =>
    store.get(key).catch((error: unknown) => {
      warn(error);
      return null;
    });
  const keep = (key: string, answer: CachedAnswer) => {
    store.set(key, answer, settings.ttlMs).catch(warn);
  };
  return {
    async generate(request) {
      const key = keyOf(request);
      if (key === null) return model.generate(request);
      const kept = await lookUp(key);
      if (kept !== null) {
        await served(meter, definition, request, kept);
        return kept.result;
      }
      request.attribution?.cached?.(false);
      const result = await model.generate(request);
      keep(key, { result });
      return result;
    },
    async *stream(request) {
      const key = keyOf(request);
      if (key === null) {
        yield* model.stream(request);
        return;
      }
      const kept = await lookUp(key);
      if (kept !== null) {
        await served(meter, definition, request, kept);
        yield* partsOf(kept);
        return;
      }
      request.attribution?.cached?.(false);
      const parts: StreamPart[] = [];
      // A cached answer is kept as parts (replayed in any dialect), so none is relayed as it came.
      for await (const part of model.stream({ ...request, relay: undefined })) {
        parts.push(part);
        // Kept when the finish arrives: a consumer may stop asking once it has it.
        if (part.type === 'finish') {
          const result = resultOf(parts);
          if (result !== null) keep(key, { result, parts });
        }
        yield part;
      }
    },
    countTokens: (messages) => model.countTokens(messages),
  };
}
