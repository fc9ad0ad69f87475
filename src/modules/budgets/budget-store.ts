// What holds the budgets' windows — each budget's settled spend in its current period, and the
// reservations of calls under way: Redis (one Lua script per reservation) when REDIS_URL is set,
// else the database (one transaction). Both answer the same questions the same way.

/** One budget of a call, in its current window. */
export interface WindowLine {
  readonly budgetId: string;
  readonly accountId: string;
  /** The window's name (`m2026-11`): part of its key, so a new period starts from nothing. */
  readonly window: string;
  readonly limitMicros: number;
  readonly softLimitMicros: number | null;
  /** When the window resets (ms since the epoch); null for a budget in total. */
  readonly resetsAtMs: number | null;
  /** The window's spend as the ledger has it: read only when the window is first used. */
  readonly seed: () => Promise<number>;
}

export interface Reservation {
  readonly id: string;
  readonly amountMicros: number;
  /** Past this instant (ms) a reservation never settled (its instance died) no longer counts. */
  readonly expiresAtMs: number;
}

export type ReserveOutcome =
  | {
      readonly kind: 'reserved';
      /** The lines whose spent and reserved, this call included, reach their soft limit. */
      readonly warnings: readonly number[];
    }
  | {
      readonly kind: 'refused';
      /** The first line the call does not fit in. */
      readonly line: number;
      readonly spentMicros: number;
    };

export interface WindowState {
  readonly spentMicros: number;
  readonly reservedMicros: number;
}

export interface BudgetStore {
  /** Reserves `reservation` on every line, or on none (throws when the store cannot be reached). */
  reserve(
    lines: readonly WindowLine[],
    reservation: Reservation,
    nowMs: number,
  ): Promise<ReserveOutcome>;
  /** Releases the reservation on every line and adds the call's cost to each window's spend. */
  settle(lines: readonly WindowLine[], reservationId: string, costMicros: number): Promise<void>;
  /** A window's spend and what is reserved on it now. */
  state(line: WindowLine, nowMs: number): Promise<WindowState>;
}
