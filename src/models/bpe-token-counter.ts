// Token counting for remote models with a real BPE tokenizer (OpenAI's o200k_base via
// gpt-tokenizer). Exact for current OpenAI models; a close estimate for other vendors, whose
// tokenizers are not public — used only to trim history to the context window, never to bill.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { imageTokens } from './image-tokens.js';
import type { ChatParams, ChatTurn } from './spec.js';
import { countTokensGently } from './token-budget.js';

/** OpenAI's accounting: every message costs its tokens plus 3; the reply is primed with 3. */
const perMessageOverhead = 3;
const replyPriming = 3;
/** Texts longer than this are cached under their digest, not their text. */
const longestCachedKey = 256;
/** What the count cache may hold, keys and values together. */
export const tokenCacheBytes = 8 * 1024 * 1024;

type CountSlice = (slice: string) => number;

let encoder: Promise<CountSlice> | undefined;

/**
 * Merges of pieces the tokenizer remembers (its own LRU, bounded by count; our pieces are at most
 * a few kilobytes, and long runs are cut to 16 characters before they reach it).
 */
const mergeCacheEntries = 20_000;

/**
 * The o200k_base tables: loading them takes a few hundred milliseconds of one synchronous module
 * evaluation and ~20 MiB of heap. Loaded before the service listens when a remote chat model is
 * configured (`warmUp`), so that no request waits for it and no request is held while it loads;
 * otherwise on first use. Special tokens (`<|endoftext|>`) in a user's text count as the text they
 * are: the upstream receives them as text too.
 */
function loadEncoder(): Promise<CountSlice> {
  encoder ??= import('gpt-tokenizer/encoding/o200k_base').then((tokenizer) => {
    tokenizer.setMergeCacheSize(mergeCacheEntries);
    const options = { disallowedSpecial: new Set<string>(), allowedSpecial: new Set<string>() };
    return (slice: string) => tokenizer.countTokens(slice, options);
  });
  return encoder;
}

/** Loads the tokenizer now (before serving), rather than in the first request that needs it. */
export async function loadTokenizer(): Promise<void> {
  await loadEncoder();
}

function cacheKey(text: string): string {
  return text.length <= longestCachedKey
    ? text
    : `#${createHash('sha256').update(text).digest('base64')}`;
}

export class BpeTokenCounter {
  // History is re-counted on every turn of a conversation; its messages do not change. Bounded
  // in bytes (UTF-16 keys plus the entry's bookkeeping), whatever the texts' sizes.
  private readonly cache: LRUCache<string, number>;

  constructor(maxBytes = tokenCacheBytes) {
    this.cache = new LRUCache<string, number>({
      maxSize: maxBytes,
      sizeCalculation: (_value, key) => key.length * 2 + 64,
    });
  }

  /** What the cache holds now, in bytes as it counts them. */
  get cachedBytes(): number {
    return this.cache.calculatedSize;
  }

  async countText(text: string): Promise<number> {
    const key = cacheKey(text);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const countSlice = await loadEncoder();
    const count = await countTokensGently(text, countSlice);
    this.cache.set(key, count);
    return count;
  }

  /**
   * The messages' tokens: text, tool calls (name and arguments), tool results, images (as OpenAI
   * counts them, ./image-tokens.ts) and audio (its base64 text: a bound, not OpenAI's count); with
   * `params`, the tool definitions too (their JSON text).
   */
  async countMessages(messages: readonly ChatTurn[], params?: ChatParams): Promise<number> {
    let total = replyPriming;
    for (const message of messages) {
      total += perMessageOverhead + (await this.countText(message.content));
      for (const call of message.toolCalls ?? []) {
        total += perMessageOverhead + (await this.countText(call.function.name));
        total += await this.countText(call.function.arguments);
      }
      for (const part of message.parts ?? []) {
        if (part.type === 'image_url')
          total += imageTokens(part.image_url.url, part.image_url.detail);
        else if (part.type === 'input_audio') total += Math.ceil(part.input_audio.data.length / 4);
      }
    }
    if (params?.tools !== undefined && params.tools.length > 0) {
      total += await this.countText(JSON.stringify(params.tools));
    }
    return total;
  }
}
