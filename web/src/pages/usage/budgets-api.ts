// The budgets API (POST/GET/PATCH/DELETE /v1/budgets), its shapes as the contract gives them. A
// server without budgets (an older one behind this dashboard) answers 404: the page says so.
import { ApiCallError, sessionHeaders } from '../../api/client';

export type BudgetScope = 'account' | 'key' | 'user';
export type BudgetPeriod = 'day' | 'week' | 'month' | 'total';

export interface Budget {
  id: string;
  scope: BudgetScope;
  key_id?: string | null;
  user_id?: string | null;
  limit_usd: number;
  soft_limit_usd?: number | null;
  period: BudgetPeriod;
  spent_usd: number;
  reserved_usd: number;
  /** null: a `total` budget, which never resets. */
  resets_at: string | null;
}

export interface NewBudget {
  scope: BudgetScope;
  key_id?: string;
  user_id?: string;
  limit_usd: number;
  period: BudgetPeriod;
  soft_limit_usd?: number;
}

export interface BudgetChange {
  limit_usd?: number;
  period?: BudgetPeriod;
  /** null removes the soft limit. */
  soft_limit_usd?: number | null;
}

/** Budgets are not served here (the route answers 404). */
export class BudgetsUnavailable extends Error {
  constructor() {
    super('Budgets are not available on this server.');
    this.name = 'BudgetsUnavailable';
  }
}

async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: sessionHeaders(body !== undefined),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 204) return null;
  const payload: unknown = await response.json().catch(() => null);
  if (response.status === 404 && method === 'GET' && path.startsWith('/v1/budgets?')) {
    throw new BudgetsUnavailable();
  }
  if (!response.ok) throw new ApiCallError(response.status, payload);
  return payload;
}

/** The account's budgets (the first 100: more than the page can show as bars). */
export async function listBudgets(): Promise<Budget[]> {
  const payload = (await call('GET', '/v1/budgets?limit=100')) as { budgets: Budget[] };
  return payload.budgets;
}

export const createBudget = (budget: NewBudget) => call('POST', '/v1/budgets', budget);

export const updateBudget = (id: string, change: BudgetChange) =>
  call('PATCH', `/v1/budgets/${encodeURIComponent(id)}`, change);

export const deleteBudget = (id: string) => call('DELETE', `/v1/budgets/${encodeURIComponent(id)}`);
