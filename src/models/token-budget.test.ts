import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { countingSlices, countTokensGently, exactCountLimit } from './token-budget.js';

const count = (text: string) => countTokens(text);

describe('countTokensGently', () => {
  it('counts ordinary text exactly, short or long', async () => {
    const short = 'Hello there, how are you today?';
    expect(await countTokensGently(short, count)).toBe(count(short));
    const long = 'The quick brown fox jumps over the lazy dog. '.repeat(400);
    expect(long.length).toBeGreaterThan(4096);
    expect(await countTokensGently(long, count)).toBe(count(long));
  });

  it('slices every input into pieces that put it back together', () => {
    const text = `start ${'a'.repeat(100)} middle ${' '.repeat(70)}😀${'😀'.repeat(40)} end`;
    expect([...countingSlices(text)].join('')).toBe(text);
    for (const slice of countingSlices(text)) {
      expect(slice.length).toBeLessThanOrEqual(4096);
      // A cut never splits a surrogate pair.
      expect(slice.isWellFormed()).toBe(true);
    }
  });

  it('counts a long run of one character in linear time, close to the real count', async () => {
    const run = 'a'.repeat(4000);
    const counted = await countTokensGently(run, count);
    // The tokenizer needs over a second for this run; counting it in 16-character pieces gives
    // a slightly higher count, which only makes history trimming a little more careful.
    expect(counted).toBeGreaterThanOrEqual(count('a'.repeat(1000)) * 4);
    expect(counted).toBeLessThanOrEqual(run.length / 4);
  });

  it('extrapolates past the exact-count limit instead of reading a megabyte', async () => {
    const text = 'word '.repeat(Math.ceil((1024 * 1024) / 5));
    let examined = 0;
    const counted = await countTokensGently(text, (slice) => {
      examined += slice.length;
      return count(slice);
    });
    expect(examined).toBeLessThanOrEqual(exactCountLimit);
    const exact = count(text);
    expect(Math.abs(counted - exact) / exact).toBeLessThan(0.01);
  });

  it('lets other work run while it counts', async () => {
    // Each slice costs longer than a turn's budget (the counter waits for the clock to move), so
    // the count must give the loop a turn between slices however fast the machine is. A run of
    // one character would not do: its pieces are counted once, often within a single turn.
    const slowCount = (slice: string) => {
      const started = performance.now();
      while (performance.now() - started < 3);
      return count(slice);
    };
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(400);
    let turns = 0;
    const timer = setInterval(() => (turns += 1), 1);
    expect(await countTokensGently(text, slowCount)).toBe(count(text));
    clearInterval(timer);
    expect(turns).toBeGreaterThan(0);
  });
});
