import { describe, expect, it } from 'vitest';
import { base62Alphabet, newId, newTimeOrderedId, randomBase62 } from './ids.js';

describe('ids', () => {
  it('are prefixed, 22 base62 characters, and never repeat', () => {
    const ids = Array.from({ length: 20_000 }, () => newId('conv'));
    for (const id of ids.slice(0, 100)) expect(id).toMatch(/^conv_[0-9A-Za-z]{22}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('draw every base62 character about equally often, across pool refills', () => {
    const counts = new Map<string, number>();
    const text = randomBase62(62 * 2000);
    for (const character of text) counts.set(character, (counts.get(character) ?? 0) + 1);
    expect(counts.size).toBe(base62Alphabet.length);
    for (const count of counts.values()) {
      // 2000 expected per character; five standard deviations either side.
      expect(count).toBeGreaterThan(2000 - 5 * 44);
      expect(count).toBeLessThan(2000 + 5 * 44);
    }
  });

  it('made in time order sort in time order, in the same form, and never repeat', () => {
    const times = [0, 61, 62, 3_843, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000];
    const ordered = times.map((time) => newTimeOrderedId('use', time));
    for (const id of ordered) expect(id).toMatch(/^use_[0-9A-Za-z]{22}$/);
    expect([...ordered].sort()).toEqual(ordered);
    const sameMillisecond = Array.from({ length: 20_000 }, () => newTimeOrderedId('use', 5));
    expect(new Set(sameMillisecond).size).toBe(sameMillisecond.length);
  });
});
