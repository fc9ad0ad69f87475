// A budget's periods: calendar days, weeks (Monday to Sunday) and months in UTC, or one period
// for all time. Each period is a window with a name (`2026-11-05`, `2026-W45`… in the form below),
// its start, and when it resets; the name is part of the window's storage key, so a new period
// starts from nothing without anything sweeping the old one.

export type BudgetPeriod = 'day' | 'week' | 'month' | 'total';

export interface BudgetWindow {
  /** `d2026-11-05`, `w2026-11-02` (the Monday), `m2026-11`, or `total`. */
  readonly name: string;
  /** The period's first instant (ISO 8601), the epoch for `total`. */
  readonly start: string;
  /** The next period's first instant; null for `total`. */
  readonly resetsAt: string | null;
  /** `resetsAt` in milliseconds since the epoch; null for `total`. */
  readonly resetsAtMs: number | null;
}

const day = 86_400_000;

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Each period's window of the last day asked for: within a UTC day every window stays the same. */
const lastWindows = new Map<BudgetPeriod, { dayStartMs: number; window: BudgetWindow }>();

/** The window of `period` that holds the instant `nowMs`. */
export function windowOf(period: BudgetPeriod, nowMs: number): BudgetWindow {
  const dayStartMs = nowMs - (((nowMs % day) + day) % day);
  const last = lastWindows.get(period);
  if (last !== undefined && last.dayStartMs === dayStartMs) return last.window;
  const window = computeWindow(period, nowMs);
  lastWindows.set(period, { dayStartMs, window });
  return window;
}

function computeWindow(period: BudgetPeriod, nowMs: number): BudgetWindow {
  const now = new Date(nowMs);
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  switch (period) {
    case 'day':
      return windowFrom(`d${isoDay(midnight)}`, midnight, midnight + day);
    case 'week': {
      // getUTCDay: Sunday 0 … Saturday 6; a week starts on Monday.
      const monday = midnight - ((now.getUTCDay() + 6) % 7) * day;
      return windowFrom(`w${isoDay(monday)}`, monday, monday + 7 * day);
    }
    case 'month': {
      const first = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
      const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
      return windowFrom(`m${isoDay(first).slice(0, 7)}`, first, next);
    }
    case 'total':
      return { name: 'total', start: new Date(0).toISOString(), resetsAt: null, resetsAtMs: null };
  }
}

function windowFrom(name: string, startMs: number, endMs: number): BudgetWindow {
  return {
    name,
    start: new Date(startMs).toISOString(),
    resetsAt: new Date(endMs).toISOString(),
    resetsAtMs: endMs,
  };
}

/** Whole seconds from `nowMs` until the window resets (at least 1); null for `total`. */
export function secondsUntilReset(window: BudgetWindow, nowMs: number): number | null {
  if (window.resetsAtMs === null) return null;
  return Math.max(1, Math.ceil((window.resetsAtMs - nowMs) / 1000));
}

/** Micro-dollars as the API shows them: a number with 6 decimals. */
export function usdOf(micros: number): number {
  return Number((micros / 1_000_000).toFixed(6));
}

/** Dollars as a client sends them, in micro-dollars (rounded to the nearest). */
export function microsOf(usd: number): number {
  return Math.round(usd * 1_000_000);
}
