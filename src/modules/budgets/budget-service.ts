// The budgets of an account: created for the account, one of its keys or one of its end users,
// changed, deleted, and read with their current window — spent, reserved, and when it resets.
import {
  AppError,
  InvalidParameterError,
  MissingParameterError,
  NotFoundError,
} from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type { ApiKeysRepository } from '../accounts/api-keys.repository.js';
import { lineOf } from './budget-gate.js';
import { microsOf, windowOf, type BudgetPeriod } from './budget-periods.js';
import type { BudgetStore } from './budget-store.js';
import type { Budget, BudgetScope, BudgetsRepository } from './budgets.repository.js';

export interface NewBudget {
  readonly scope: BudgetScope;
  readonly keyId?: string | undefined;
  readonly userId?: string | undefined;
  readonly limitUsd: number;
  readonly softLimitUsd?: number | null | undefined;
  readonly period: BudgetPeriod;
}

export interface BudgetUpdate {
  readonly limitUsd?: number | undefined;
  readonly softLimitUsd?: number | null | undefined;
  readonly period?: BudgetPeriod | undefined;
}

/** A budget with its current window. */
export interface BudgetView {
  readonly budget: Budget;
  readonly spentMicros: number;
  readonly reservedMicros: number;
  readonly resetsAt: string | null;
}

export interface BudgetServiceOptions {
  readonly budgets: BudgetsRepository;
  readonly store: BudgetStore;
  readonly keys: Pick<ApiKeysRepository, 'findInAccount'>;
  readonly now: () => number;
  /** Told after a budget is created, changed or deleted (the gate's cache reads paths again). */
  readonly onChange?: () => void;
}

export class BudgetService {
  constructor(private readonly options: BudgetServiceOptions) {}

  async create(accountId: string, input: NewBudget): Promise<BudgetView> {
    await this.checkSubject(accountId, input);
    const limitMicros = microsOf(input.limitUsd);
    const softLimitMicros = softLimitOf(input.softLimitUsd, limitMicros);
    const at = new Date(this.options.now()).toISOString();
    const budget: Budget = {
      id: newId('bud'),
      accountId,
      scope: input.scope,
      keyId: input.scope === 'key' ? (input.keyId ?? null) : null,
      userId: input.scope === 'user' ? (input.userId ?? null) : null,
      limitMicros,
      softLimitMicros: softLimitMicros ?? null,
      period: input.period,
      createdAt: at,
      updatedAt: at,
    };
    await this.options.budgets.insert(budget);
    this.options.onChange?.();
    return this.viewOf(budget);
  }

  async list(
    accountId: string,
    page: { limit: number; offset: number },
  ): Promise<{ views: BudgetView[]; total: number }> {
    const [budgets, total] = await Promise.all([
      this.options.budgets.list(accountId, page),
      this.options.budgets.count(accountId),
    ]);
    return { views: await Promise.all(budgets.map((budget) => this.viewOf(budget))), total };
  }

  async get(accountId: string, id: string): Promise<BudgetView> {
    return this.viewOf(await this.find(accountId, id));
  }

  async update(accountId: string, id: string, changes: BudgetUpdate): Promise<BudgetView> {
    const budget = await this.find(accountId, id);
    const limitMicros =
      changes.limitUsd === undefined ? budget.limitMicros : microsOf(changes.limitUsd);
    const softLimitMicros =
      changes.softLimitUsd === undefined
        ? softLimitOf(
            budget.softLimitMicros === null ? null : budget.softLimitMicros / 1_000_000,
            limitMicros,
          )
        : softLimitOf(changes.softLimitUsd, limitMicros);
    const updatedAt = new Date(this.options.now()).toISOString();
    const updated = await this.options.budgets.update(accountId, id, {
      limitMicros,
      softLimitMicros,
      ...(changes.period === undefined ? {} : { period: changes.period }),
      updatedAt,
    });
    if (!updated) throw new NotFoundError('Budget', id);
    this.options.onChange?.();
    return this.get(accountId, id);
  }

  async delete(accountId: string, id: string): Promise<void> {
    if (!(await this.options.budgets.delete(accountId, id))) throw new NotFoundError('Budget', id);
    this.options.onChange?.();
  }

  private async find(accountId: string, id: string): Promise<Budget> {
    const budget = await this.options.budgets.find(accountId, id);
    if (budget === undefined) throw new NotFoundError('Budget', id);
    return budget;
  }

  private async viewOf(budget: Budget): Promise<BudgetView> {
    const nowMs = this.options.now();
    const line = lineOf(this.options.budgets, budget, nowMs);
    let state;
    try {
      state = await this.options.store.state(line, nowMs);
    } catch (error) {
      throw new AppError(
        'budgets_unavailable',
        "The budgets' store cannot be reached now; try again shortly.",
        { cause: error, headers: { 'retry-after': '1' } },
      );
    }
    return {
      budget,
      spentMicros: state.spentMicros,
      reservedMicros: state.reservedMicros,
      resetsAt: windowOf(budget.period, nowMs).resetsAt,
    };
  }

  /** A key budget names a key of the account; a user budget names a user; nothing else does. */
  private async checkSubject(accountId: string, input: NewBudget): Promise<void> {
    if (input.scope !== 'key' && input.keyId !== undefined) {
      throw new InvalidParameterError('key_id', "'key_id' is only for a budget of scope 'key'.");
    }
    if (input.scope !== 'user' && input.userId !== undefined) {
      throw new InvalidParameterError('user_id', "'user_id' is only for a budget of scope 'user'.");
    }
    if (input.scope === 'user' && input.userId === undefined) {
      throw new MissingParameterError('user_id', "A budget of scope 'user' needs 'user_id'.");
    }
    if (input.scope !== 'key') return;
    if (input.keyId === undefined) {
      throw new MissingParameterError('key_id', "A budget of scope 'key' needs 'key_id'.");
    }
    if ((await this.options.keys.findInAccount(accountId, input.keyId)) === undefined) {
      throw new InvalidParameterError('key_id', `No key '${input.keyId}' in this account.`);
    }
  }
}

/** A soft limit in micro-dollars: none, or one no higher than the limit. */
function softLimitOf(softLimitUsd: number | null | undefined, limitMicros: number): number | null {
  if (softLimitUsd === null || softLimitUsd === undefined) return null;
  const micros = microsOf(softLimitUsd);
  if (micros > limitMicros) {
    throw new InvalidParameterError(
      'soft_limit_usd',
      "'soft_limit_usd' must not be above 'limit_usd'.",
    );
  }
  return micros;
}
