// Reciprocal rank fusion: merges ranked lists (keyword, vector) into one ranking with 0..1 scores.

export interface FusedItem {
  readonly id: string;
  /** The fused score divided by the best one possible (see `reciprocalRankFusion`), in 0..1. */
  readonly score: number;
  /** 1-based rank in each input list, in the order given; null where the item was absent. */
  readonly ranks: readonly (number | null)[];
}

export interface FusionOptions {
  /** Damps the weight of the first places; 60 is the value of Cormack et al. (2009). */
  readonly k?: number;
  /**
   * The most lists any one item can appear in, which sets the best possible score; defaults to
   * the number of lists. (Vector lists of different embedding models hold different chunks, so a
   * chunk is in the keyword list and at most one of them.)
   */
  readonly listsPerItem?: number;
}

/**
 * Each item scores Σ 1 / (k + rank) over the lists it appears in (ranks from 1). The score is then
 * divided by `listsPerItem / (k + 1)`, the score of an item ranked first everywhere it could be,
 * so 1.0 means "first in every ranking" and the scale does not depend on list lengths. Equal
 * scores are ordered by their ranks, list by list (the first list decides first), then by id, so
 * the result is the same for the same input.
 */
export function reciprocalRankFusion(
  lists: readonly (readonly string[])[],
  options: FusionOptions = {},
): FusedItem[] {
  const k = options.k ?? 60;
  const listsPerItem = Math.max(1, options.listsPerItem ?? lists.length);
  const best = listsPerItem / (k + 1);
  const items = new Map<string, { raw: number; ranks: (number | null)[] }>();
  lists.forEach((list, listIndex) => {
    const seen = new Set<string>();
    list.forEach((id, position) => {
      // A duplicate within one list keeps its best (first) rank only.
      if (seen.has(id)) return;
      seen.add(id);
      let item = items.get(id);
      if (item === undefined) {
        item = { raw: 0, ranks: lists.map(() => null) };
        items.set(id, item);
      }
      item.raw += 1 / (k + position + 1);
      item.ranks[listIndex] = position + 1;
    });
  });
  const compareRanks = (a: readonly (number | null)[], b: readonly (number | null)[]) => {
    for (let index = 0; index < a.length; index += 1) {
      const difference = (a[index] ?? Infinity) - (b[index] ?? Infinity);
      if (difference !== 0 && !Number.isNaN(difference)) return difference;
    }
    return 0;
  };
  return [...items.entries()]
    .sort(
      ([idA, a], [idB, b]) =>
        b.raw - a.raw || compareRanks(a.ranks, b.ranks) || (idA < idB ? -1 : idA > idB ? 1 : 0),
    )
    .map(([id, item]) => ({ id, score: Math.min(1, item.raw / best), ranks: item.ranks }));
}
