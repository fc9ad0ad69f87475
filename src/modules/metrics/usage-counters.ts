// The usage ledger's Prometheus counters: cost, tokens and unpriced calls by account and catalog
// model. Every call is counted, and a labelled prom-client increment hashes its label set each
// time (a measurable share of a call's metering), so each account's and model's use is kept as
// plain sums and handed to the counters when they are scraped (`collect`).
import { Counter, type Registry } from 'prom-client';
import type { UsageRecord } from '../usage/usage-records.repository.js';
import { labelSet } from './label-set.js';

/**
 * Accounts given a label value of their own; the calls of any account past these count under
 * `other`, so a platform with many accounts cannot grow the series without bound.
 */
const maxAccountLabels = 500;

const sumNames = [
  'cost',
  'unpriced',
  'input',
  'output',
  'cachedInput',
  'cacheWrite',
  'reasoning',
] as const;
type SumName = (typeof sumNames)[number];

/** One account's and model's use since the last scrape, and the counters it goes to. */
interface Tally {
  readonly sums: Record<SumName, number>;
  readonly counters: Record<SumName, { inc(value?: number): void }>;
}

export class UsageCounters {
  private readonly cost: Counter<'account' | 'model'>;
  private readonly tokens: Counter<'account' | 'model' | 'type'>;
  private readonly unpriced: Counter<'account' | 'model'>;
  private readonly accountLabels = new Set<string>();
  private readonly tallies = new Map<string, Tally>();

  /** `guard` runs a recording, reporting a failure rather than throwing it. */
  constructor(
    registry: Registry,
    private readonly guard: (what: () => void) => void,
  ) {
    const collect = () => this.collect();
    this.cost = new Counter({
      name: 'platform_usage_cost_usd_total',
      help: 'Cost of the model calls the usage ledger recorded, in US dollars (to the micro-dollar), by account and catalog model name. Calls whose price is unknown are not in it (see platform_usage_unpriced_calls_total).',
      labelNames: ['account', 'model'] as const,
      registers: [registry],
      collect,
    });
    this.tokens = new Counter({
      name: 'platform_usage_tokens_total',
      help: 'Tokens of the model calls the usage ledger recorded, by account, catalog model name and type (input, output, cached_input, cache_write, reasoning; input counts the cached ones, output the reasoning ones).',
      labelNames: ['account', 'model', 'type'] as const,
      registers: [registry],
      collect,
    });
    this.unpriced = new Counter({
      name: 'platform_usage_unpriced_calls_total',
      help: 'Model calls recorded with an unknown cost (a model without a price), by account and catalog model name.',
      labelNames: ['account', 'model'] as const,
      registers: [registry],
      collect,
    });
  }

  /** A model call's ledger record. */
  recorded(record: UsageRecord): void {
    this.guard(() => {
      const { sums } = this.tallyOf(this.accountLabel(record.accountId), record.model);
      if (record.costMicros === null) sums.unpriced += 1;
      else sums.cost += record.costMicros;
      sums.input += record.usage.inputTokens;
      sums.output += record.usage.outputTokens;
      sums.cachedInput += record.usage.cachedInputTokens;
      sums.cacheWrite += record.usage.cacheWriteTokens;
      sums.reasoning += record.usage.reasoningTokens;
    });
  }

  /** The sums since the last scrape, added to the counters (each sum emptied). */
  private collect(): void {
    this.guard(() => {
      for (const { sums, counters } of this.tallies.values()) {
        for (const name of sumNames) {
          const value = sums[name];
          if (value === 0) continue;
          sums[name] = 0;
          // Cost is summed in micro-dollars, exact; the counter is in dollars.
          counters[name].inc(name === 'cost' ? value / 1_000_000 : value);
        }
      }
    });
  }

  /** An account's and model's tally, its counters labelled once and kept. */
  private tallyOf(account: string, model: string): Tally {
    const key = `${account}\u0000${model}`;
    let tally = this.tallies.get(key);
    if (tally === undefined) {
      const tokens = (type: string) => this.tokens.labels(labelSet({ account, model, type }));
      tally = {
        sums: {
          cost: 0,
          unpriced: 0,
          input: 0,
          output: 0,
          cachedInput: 0,
          cacheWrite: 0,
          reasoning: 0,
        },
        counters: {
          cost: this.cost.labels(labelSet({ account, model })),
          unpriced: this.unpriced.labels(labelSet({ account, model })),
          input: tokens('input'),
          output: tokens('output'),
          cachedInput: tokens('cached_input'),
          cacheWrite: tokens('cache_write'),
          reasoning: tokens('reasoning'),
        },
      };
      this.tallies.set(key, tally);
    }
    return tally;
  }

  /** The account's label value: its id, or `other` past the first `maxAccountLabels`. */
  private accountLabel(accountId: string): string {
    if (this.accountLabels.has(accountId)) return accountId;
    if (this.accountLabels.size >= maxAccountLabels) return 'other';
    this.accountLabels.add(accountId);
    return accountId;
  }
}
