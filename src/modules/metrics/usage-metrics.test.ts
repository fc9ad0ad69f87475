// The usage counters' account label stays bounded: past the first 500 accounts an instance has
// seen, calls count under `other`, and the accounts already seen keep their own series; each
// call is counted once, however often the counters are scraped.
import { describe, expect, it } from 'vitest';
import type { UsageRecord } from '../usage/usage-records.repository.js';
import { PlatformMetrics } from './metrics.js';

const record = (accountId: string, costMicros: number | null): UsageRecord => ({
  id: `use_${accountId}`,
  accountId,
  apiKeyId: null,
  endUser: null,
  route: 'POST /v1/chat/completions',
  model: 'priced',
  provider: 'openai-compatible',
  deployment: null,
  executionId: null,
  usage: {
    inputTokens: 10,
    outputTokens: 5,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    audioMs: 0,
    characters: 0,
  },
  status: 'ok',
  errorCode: null,
  latencyMs: 1,
  cacheHit: false,
  costMicros,
  createdAt: new Date(0).toISOString(),
});

const series = (text: string, name: string) =>
  text.split('\n').filter((line) => line.startsWith(`${name}{`));

describe('the usage counters', () => {
  it('bound the account label, and keep the accounts already seen', async () => {
    const metrics = new PlatformMetrics({ defaultMetrics: false });
    for (let index = 0; index < 520; index += 1) metrics.usageRecorded(record(`acct_${index}`, 7));
    metrics.usageRecorded(record('acct_0', 3));
    metrics.usageRecorded(record('acct_late', null));
    const text = await metrics.text();
    const cost = series(text, 'platform_usage_cost_usd_total');
    expect(cost).toHaveLength(501);
    const value = (account: string) =>
      Number(
        cost
          .find((line) => line.includes(`{account="${account}",`))
          ?.split(' ')
          .at(-1),
      );
    // 20 accounts past the 500th, 7 micro-dollars each; the first account's two calls.
    expect(value('other')).toBeCloseTo(20 * 7e-6, 12);
    expect(value('acct_0')).toBeCloseTo(10e-6, 12);
    expect(series(text, 'platform_usage_unpriced_calls_total')).toEqual([
      'platform_usage_unpriced_calls_total{account="other",model="priced"} 1',
    ]);
    expect(series(text, 'platform_usage_tokens_total')).toHaveLength(501 * 2);
  });

  it('count each call once, however often they are scraped', async () => {
    const metrics = new PlatformMetrics({ defaultMetrics: false });
    const cost = async () =>
      series(await metrics.text(), 'platform_usage_cost_usd_total').map((line) =>
        Number(line.split(' ').at(-1)),
      );
    metrics.usageRecorded(record('acct_a', 5));
    expect(await cost()).toEqual([5e-6]);
    expect(await cost()).toEqual([5e-6]);
    metrics.usageRecorded(record('acct_a', 2));
    metrics.usageRecorded(record('acct_a', 3));
    const [total] = await cost();
    expect(total).toBeCloseTo(10e-6, 12);
    expect(series(await metrics.text(), 'platform_usage_tokens_total')).toEqual([
      'platform_usage_tokens_total{account="acct_a",model="priced",type="input"} 30',
      'platform_usage_tokens_total{account="acct_a",model="priced",type="output"} 15',
    ]);
  });
});
