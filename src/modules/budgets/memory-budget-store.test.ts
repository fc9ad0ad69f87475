import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { WindowLine } from './budget-store.js';
import { MemoryBudgetStore } from './memory-budget-store.js';

/** A budget's line whose seed (the ledger's spend) answers after the calls have all started. */
function lineOf(limitMicros: number, seed: number, window = 'm2026-11', softLimitMicros = null) {
  let seeds = 0;
  const line: WindowLine = {
    budgetId: 'bud_a',
    accountId: 'acct_a',
    window,
    limitMicros,
    softLimitMicros,
    resetsAtMs: null,
    seed: async () => {
      seeds += 1;
      await new Promise((resolve) => setImmediate(resolve));
      return seed;
    },
  };
  return { line, seeds: () => seeds };
}

const reservation = (id: string, amountMicros: number, expiresAtMs = 10_000) => ({
  id,
  amountMicros,
  expiresAtMs,
});

describe('the budgets’ store of one instance', () => {
  it('never reserves past the limit however many calls reserve at once, and reads the seed once', async () => {
    const { line, seeds } = lineOf(1_000, 100);
    const store = new MemoryBudgetStore();
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        store.reserve([line], reservation(`r${index}`, 40), 0),
      ),
    );
    // (1,000 − 100) / 40: 22 fit, the other 28 are refused with the spend as it was.
    expect(outcomes.filter((outcome) => outcome.kind === 'reserved')).toHaveLength(22);
    expect(outcomes.filter((outcome) => outcome.kind === 'refused')).toHaveLength(28);
    expect(seeds()).toBe(1);
    expect(await store.state(line, 0)).toEqual({ spentMicros: 100, reservedMicros: 880 });
  });

  it('settles a call to its cost and releases the rest; a reservation past its deadline lapses', async () => {
    const { line } = lineOf(1_000, 0);
    const store = new MemoryBudgetStore();
    await store.reserve([line], reservation('r1', 600, 5_000), 0);
    await store.reserve([line], reservation('r2', 300, 50), 0);
    expect((await store.reserve([line], reservation('r3', 200), 10)).kind).toBe('refused');
    await store.settle([line], 'r1', 150);
    expect(await store.state(line, 10)).toEqual({ spentMicros: 150, reservedMicros: 300 });
    // r2's instance never settled it: past its deadline it no longer holds anything.
    expect(await store.state(line, 60)).toEqual({ spentMicros: 150, reservedMicros: 0 });
    expect((await store.reserve([line], reservation('r4', 850), 60)).kind).toBe('reserved');
  });

  it('starts a new window from its own seed, and counts a call of the old window in neither', async () => {
    const november = lineOf(1_000, 900);
    const store = new MemoryBudgetStore();
    await store.reserve([november.line], reservation('r1', 50), 0);
    const december = lineOf(1_000, 0, 'm2026-12');
    expect(await store.state(december.line, 0)).toEqual({ spentMicros: 0, reservedMicros: 0 });
    await store.settle([november.line], 'r1', 50);
    expect(await store.state(december.line, 0)).toEqual({ spentMicros: 0, reservedMicros: 0 });
  });

  it('refuses on all of a call’s budgets or reserves on none', async () => {
    const roomy = { ...lineOf(10_000, 0).line, budgetId: 'bud_roomy' };
    const tight = { ...lineOf(100, 80).line, budgetId: 'bud_tight' };
    const store = new MemoryBudgetStore();
    const outcome = await store.reserve([roomy, tight], reservation('r1', 50), 0);
    expect(outcome).toEqual({ kind: 'refused', line: 1, spentMicros: 80 });
    expect(await store.state(roomy, 0)).toEqual({ spentMicros: 0, reservedMicros: 0 });
  });

  it('allocates nothing up front for the windows it may keep', () => {
    // lru-cache given `max` allocates its lists for every entry at construction: 100,000 windows
    // were 1.2 MB of typed arrays (and 1.6 MB of arrays) per store, every store still empty.
    // Collected first, so that no earlier test's garbage freed meanwhile hides what is allocated.
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
    const before = process.memoryUsage().arrayBuffers;
    const stores = [new MemoryBudgetStore(), new MemoryBudgetStore()];
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024);
    expect(stores).toHaveLength(2);
  });
});
