// Token counting for remote models with a real BPE tokenizer (OpenAI's o200k_base via js-tiktoken).
// Exact for current OpenAI models; a close estimate for other vendors, whose tokenizers are not
// public — used only to trim history to the context window, never to bill.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Tiktoken } from 'js-tiktoken/lite';
import type { ChatTurn } from './spec.js';
import { countTokensGently } from './token-budget.js';

/** OpenAI's accounting: every message costs its tokens plus 3; the reply is primed with 3. */
const perMessageOverhead = 3;
const replyPriming = 3;
/** Texts longer than this are cached under their digest, not their text. */
const longestCachedKey = 256;
/** What the count cache may hold, keys and values together. */
export const tokenCacheBytes = 8 * 1024 * 1024;

let encoder: Promise<Tiktoken> | undefined;

/** The ranks file is several megabytes: loaded on first use, not at start-up. */
function loadEncoder(): Promise<Tiktoken> {
  encoder ??= Promise.all([
    import('js-tiktoken/lite'),
    import('js-tiktoken/ranks/o200k_base'),
  ]).then(([{ Tiktoken: TiktokenClass }, ranks]) => new TiktokenClass(ranks.default));
  return encoder;
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
    const tokenizer = await loadEncoder();
    const count = await countTokensGently(text, (slice) => tokenizer.encode(slice).length);
    this.cache.set(key, count);
    return count;
  }

  async countMessages(messages: readonly ChatTurn[]): Promise<number> {
    let total = replyPriming;
    for (const message of messages) {
      total += perMessageOverhead + (await this.countText(message.content));
    }
    return total;
  }
}
