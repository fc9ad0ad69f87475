// The tallied metrics expose what prom-client's own would for the same records: the same lines in
// the same order, in the text Prometheus scrapes and in the registry's JSON; each increment is
// counted once however often they are scraped; a bad value or a wrong number of label values is
// refused; label values that name Object.prototype's members are values like any other.
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { TalliedCounter, TalliedHistogram } from './tallies.js';

const buckets = [0.001, 0.01, 0.1, 1];
const labelNames = ['method', 'route', 'status'] as const;
const help = 'Seconds.';
/** Both histograms' settings, and both counters'. */
const histogramConfig = { name: 'h_seconds', help, labelNames, buckets };
const counterConfig = { name: 'c_total', help, labelNames };

/** The same records in a tallied histogram and counter, and in prom-client's own. */
function both(records: readonly (readonly [string, string, string, number])[]) {
  const tallied = new Registry();
  const histogram = new TalliedHistogram({ ...histogramConfig, registry: tallied });
  const counter = new TalliedCounter({ ...counterConfig, registry: tallied });
  const own = new Registry();
  const ownHistogram = new Histogram({ ...histogramConfig, registers: [own] });
  const ownCounter = new Counter({ ...counterConfig, registers: [own] });
  for (const [method, route, status, seconds] of records) {
    histogram.observe([method, route, status], seconds);
    counter.inc([method, route, status], 2);
    ownHistogram.observe({ method, route, status }, seconds);
    ownCounter.inc({ method, route, status }, 2);
  }
  return { tallied, own, histogram, counter };
}

const records = [
  ['POST', '/v1/chat/completions', '200', 0.0004],
  ['POST', '/v1/chat/completions', '200', 0.01],
  ['GET', '/v1/models', '200', 0.05],
  ['POST', '/v1/chat/completions', '429', 0.2],
  // Past the last bucket: counted in +Inf, the sum and the count only.
  ['POST', '/v1/chat/completions', '200', 7],
  ['GET', 'a "quoted"\nroute\\', '404', 0.001],
] as const;

describe('tallied metrics', () => {
  it("expose the same text and JSON as prom-client's own", async () => {
    const { tallied, own } = both(records);
    const text = await tallied.metrics();
    expect(text).toBe(await own.metrics());
    expect(text).toContain(
      'h_seconds_bucket{le="0.01",method="POST",route="/v1/chat/completions",status="200"} 2',
    );
    expect(text).toContain('route="a \\"quoted\\"\\nroute\\\\"');
    // The same values and labels; prom-client's buckets also carry an empty `exemplar`.
    const json = async (registry: Registry) =>
      JSON.parse(JSON.stringify(await registry.getMetricsAsJSON()), (key, value: unknown) =>
        key === 'exemplar' ? undefined : value,
      ) as unknown;
    expect(await json(tallied)).toEqual(await json(own));
  });

  it('count each increment once, however often scraped', async () => {
    const { tallied, counter, histogram } = both(records.slice(0, 2));
    await tallied.metrics();
    await tallied.metrics();
    counter.inc(['POST', '/v1/chat/completions', '200']);
    histogram.observe(['POST', '/v1/chat/completions', '200'], 0.5);
    const text = await tallied.metrics();
    expect(text).toContain('c_total{method="POST",route="/v1/chat/completions",status="200"} 5');
    expect(text).toContain(
      'h_seconds_count{method="POST",route="/v1/chat/completions",status="200"} 3',
    );
    expect(await tallied.metrics()).toBe(text);
  });

  it('refuse a bad value and a wrong number of label values', () => {
    const { counter, histogram } = both([]);
    expect(() => counter.inc(['GET', '/', '200'], -1)).toThrow(TypeError);
    expect(() => counter.inc(['GET', '/', '200'], Number.NaN)).toThrow(TypeError);
    expect(() => histogram.observe(['GET', '/', '200'], Number.POSITIVE_INFINITY)).toThrow(
      TypeError,
    );
    expect(() => histogram.observe(['GET', '/'], 1)).toThrow(TypeError);
    expect(() => counter.inc(['GET', '/', '200', 'x'])).toThrow(TypeError);
  });

  it("take Object.prototype's member names as ordinary values", async () => {
    const { tallied } = both([
      ['__proto__', 'constructor', 'toString', 0.01],
      ['__proto__', 'constructor', 'toString', 0.01],
    ]);
    const text = await tallied.metrics();
    expect(text).toContain('c_total{method="__proto__",route="constructor",status="toString"} 4');
    expect(({} as Record<string, unknown>).route).toBeUndefined();
  });

  it('refuse a reserved label name, as prom-client does', () => {
    expect(
      () =>
        new TalliedHistogram({
          name: 'x_seconds',
          help,
          labelNames: ['le'],
          buckets,
          registry: new Registry(),
        }),
    ).toThrow(/le is a reserved label/);
  });
});
