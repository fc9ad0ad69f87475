// Unit tests of reciprocal rank fusion: scores, normalisation to 0..1, deterministic ties.
import { describe, expect, it } from 'vitest';
import { reciprocalRankFusion } from './rank-fusion.js';

describe('reciprocalRankFusion', () => {
  it('ranks an item found by both lists above items found by one', () => {
    const fused = reciprocalRankFusion([
      ['a', 'b', 'c'],
      ['c', 'd', 'a'],
    ]);
    expect(fused.map((item) => item.id)).toEqual(['a', 'c', 'b', 'd']);
    expect(fused[0]!.ranks).toEqual([1, 3]);
    expect(fused[2]!.ranks).toEqual([2, null]);
  });

  it('scores 1.0 for first place in every list, and by 1/(k + rank) over the best otherwise', () => {
    const fused = reciprocalRankFusion([['a', 'b'], ['a']], { k: 60 });
    expect(fused[0]).toEqual({ id: 'a', score: 1, ranks: [1, 1] });
    expect(fused[1]!.score).toBeCloseTo(1 / 62 / (2 / 61), 12);
  });

  it('normalises by listsPerItem when an item can appear in fewer lists than there are', () => {
    // Two vector lists of different models: each item is in the keyword list and one of them.
    const fused = reciprocalRankFusion([['a', 'b'], ['a'], ['b']], { listsPerItem: 2 });
    expect(fused.map((item) => item.id)).toEqual(['a', 'b']);
    expect(fused[0]!.score).toBe(1);
    expect(fused[1]!.score).toBeCloseTo((1 / 62 + 1 / 61) / (2 / 61), 12);
  });

  it('gives a single list scores (k + 1) / (k + rank)', () => {
    const fused = reciprocalRankFusion([['x', 'y', 'z']]);
    [1, 61 / 62, 61 / 63].forEach((score, index) =>
      expect(fused[index]!.score).toBeCloseTo(score, 12),
    );
  });

  it('breaks equal scores by rank, list by list, the first list first', () => {
    // p: ranks 1 and 3; q: ranks 3 and 1 — equal sums.
    const fused = reciprocalRankFusion([
      ['p', 'x', 'q'],
      ['q', 'y', 'p'],
    ]);
    expect(fused[0]!.score).toBe(fused[1]!.score);
    expect(fused.slice(0, 2).map((item) => item.id)).toEqual(['p', 'q']);
    const keywordFirst = reciprocalRankFusion([['m'], ['n']]);
    expect(keywordFirst.map((item) => item.id)).toEqual(['m', 'n']);
    const reversed = reciprocalRankFusion([['n'], ['m']]);
    expect(reversed.map((item) => item.id)).toEqual(['n', 'm']);
  });

  it('counts an id once per list and answers nothing for no lists', () => {
    expect(reciprocalRankFusion([['a', 'a', 'b']]).map((item) => item.ranks)).toEqual([[1], [3]]);
    expect(reciprocalRankFusion([])).toEqual([]);
  });
});
