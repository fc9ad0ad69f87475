import { describe, expect, it } from 'vitest';
import { BpeTokenCounter } from './bpe-token-counter.js';

describe('BpeTokenCounter', () => {
  it("counts OpenAI's o200k_base tokens", async () => {
    const counter = new BpeTokenCounter();
    expect(await counter.countText('hello world')).toBe(2);
  });

  it('counts special tokens in user text as the text they are, never throwing', async () => {
    const counter = new BpeTokenCounter();
    const plain = await counter.countText('hi endoftext there');
    const special = await counter.countText('hi <|endoftext|> there');
    // Read as text: several tokens for the marker, not the single special token.
    expect(special).toBeGreaterThan(plain);
    for (const marker of ['<|im_start|>', '<|endofprompt|>', '<|fim_prefix|>']) {
      await expect(counter.countText(`a ${marker} b`)).resolves.toBeGreaterThan(2);
    }
  });

  it('counts a long run of one character piece by piece, each distinct piece once', async () => {
    const counter = new BpeTokenCounter();
    const counted = await counter.countText('a'.repeat(200_000));
    // 16-character pieces of 'a' are two tokens each.
    expect(counted).toBe((200_000 / 16) * 2);
  });
});
