// The budgets on a call's path (its account's, its key's, its end user's), read for every metered
// call: kept a second per path, so that a busy key costs one query a second rather than one a
// call, and a path with no budget (most calls) costs nothing more. A budget created, changed or
// deleted on this instance is seen at once (the cache is emptied); on another instance within a
// second. Bounded in entries; the least recently read path goes first. A path's budgets, once
// read, are kept as they are (not as a promise), so that the gate can see at once that a call has
// none (`known`) without a promise and an await per call.
import { LRUCache } from 'lru-cache';
import type { Budget, BudgetPath, BudgetsRepository } from './budgets.repository.js';

/** How long a path's budgets are kept. */
export const budgetPathTtlMs = 1000;
const maxPaths = 10_000;

type Repository = Pick<BudgetsRepository, 'onPath' | 'ledgerSpend'>;

const keyOf = (path: BudgetPath) =>
  `${path.accountId}\u0000${path.apiKeyId ?? ''}\u0000${path.endUser ?? ''}`;

export class BudgetPathCache implements Repository {
  /** Counted through `maxSize`, not `max`, which would allocate its lists for every entry at once. */
  private readonly paths: LRUCache<string, Budget[] | Promise<Budget[]>>;

  constructor(
    private readonly repository: Repository,
    /** The clock the second is measured on, in ms (tests); `performance.now()` by default. */
    now?: () => number,
  ) {
    this.paths = new LRUCache({
      maxSize: maxPaths,
      sizeCalculation: () => 1,
      ttl: budgetPathTtlMs,
      // The clock read at each lookup: lru-cache otherwise keeps a reading for a millisecond
      // and starts a 1 ms timer to forget it, a timer for nearly every call at gateway rates.
      ttlResolution: 0,
      ...(now === undefined ? {} : { perf: { now } }),
    });
  }

  onPath(path: BudgetPath): Promise<Budget[]> {
    const key = keyOf(path);
    const kept = this.paths.get(key);
    if (kept !== undefined) return Array.isArray(kept) ? Promise.resolve(kept) : kept;
    const budgets = this.repository.onPath(path);
    budgets.then(
      (read) => {
        // Kept as read for the rest of its second, not a second more.
        if (this.paths.get(key) === budgets) this.paths.set(key, read, { noUpdateTTL: true });
      },
      // A failed read is not kept: the next call asks again (and the gate decides what a failure
      // means).
      () => {
        if (this.paths.get(key) === budgets) this.paths.delete(key);
      },
    );
    this.paths.set(key, budgets);
    return budgets;
  }

  /** The budgets on a path if they were read within its second; undefined when not (yet) known. */
  known(path: BudgetPath): readonly Budget[] | undefined {
    const kept = this.paths.get(keyOf(path));
    return Array.isArray(kept) ? kept : undefined;
  }

  ledgerSpend(budget: Budget, from: string): Promise<number> {
    return this.repository.ledgerSpend(budget, from);
  }

  /** A budget of this instance changed: every path is read again. */
  changed(): void {
    this.paths.clear();
  }
}
