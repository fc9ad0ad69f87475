// The budgets on every model call's path (the usage meter's BudgetGate): before the call, its
// worst case — its counted input at the input price and its output ceiling at the output price —
// is reserved on every budget on its path (the account's, its key's, its end user's) at once, or
// the call is refused before anything is sent upstream; after it, the reservation is settled to
// the call's real cost (the rest released), whatever its outcome.
import type { Logger } from 'pino';
import type { ModelDefinition } from '../../config/config.js';
import { AppError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import { costMicros, type CallAttribution, type MeteredUsage } from '../../models/metering.js';
import type { BudgetGate, BudgetReservation } from '../usage/ledger-meter.js';
import { secondsUntilReset, usdOf, windowOf } from './budget-periods.js';
import type { BudgetStore, WindowLine } from './budget-store.js';
import type { Budget, BudgetPath, BudgetsRepository } from './budgets.repository.js';

/** Told of each call a soft limit warned about (a Prometheus counter). */
export interface BudgetObserver {
  softLimitCrossed(scope: Budget['scope']): void;
  budgetRefused(scope: Budget['scope']): void;
}

export interface BudgetGateOptions {
  readonly budgets: Pick<BudgetsRepository, 'onPath' | 'ledgerSpend'> & {
    /** The budgets on a path when they are known without a read (BudgetPathCache). */
    readonly known?: (path: BudgetPath) => readonly Budget[] | undefined;
  };
  readonly store: BudgetStore;
  /** A call under a budget goes on, unchecked, when the store cannot be reached. */
  readonly failOpen: boolean;
  readonly observer?: BudgetObserver | undefined;
  readonly logger: Logger;
  readonly now: () => number;
}

/** A reservation not settled within this time (its instance died) no longer counts. */
export const reservationLifetimeMs = 60 * 60 * 1000;

/** One budget's window now: what the store keeps of it, and its seed from the ledger. */
export function lineOf(
  budgets: Pick<BudgetsRepository, 'ledgerSpend'>,
  budget: Budget,
  nowMs: number,
): WindowLine & { readonly budget: Budget } {
  const window = windowOf(budget.period, nowMs);
  return {
    budget,
    budgetId: budget.id,
    accountId: budget.accountId,
    window: window.name,
    limitMicros: budget.limitMicros,
    softLimitMicros: budget.softLimitMicros,
    resetsAtMs: window.resetsAtMs,
    seed: () => budgets.ledgerSpend(budget, window.start),
  };
}

/** No budget on a call's path: nothing is reserved. */
const noReservation = Promise.resolve(null);

export class StoreBudgetGate implements BudgetGate {
  constructor(private readonly options: BudgetGateOptions) {}

  reserve(call: {
    attribution: CallAttribution;
    definition: ModelDefinition;
    worstCase: () => Promise<MeteredUsage>;
  }): Promise<BudgetReservation | null> {
    // Most calls have no budget on their path: known at once, with no read and no await.
    const known = this.options.budgets.known?.(call.attribution);
    return known?.length === 0 ? noReservation : this.reserveOnPath(call, known);
  }

  /** Reserves on the path's budgets: `known` when they are (else read), each of them. */
  private async reserveOnPath(
    call: {
      attribution: CallAttribution;
      definition: ModelDefinition;
      worstCase: () => Promise<MeteredUsage>;
    },
    known: readonly Budget[] | undefined,
  ): Promise<BudgetReservation | null> {
    const { attribution, definition } = call;
    const nowMs = this.options.now();
    const budgets = known ?? (await this.guarded(() => this.options.budgets.onPath(attribution)));
    if (budgets === null || budgets.length === 0) return null;
    const amount = costMicros(definition.pricing, await call.worstCase());
    if (amount === null) throw unpricedModel(definition);
    const lines = budgets.map((budget) => lineOf(this.options.budgets, budget, nowMs));
    const reservation = {
      id: newId('rsv'),
      amountMicros: amount,
      expiresAtMs: nowMs + reservationLifetimeMs,
    };
    const outcome = await this.guarded(() => this.options.store.reserve(lines, reservation, nowMs));
    if (outcome === null) return null;
    if (outcome.kind === 'refused') {
      const line = lines[outcome.line]!;
      this.options.observer?.budgetRefused(line.budget.scope);
      throw budgetExceeded(line.budget, outcome.spentMicros, nowMs);
    }
    for (const index of outcome.warnings) {
      const budget = lines[index]!.budget;
      this.options.observer?.softLimitCrossed(budget.scope);
      attribution.warn?.(warningOf(budget));
    }
    return { settle: (cost) => this.settle(lines, reservation.id, cost) };
  }

  private settle(lines: readonly WindowLine[], reservationId: string, cost: number): void {
    this.options.store.settle(lines, reservationId, cost).catch((error: unknown) => {
      // The ledger has the call's record; the window's reservation lapses at its deadline.
      this.options.logger.warn(
        { err: error, reservationId },
        'a budget reservation was not settled',
      );
    });
  }

  /** A store call; its failure refuses the call (503) unless budgets fail open (then null). */
  private async guarded<T>(step: () => Promise<T>): Promise<T | null> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof AppError) throw error;
      this.options.logger.warn({ err: error }, 'the budgets store cannot be reached');
      if (this.options.failOpen) return null;
      throw new AppError(
        'budgets_unavailable',
        'The budgets cannot be checked now (their store cannot be reached); the call was not made. Try again shortly.',
        { cause: error, headers: { 'retry-after': '1' } },
      );
    }
  }
}

function unpricedModel(definition: ModelDefinition): AppError {
  return new AppError(
    'unpriced_model',
    `The model '${definition.name}' has no price for what this call uses, and a budget applies to this call: a budget can only hold calls whose cost is known. Give the model a 'pricing' in the configuration, or use a priced model.`,
    { param: 'model' },
  );
}

/** The contract's 429: which budget, its limit, its spend, and when it resets. */
export function budgetExceeded(budget: Budget, spentMicros: number, nowMs: number): AppError {
  const window = windowOf(budget.period, nowMs);
  const retryAfter = secondsUntilReset(window, nowMs);
  return new AppError(
    'budget_exceeded',
    `This call would take the ${budget.scope} budget ${budget.id} past its limit of ${usdOf(budget.limitMicros).toFixed(6)} USD${window.resetsAt === null ? '' : ` before it resets at ${window.resetsAt}`}.`,
    {
      details: {
        budget_id: budget.id,
        scope: budget.scope,
        limit_usd: usdOf(budget.limitMicros),
        spent_usd: usdOf(spentMicros),
        resets_at: window.resetsAt,
      },
      headers: retryAfter === null ? {} : { 'retry-after': String(retryAfter) },
    },
  );
}

/** The X-Budget-Warning value: which budget passed its soft limit (ASCII, no user text). */
function warningOf(budget: Budget): string {
  const soft = usdOf(budget.softLimitMicros ?? 0).toFixed(6);
  return `${budget.id}; scope=${budget.scope}; soft_limit_usd=${soft}; limit_usd=${usdOf(budget.limitMicros).toFixed(6)}`;
}
