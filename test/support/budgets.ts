// What the budgets' suites share: a priced model served by the fake upstream, a known cost per
// call, and the calls that read budgets and the ledger back.
import type { App } from '../../src/http/types.js';
import type { ServiceContainer } from '../../src/services.js';
import { bearer } from './test-app.js';

/** 100 micro-dollars an input token, 1,000 an output token (USD 100 / 1,000 per million). */
export const pricing = { input_per_mtok: 100, output_per_mtok: 1000 };

/** What the fake upstream reports for every call: 5 tokens in, 20 out. */
export const reported = { prompt_tokens: 5, completion_tokens: 20 };

/** The real cost of one call: 5 × 100 + 20 × 1,000 micro-dollars. */
export const callCostMicros = 5 * 100 + 20 * 1000;

/** The output ceiling every call asks for: its worst case is its input and these 50 tokens. */
export const maxTokens = 50;

export function pricedModel(upstreamUrl: string, name = 'priced-chat') {
  return {
    name,
    provider: 'openai-compatible' as const,
    base_url: upstreamUrl,
    model: 'gpt-4o-mini',
    api_key_env: 'FAKE_UPSTREAM_KEY',
    max_tokens: 256,
    context_length: 8192,
    max_retries: 0,
    pricing,
  };
}

export interface BudgetJson {
  id: string;
  object: 'budget';
  scope: 'account' | 'key' | 'user';
  key_id: string | null;
  user_id: string | null;
  period: string;
  limit_usd: number;
  soft_limit_usd: number | null;
  spent_usd: number;
  reserved_usd: number;
  resets_at: string | null;
}

export async function createBudget(
  app: App,
  adminKey: string,
  body: Record<string, unknown>,
): Promise<BudgetJson> {
  const response = await app.inject({
    method: 'POST',
    url: '/v1/budgets',
    headers: bearer(adminKey),
    payload: body,
  });
  if (response.statusCode !== 201) {
    throw new Error(`creating a budget failed: ${response.statusCode} ${response.body}`);
  }
  return response.json<BudgetJson>();
}

export async function getBudget(app: App, adminKey: string, id: string): Promise<BudgetJson> {
  const response = await app.inject({
    method: 'GET',
    url: `/v1/budgets/${id}`,
    headers: bearer(adminKey),
  });
  if (response.statusCode !== 200) {
    throw new Error(`reading a budget failed: ${response.statusCode} ${response.body}`);
  }
  return response.json<BudgetJson>();
}

/** Micro-dollars the ledger recorded for an account (a key, an end user), once written. */
export async function ledgerSpend(
  services: ServiceContainer,
  accountId: string,
  subject: { keyId?: string; endUser?: string } = {},
): Promise<{ micros: number; records: number }> {
  await services.usageLedger.ledger.flush();
  let query = services.storage.db
    .selectFrom('usage_records')
    .select(['cost_micros'])
    .where('account_id', '=', accountId);
  if (subject.keyId !== undefined) query = query.where('api_key_id', '=', subject.keyId);
  if (subject.endUser !== undefined) query = query.where('end_user', '=', subject.endUser);
  const rows = await query.execute();
  return {
    micros: rows.reduce((sum, row) => sum + Number(row.cost_micros ?? 0), 0),
    records: rows.length,
  };
}

/** Reads the budget until nothing is reserved on it any more (a settlement is asynchronous). */
export async function untilReleased(
  app: App,
  adminKey: string,
  id: string,
  tries = 200,
): Promise<BudgetJson> {
  for (let attempt = 0; attempt < tries; attempt += 1) {
    const budget = await getBudget(app, adminKey, id);
    if (budget.reserved_usd === 0) return budget;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`budget ${id} still holds a reservation after ${tries} reads`);
}
