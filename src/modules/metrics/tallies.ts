// Labelled metrics recorded on every request (HTTP requests, model calls), kept as plain tallies
// found by their label values and handed to Prometheus when it scrapes. prom-client checks a
// label set's keys (`for … in` over it) and builds a string of it to find the series on every
// increment and observation: for the two counters and two histograms a chat completion records,
// some 6-9 µs of CPU in a warm loop and about 30 thousand instructions a request
// (bench/results/gateway-profile.md). Here a series' label set is built once, when its values
// are first seen; after that a record is a few Map lookups on the values and an addition.
import {
  Counter,
  Histogram,
  type LabelValues,
  type MetricValueWithName,
  type Registry,
} from 'prom-client';
import { labelSet } from './label-set.js';

/** Series found by their label values, one Map per label, in the order of the label names. */
class SeriesIndex<N extends string, S> {
  private readonly root = new Map<string, unknown>();
  readonly all: S[] = [];

  constructor(
    private readonly labelNames: readonly N[],
    private readonly create: (labels: LabelValues<N>) => S,
  ) {
    if (labelNames.length === 0) throw new TypeError('A tallied metric needs at least one label');
  }

  /** The series of `values` (one per label name), made on first use. */
  get(values: readonly string[]): S {
    const { labelNames } = this;
    if (values.length !== labelNames.length) {
      throw new TypeError(`${labelNames.length} label values expected, got ${values.length}`);
    }
    let level = this.root;
    const last = labelNames.length - 1;
    for (let index = 0; index < last; index += 1) {
      const value = values[index]!;
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const value = values[last]!;
    let series = level.get(value) as S | undefined;
    if (series === undefined) {
      const labels = labelSet(
        Object.fromEntries(labelNames.map((name, index) => [name, values[index]!])),
      ) as LabelValues<N>;
      series = this.create(labels);
      level.set(value, series);
      this.all.push(series);
    }
    return series;
  }

  clear(): void {
    this.root.clear();
    this.all.length = 0;
  }
}

interface CounterSeries<N extends string> {
  readonly labels: LabelValues<N>;
  /** Added since the last scrape. */
  pending: number;
}

/**
 * A prom-client counter whose increments are summed by series and added to it when it is
 * scraped (its `collect`), once per series rather than once per increment.
 */
export class TalliedCounter<N extends string> {
  private readonly series: SeriesIndex<N, CounterSeries<N>>;

  constructor(config: {
    name: string;
    help: string;
    labelNames: readonly N[];
    registry: Registry;
  }) {
    this.series = new SeriesIndex(config.labelNames, (labels) => ({ labels, pending: 0 }));
    const counter: Counter<N> = new Counter({
      name: config.name,
      help: config.help,
      labelNames: config.labelNames,
      registers: [config.registry],
      collect: () => {
        for (const series of this.series.all) {
          if (series.pending === 0) continue;
          counter.inc(series.labels, series.pending);
          series.pending = 0;
        }
      },
    });
  }

  /** Adds `value` (1 unless given) to the series of `values`, given in the labels' order. */
  inc(values: readonly string[], value = 1): void {
    if (!(Number.isFinite(value) && value >= 0)) {
      throw new TypeError(`A counter cannot add ${String(value)}`);
    }
    this.series.get(values).pending += value;
  }
}

interface HistogramSeries<N extends string> {
  readonly labels: LabelValues<N>;
  /** Observations by bucket (not cumulative): `counts[i]` is of those ≤ bounds[i] and > bounds[i-1]. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** A histogram's metric object, as prom-client's registry reads it. */
interface HistogramObject<N extends string> {
  readonly name: string;
  readonly help: string;
  readonly type: 'histogram';
  readonly values: MetricValueWithName<N | 'le'>[];
  readonly aggregator: 'sum';
}

/**
 * A histogram with prom-client's exposition (the same lines, in the same order, as its
 * `Histogram` with these buckets), registered in a prom-client registry, whose observations are
 * counted in arrays by series.
 */
export class TalliedHistogram<N extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly bounds: readonly number[];
  private readonly series: SeriesIndex<N, HistogramSeries<N>>;

  constructor(config: {
    name: string;
    help: string;
    labelNames: readonly N[];
    buckets: readonly number[];
    registry: Registry;
  }) {
    // prom-client's own checks of the name and the label names (`le` is reserved), on a
    // histogram registered nowhere.
    new Histogram({
      name: config.name,
      help: config.help,
      labelNames: config.labelNames,
      buckets: [...config.buckets],
      registers: [],
    });
    this.name = config.name;
    this.help = config.help;
    this.bounds = [...config.buckets];
    const buckets = this.bounds.length;
    this.series = new SeriesIndex(config.labelNames, (labels) => ({
      labels,
      counts: new Float64Array(buckets),
      sum: 0,
      count: 0,
    }));
    // The registry takes any metric with prom-client's `get` and `reset`.
    config.registry.registerMetric(this as unknown as Histogram<N>);
  }

  /** Counts `value` in the series of `values`, given in the labels' order. */
  observe(values: readonly string[], value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`A histogram cannot count ${String(value)}`);
    const series = this.series.get(values);
    const { bounds } = this;
    for (let index = 0; index < bounds.length; index += 1) {
      if (value <= bounds[index]!) {
        series.counts[index]! += 1;
        break;
      }
    }
    series.sum += value;
    series.count += 1;
  }

  /** What prom-client's registry formats: per series, each bucket (cumulative), +Inf, sum, count. */
  get(): Promise<HistogramObject<N>> {
    const values: MetricValueWithName<N | 'le'>[] = [];
    const bucketName = `${this.name}_bucket`;
    // Without a prototype, as every label set here (label-set.ts); `le` first, as prom-client.
    const line = (
      labels: LabelValues<N>,
      metricName: string,
      value: number,
      le?: number | string,
    ) =>
      values.push({
        metricName,
        value,
        labels: Object.assign(
          Object.create(null) as LabelValues<N | 'le'>,
          le === undefined ? undefined : { le },
          labels,
        ),
      });
    for (const series of this.series.all) {
      let cumulative = 0;
      this.bounds.forEach((bound, index) => {
        cumulative += series.counts[index]!;
        line(series.labels, bucketName, cumulative, bound);
      });
      line(series.labels, bucketName, series.count, '+Inf');
      line(series.labels, `${this.name}_sum`, series.sum);
      line(series.labels, `${this.name}_count`, series.count);
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: this.aggregator,
    });
  }

  reset(): void {
    this.series.clear();
  }
}
