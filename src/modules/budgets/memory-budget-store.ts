// The budgets' store of a single instance (SQLite, no Redis — SQLite serves one instance): each
// budget's window in this process's memory, seeded from the ledger when first used. JavaScript
// runs one call's check and reservation at a time, so it is exact without a lock; after a restart
// the windows are seeded from the ledger again (what a kill -9 took from the ledger, at most its
// flush interval, is what they miss). Reservations die with the process, as their calls do.
import { LRUCache } from 'lru-cache';
import type {
  BudgetStore,
  Reservation,
  ReserveOutcome,
  WindowLine,
  WindowState,
} from './budget-store.js';

interface Window {
  readonly name: string;
  spent: number;
  /** What the live reservations hold, kept as a sum so that a check costs the same at any load. */
  reserved: number;
  /** The earliest deadline among them: before it, none has lapsed and none is looked at. */
  nextDeadlineMs: number;
  readonly reservations: Map<string, { amount: number; expiresAtMs: number }>;
}

/** Windows kept at most (one per budget: a budget's next window replaces its last). */
const maxWindows = 100_000;

export class MemoryBudgetStore implements BudgetStore {
  /**
   * Each budget's current window, by budget id; a seed being read is shared by its callers.
   * Counted through `maxSize` (each window weighs 1), not `max`: with `max`, lru-cache allocates
   * its lists for all 100,000 entries at once, 15 ms and 2.8 MB for a store still empty.
   */
  private readonly windows = new LRUCache<string, Window>({
    maxSize: maxWindows,
    sizeCalculation: () => 1,
  });
  private readonly seeding = new Map<string, Promise<Window>>();

  reserve(
    lines: readonly WindowLine[],
    reservation: Reservation,
    nowMs: number,
  ): Promise<ReserveOutcome> {
    // Windows in memory (every call after a window's first): no wait at all.
    const kept: Window[] = [];
    for (const line of lines) {
      const window = this.current(line);
      if (window === undefined) break;
      kept.push(window);
    }
    if (kept.length === lines.length) {
      return Promise.resolve(reserveOn(kept, lines, reservation, nowMs));
    }
    // From the seeds' end to the reservation nothing awaits: the check and the reservation are
    // one step.
    return Promise.all(lines.map((line) => this.windowOf(line))).then((windows) =>
      reserveOn(windows, lines, reservation, nowMs),
    );
  }

  settle(lines: readonly WindowLine[], reservationId: string, costMicros: number): Promise<void> {
    for (const line of lines) {
      const window = this.current(line);
      // A window that moved on (the period reset) while the call ran: its cost is the ledger's.
      if (window === undefined) continue;
      const reservation = window.reservations.get(reservationId);
      if (reservation !== undefined) {
        window.reservations.delete(reservationId);
        window.reserved -= reservation.amount;
      }
      window.spent += costMicros;
    }
    return Promise.resolve();
  }

  async state(line: WindowLine, nowMs: number): Promise<WindowState> {
    const window = await this.windowOf(line);
    return { spentMicros: window.spent, reservedMicros: reservedOn(window, nowMs) };
  }

  /** The budget's window named by `line`, if this process holds it. */
  private current(line: WindowLine): Window | undefined {
    const window = this.windows.get(line.budgetId);
    return window !== undefined && window.name === line.window ? window : undefined;
  }

  /** The budget's window named by `line`, seeded from the ledger the first time. */
  private windowOf(line: WindowLine): Promise<Window> {
    const current = this.current(line);
    if (current !== undefined) return Promise.resolve(current);
    const key = `${line.budgetId}\u0000${line.window}`;
    let seeded = this.seeding.get(key);
    if (seeded === undefined) {
      seeded = line
        .seed()
        .then((spent) => {
          const window: Window = {
            name: line.window,
            spent,
            reserved: 0,
            nextDeadlineMs: Number.POSITIVE_INFINITY,
            reservations: new Map(),
          };
          this.keep(line.budgetId, window);
          return this.windows.get(line.budgetId) ?? window;
        })
        .finally(() => this.seeding.delete(key));
      this.seeding.set(key, seeded);
    }
    return seeded;
  }

  private keep(budgetId: string, window: Window): void {
    const current = this.windows.get(budgetId);
    // Two seeds of one window raced (one finished first): the first stays, with what it counted.
    if (current !== undefined && current.name === window.name) return;
    // Past the bound, the least recently used window goes (a deleted budget's, one long unused):
    // read from the ledger again if needed.
    this.windows.set(budgetId, window);
  }
}

/** Reserves on every window, or on none: the check and the reservation in one synchronous step. */
function reserveOn(
  windows: readonly Window[],
  lines: readonly WindowLine[],
  reservation: Reservation,
  nowMs: number,
): ReserveOutcome {
  const amount = reservation.amountMicros;
  const warnings: number[] = [];
  for (const [index, window] of windows.entries()) {
    const line = lines[index]!;
    const reserved = reservedOn(window, nowMs);
    if (amount > 0 && window.spent + reserved + amount > line.limitMicros) {
      return { kind: 'refused', line: index, spentMicros: window.spent };
    }
    if (line.softLimitMicros !== null && window.spent + reserved + amount >= line.softLimitMicros) {
      warnings.push(index);
    }
  }
  for (const window of windows) {
    window.reservations.set(reservation.id, { amount, expiresAtMs: reservation.expiresAtMs });
    window.reserved += amount;
    window.nextDeadlineMs = Math.min(window.nextDeadlineMs, reservation.expiresAtMs);
  }
  return { kind: 'reserved', warnings };
}

/** What the window's live reservations hold (those past their deadline dropped first). */
function reservedOn(window: Window, nowMs: number): number {
  if (nowMs < window.nextDeadlineMs) return window.reserved;
  window.nextDeadlineMs = Number.POSITIVE_INFINITY;
  for (const [id, reservation] of window.reservations) {
    if (reservation.expiresAtMs <= nowMs) {
      window.reservations.delete(id);
      window.reserved -= reservation.amount;
    } else {
      window.nextDeadlineMs = Math.min(window.nextDeadlineMs, reservation.expiresAtMs);
    }
  }
  return window.reserved;
}
