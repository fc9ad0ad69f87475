import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { StoreBudgetGate } from './budget-gate.js';
import { BudgetPathCache, budgetPathTtlMs } from './budget-path-cache.js';
import { MemoryBudgetStore } from './memory-budget-store.js';
import type { Budget, BudgetPath } from './budgets.repository.js';

const path: BudgetPath = { accountId: 'acct_a', apiKeyId: 'key_a', endUser: null };

const keyBudget: Budget = {
  id: 'bud_a',
  accountId: 'acct_a',
  scope: 'key',
  keyId: 'key_a',
  userId: null,
  limitMicros: 1_000_000,
  softLimitMicros: null,
  period: 'month',
  createdAt: '2026-11-01T00:00:00.000Z',
  updatedAt: '2026-11-01T00:00:00.000Z',
};

/** A repository whose reads are counted, answering what `budgets` holds when each read settles. */
function repositoryOf(budgets: Budget[]) {
  const reads: BudgetPath[] = [];
  return {
    reads,
    budgets,
    onPath: async (read: BudgetPath) => {
      reads.push(read);
      await Promise.resolve();
      return [...budgets];
    },
    ledgerSpend: () => Promise.resolve(0),
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("the budgets on a call's path, kept a second", () => {
  it('reads a path once a second, and knows its budgets only once the read has answered', async () => {
    // lru-cache reads a start time of 0 as none: the clock starts later.
    let now = 10_000;
    const repository = repositoryOf([]);
    const cache = new BudgetPathCache(repository, () => now);
    const first = cache.onPath(path);
    expect(cache.known(path)).toBeUndefined();
    // The read answers 600 ms after it began (the cache reads its clock at most once a
    // millisecond, its `ttlResolution`: a tick lets it see each move).
    now += 600;
    await tick();
    await expect(first).resolves.toEqual([]);
    await expect(cache.onPath(path)).resolves.toEqual([]);
    expect(cache.known(path)).toEqual([]);
    expect(repository.reads).toHaveLength(1);
    // Kept for the rest of the second the read began, not a second from when it answered.
    now += budgetPathTtlMs - 600 + 1;
    await tick();
    expect(cache.known(path)).toBeUndefined();
    await cache.onPath(path);
    expect(repository.reads).toHaveLength(2);
  });

  it('reads again at once after a change on this instance, and keeps no failed read', async () => {
    const repository = repositoryOf([]);
    const cache = new BudgetPathCache(repository, () => 10_000);
    await cache.onPath(path);
    repository.budgets.push(keyBudget);
    cache.changed();
    expect(cache.known(path)).toBeUndefined();
    await expect(cache.onPath(path)).resolves.toEqual([keyBudget]);
    expect(cache.known(path)).toEqual([keyBudget]);

    const failing = new BudgetPathCache(
      { onPath: () => Promise.reject(new Error('down')), ledgerSpend: () => Promise.resolve(0) },
      () => 10_000,
    );
    await expect(failing.onPath(path)).rejects.toThrow('down');
    expect(failing.known(path)).toBeUndefined();
  });
});

describe('the budget gate over the kept paths', () => {
  const definition = {
    name: 'priced',
    provider: 'openai-compatible',
    pricing: {
      inputPerMtok: 1_000_000,
      outputPerMtok: 1_000_000,
      cachedInputPerMtok: null,
      cacheWritePerMtok: null,
      reasoningPerMtok: null,
      perAudioMinute: null,
      perMchar: null,
      asOf: null,
    },
  } as never;
  const attribution = { ...path, route: 'POST /v1/chat/completions' };

  function gateOver(budgets: Budget[]) {
    const repository = repositoryOf(budgets);
    const store = new MemoryBudgetStore();
    const reserved: string[] = [];
    const reserve = store.reserve.bind(store);
    store.reserve = (lines, reservation, nowMs) => {
      reserved.push(reservation.id);
      return reserve(lines, reservation, nowMs);
    };
    let worstCases = 0;
    const gate = new StoreBudgetGate({
      budgets: new BudgetPathCache(repository, () => 10_000),
      store,
      failOpen: false,
      logger: pino({ level: 'silent' }),
      now: () => Date.parse('2026-11-30T12:00:00.000Z'),
    });
    const call = () =>
      gate.reserve({
        attribution,
        definition,
        worstCase: () => {
          worstCases += 1;
          return Promise.resolve({
            inputTokens: 10,
            outputTokens: 10,
            cachedInputTokens: 0,
            cacheWriteTokens: 0,
            reasoningTokens: 0,
            audioMs: 0,
            characters: 0,
          });
        },
      });
    return { call, repository, reserved, worstCases: () => worstCases };
  }

  it('reserves nothing, and reads nothing more, for a path known to have no budget', async () => {
    const { call, repository, reserved, worstCases } = gateOver([]);
    expect(await call()).toBeNull();
    expect(await call()).toBeNull();
    expect(await call()).toBeNull();
    expect(repository.reads).toHaveLength(1);
    expect(reserved).toHaveLength(0);
    expect(worstCases()).toBe(0);
  });

  it('still reserves every call on a path that has a budget', async () => {
    const { call, repository, reserved } = gateOver([keyBudget]);
    const first = await call();
    const second = await call();
    expect(first).not.toBeNull();
    expect(second).not.toBeNull();
    expect(reserved).toHaveLength(2);
    expect(repository.reads).toHaveLength(1);
  });
});
