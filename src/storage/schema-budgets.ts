// Table shapes of the budgets and their windows and reservations, as Kysely sees them (part of
// DatabaseSchema in schema.ts; its conventions hold here). Bigint columns come back from
// PostgreSQL as text.

/** A budget (migration 020). */
export interface BudgetsTable {
  id: string;
  account_id: string;
  scope: 'account' | 'key' | 'user';
  key_id: string | null;
  user_id: string | null;
  limit_micros: number | string;
  soft_limit_micros: number | string | null;
  period: 'day' | 'week' | 'month' | 'total';
  created_at: string;
  updated_at: string;
}

/** A budget's settled spend in one window (period) of it. */
export interface BudgetWindowsTable {
  budget_id: string;
  window_name: string;
  spent_micros: number | string;
}

/** A call's worst case held on a budget's window until it is settled or `expires_at` passes. */
export interface BudgetReservationsTable {
  id: string;
  budget_id: string;
  window_name: string;
  amount_micros: number | string;
  expires_at: number | string;
}
