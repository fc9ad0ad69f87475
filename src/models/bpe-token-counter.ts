// Token counting for remote models with a real BPE tokenizer (OpenAI's o200k_base via js-tiktoken).
// Exact for current OpenAI models; a close estimate for other vendors, whose tokenizers are not
// public — used only to trim history to the context window, never to bill.
import { LRUCache } from 'lru-cache';
import type { Tiktoken } from 'js-tiktoken/lite';
import type { ChatTurn } from './spec.js';

/** OpenAI's accounting: every message costs its tokens plus 3; the reply is primed with 3. */
const perMessageOverhead = 3;
const replyPriming = 3;

let encoder: Promise<Tiktoken> | undefined;

/** The ranks file is several megabytes: loaded on first use, not at start-up. */
function loadEncoder(): Promise<Tiktoken> {
  encoder ??= Promise.all([
    import('js-tiktoken/lite'),
    import('js-tiktoken/ranks/o200k_base'),
  ]).then(([{ Tiktoken: TiktokenClass }, ranks]) => new TiktokenClass(ranks.default));
  return encoder;
}

export class BpeTokenCounter {
  // History is re-counted on every turn of a conversation; its messages do not change.
  private readonly cache = new LRUCache<string, number>({ max: 20_000 });

  async countText(text: string): Promise<number> {
    const cached = this.cache.get(text);
    if (cached !== undefined) return cached;
    const count = (await loadEncoder()).encode(text).length;
    this.cache.set(text, count);
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
