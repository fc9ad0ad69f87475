// The budgets on a call's path (its account's, its key's, its end user's), read for every metered
// call: kept a second per path, so that a busy key costs one query a second rather than one a
// call, and a path with no budget (most calls) costs nothing more. A budget created, changed or
// deleted on this instance is seen at once (the cache is emptied); on another instance within a
// second. Bounded in entries; the least recently read path goes first.
import { LRUCache } from 'lru-cache';
import type { Budget, BudgetPath, BudgetsRepository } from './budgets.repository.js';

/** How long a path's budgets are kept. */
export const budgetPathTtlMs = 1000;
const maxPaths = 10_000;

type Repository = Pick<BudgetsRepository, 'onPath' | 'ledgerSpend'>;

export class BudgetPathCache implements Repository {
  /** Counted through `maxSize`, not `max`, which would allocate its lists for every entry at once. */
  private readonly paths = new LRUCache<string, Promise<Budget[]>>({
    maxSize: maxPaths,
    sizeCalculation: () => 1,
    ttl: budgetPathTtlMs,
  });

  constructor(private readonly repository: Repository) {}

  onPath(path: BudgetPath): Promise<Budget[]> {
    const key = `${path.accountId}\u0000${path.apiKeyId ?? ''}\u0000${path.endUser ?? ''}`;
    const kept = this.paths.get(key);
    if (kept !== undefined) return kept;
    const budgets = this.repository.onPath(path);
    // A failed read is not kept: the next call asks again (and the gate decides what a failure means).
    budgets.catch(() => {
      if (this.paths.get(key) === budgets) this.paths.delete(key);
    });
    this.paths.set(key, budgets);
    return budgets;
  }

  ledgerSpend(budget: Budget, from: string): Promise<number> {
    return this.repository.ledgerSpend(budget, from);
  }

  /** A budget of this instance changed: every path is read again. */
  changed(): void {
    this.paths.clear();
  }
}
