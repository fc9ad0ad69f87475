// A call's cost in micro-dollars: exact (one rounding, half up, for the whole call), in plain
// numbers for ordinary calls and in BigInt past what they hold exactly, with the same answer.
import { describe, expect, it } from 'vitest';
import type { ModelPricing } from '../config/config.js';
import { costMicros, noUsage } from './metering.js';

const pricing = (rates: Partial<ModelPricing>): ModelPricing => ({
  asOf: null,
  inputPerMtok: null,
  cachedInputPerMtok: null,
  cacheWritePerMtok: null,
  outputPerMtok: null,
  reasoningPerMtok: null,
  perAudioMinute: null,
  perMchar: null,
  ...rates,
});

/** The same sum, always in BigInt: the reference the fast path must agree with. */
function reference(terms: Array<[count: number, rate: number, per: number]>): number {
  const denominator = 60_000n * 1_000_000n;
  let numerator = 0n;
  for (const [count, rate, per] of terms) {
    numerator += BigInt(count) * BigInt(rate) * (denominator / BigInt(per));
  }
  return Number((numerator * 2n + denominator) / (denominator * 2n));
}

describe('costMicros', () => {
  it('rounds the whole call once, half up', () => {
    // 1 token at 500,000 µ$/Mtok is 0.5 µ$: rounds up; at 499,999 it rounds down.
    const one = { ...noUsage, inputTokens: 1 };
    expect(costMicros(pricing({ inputPerMtok: 500_000 }), one)).toBe(1);
    expect(costMicros(pricing({ inputPerMtok: 499_999 }), one)).toBe(0);
    // Two halves of a micro-dollar from two rates make one, not two rounded separately.
    const both = { ...noUsage, inputTokens: 1, outputTokens: 1 };
    expect(costMicros(pricing({ inputPerMtok: 250_000, outputPerMtok: 250_000 }), both)).toBe(1);
  });

  it('prices audio by the minute beside tokens, over one denominator', () => {
    const usage = { ...noUsage, inputTokens: 1_234, audioMs: 61_500 };
    const rates = pricing({ inputPerMtok: 2_500_000, perAudioMinute: 6_000 });
    expect(costMicros(rates, usage)).toBe(
      reference([
        [1_234, 2_500_000, 1_000_000],
        [61_500, 6_000, 60_000],
      ]),
    );
  });

  it('agrees with the BigInt reference past what plain numbers hold exactly', () => {
    const usage = { ...noUsage, inputTokens: 987_654_321_987, outputTokens: 123_456_789 };
    const rates = pricing({ inputPerMtok: 75_000_001, outputPerMtok: 150_000_003 });
    expect(costMicros(rates, usage)).toBe(
      reference([
        [987_654_321_987, 75_000_001, 1_000_000],
        [123_456_789, 150_000_003, 1_000_000],
      ]),
    );
  });

  it('is unknown (null) when a count that is not zero has no rate', () => {
    expect(costMicros(pricing({ inputPerMtok: 1 }), { ...noUsage, outputTokens: 3 })).toBeNull();
    expect(costMicros(null, noUsage)).toBeNull();
    expect(costMicros(pricing({}), noUsage)).toBe(0);
  });
});
