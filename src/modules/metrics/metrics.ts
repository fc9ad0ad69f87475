// The service's Prometheus metrics (prom-client), one registry per service instance. HTTP
// requests, model calls, rate-limit refusals, WebSocket sessions and background jobs are recorded
// through the methods below; Node's own (event-loop lag, heap, CPU, handles) come from
// prom-client's default metrics. Every label takes values from a bounded set: route patterns,
// catalog model names, outcome words, never a raw URL, id or user text. Label names are this
// file's own: every label set is an object without a prototype (prom-client walks label sets with
// `for … in`, which would otherwise also see any key added to Object.prototype), and a failure to
// record is reported as a warning, never thrown into the request, stream or timer that recorded.
import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type LabelValues,
} from 'prom-client';
import type { ModelCallObserver, ModelCallRecord } from '../../models/model-call-observer.js';
import type { UsageObserver } from '../usage/ledger-meter.js';
import type { UsageRecord } from '../usage/usage-records.repository.js';
import { labelSet } from './label-set.js';
import { TalliedCounter, TalliedHistogram } from './tallies.js';
import { UsageCounters } from './usage-counters.js';

/** Seconds: from a cached answer (~1 ms) to a long generation (2 min). */
const latencyBuckets = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120,
];

const httpMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** How a background job ended (a job queue reports each one). */
export type JobOutcome = 'completed' | 'failed' | 'retried' | 'stalled' | 'cancelled';

/** The WebSocket endpoints: `/v1/voice/stream/{id}` and the general `/v1/ws`. */
export type WebSocketChannel = 'voice' | 'realtime';

export interface HttpRequestRecord {
  readonly method: string;
  /** The route's pattern (`/v1/agents/:agent_id`); null when no route matched. */
  readonly route: string | null;
  readonly status: number;
  readonly seconds: number;
}

let warned = false;

/** Runs one recording; a failure is reported once per process and not thrown. */
function record(what: () => void): void {
  try {
    what();
  } catch (error) {
    if (warned) return;
    warned = true;
    process.emitWarning(
      `A metric could not be recorded (later failures are not reported): ${String(error)}`,
      'MetricsWarning',
    );
  }
}

/**
 * prom-client records each garbage collection from a PerformanceObserver with an ordinary object
 * literal as the label set: with an extra key on Object.prototype its label check throws there,
 * outside any request, and the process exits. Its histogram records through the guarded path
 * instead (a label set without a prototype, a failure reported, never thrown).
 */
function guardGcHistogram(registry: Registry): void {
  const gc = registry.getSingleMetric('nodejs_gc_duration_seconds');
  if (!(gc instanceof Histogram)) return;
  const observe = gc.observe.bind(gc) as (labels: LabelValues<string>, value: number) => void;
  const guarded = (labels: LabelValues<string> | number, value?: number): void => {
    record(() => {
      if (typeof labels === 'number') throw new TypeError('a GC duration without its kind');
      observe(
        labelSet({ kind: String(Object.hasOwn(labels, 'kind') ? labels.kind : 'unknown') }),
        value ?? 0,
      );
    });
  };
  Object.defineProperty(gc, 'observe', { value: guarded });
}

/** How often the event loop's delay is sampled (`nodejs_eventloop_lag_*`), in ms. */
const eventLoopSampleMs = 100;

export class PlatformMetrics implements ModelCallObserver, UsageObserver {
  readonly registry = new Registry();

  private readonly httpRequests = new TalliedCounter({
    name: 'platform_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registry: this.registry,
  });

  private readonly httpDuration = new TalliedHistogram({
    name: 'platform_http_request_duration_seconds',
    help: 'Time from receiving a request to the end of its response, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: latencyBuckets,
    registry: this.registry,
  });

  private readonly rateLimitRefusals = new Counter({
    name: 'platform_rate_limit_refusals_total',
    help: 'Requests refused with 429 rate_limit_exceeded, by route pattern.',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  private readonly upstreamDuration = new TalliedHistogram({
    name: 'platform_upstream_request_duration_seconds',
    help: 'Time of one call to a model (retries included; streams until their last part), by catalog model name, kind and outcome.',
    labelNames: ['model', 'kind', 'outcome'] as const,
    buckets: latencyBuckets,
    registry: this.registry,
  });

  private readonly upstreamTokens = new TalliedCounter({
    name: 'platform_upstream_tokens_total',
    help: 'Tokens metered by models, by catalog model name and type (prompt or completion).',
    labelNames: ['model', 'type'] as const,
    registry: this.registry,
  });

  private readonly upstreamErrors = new Counter({
    name: 'platform_upstream_errors_total',
    help: 'Model calls that failed, by catalog model name and error code.',
    labelNames: ['model', 'code'] as const,
    registers: [this.registry],
  });

  private readonly webSocketSessions = new Gauge({
    name: 'platform_websocket_sessions',
    help: 'WebSocket connections open now, by channel (voice, realtime).',
    labelNames: ['channel'] as const,
    registers: [this.registry],
  });

  private readonly webSocketAccepted = new Counter({
    name: 'platform_websocket_sessions_total',
    help: 'WebSocket connections accepted since start, by channel (voice, realtime).',
    labelNames: ['channel'] as const,
    registers: [this.registry],
  });

  private readonly jobsWaiting = new Gauge({
    name: 'platform_jobs_waiting',
    help: 'Background jobs waiting to run, by queue.',
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });

  private readonly jobsActive = new Gauge({
    name: 'platform_jobs_active',
    help: 'Background jobs running now, by queue.',
    labelNames: ['queue'] as const,
    registers: [this.registry],
  });

  private readonly jobs = new Counter({
    name: 'platform_jobs_total',
    help: 'Background jobs that ended, by queue and outcome (completed, failed, retried, stalled, cancelled).',
    labelNames: ['queue', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly jobDuration = new Histogram({
    name: 'platform_job_duration_seconds',
    help: 'Run time of background jobs, by queue and outcome.',
    labelNames: ['queue', 'outcome'] as const,
    buckets: [0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers: [this.registry],
  });

  private readonly budgetWarnings = new Counter({
    name: 'platform_budget_soft_limit_warnings_total',
    help: 'Model calls that took a budget past its soft limit (answered with X-Budget-Warning), by budget scope.',
    labelNames: ['scope'] as const,
    registers: [this.registry],
  });

  private readonly budgetRefusals = new Counter({
    name: 'platform_budget_refusals_total',
    help: 'Model calls refused with 429 budget_exceeded before any upstream call, by budget scope.',
    labelNames: ['scope'] as const,
    registers: [this.registry],
  });

  private readonly usage = new UsageCounters(this.registry, record);

  constructor(options: { defaultMetrics?: boolean } = {}) {
    // process_*, nodejs_eventloop_lag_*, nodejs_heap_*, nodejs_gc_duration_seconds, …
    if (options.defaultMetrics !== false) {
      // Label sets without a prototype (see labelSet): prom-client passes this one to the
      // collectors that record from timers (event-loop lag) and at each scrape. The event loop's
      // delay is sampled every 100 ms, not prom-client's 10: each sample wakes an idle process,
      // 100 a second cost it 5-7 ms of CPU a second (bench/results/memory.md), and a block of
      // the loop still shows in the next sample's delay.
      collectDefaultMetrics({
        register: this.registry,
        labels: Object.create(null) as object,
        eventLoopMonitoringPrecision: eventLoopSampleMs,
      });
      guardGcHistogram(this.registry);
    }
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text Prometheus scrapes. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  httpRequest(request: HttpRequestRecord): void {
    record(() => {
      // Unmatched paths are anyone's choice of URL: one label value for all of them.
      const route = request.route ?? 'unmatched';
      const values = [
        httpMethods.has(request.method) ? request.method : 'other',
        route,
        String(request.status),
      ];
      this.httpRequests.inc(values);
      this.httpDuration.observe(values, request.seconds);
      if (request.status === 429) this.rateLimitRefusals.inc(labelSet({ route }));
    });
  }

  modelCall(call: ModelCallRecord): void {
    record(() => {
      const { model } = call;
      this.upstreamDuration.observe([model, call.kind, call.outcome], call.seconds);
      if (call.usage !== undefined) {
        if (call.usage.promptTokens > 0) {
          this.upstreamTokens.inc([model, 'prompt'], call.usage.promptTokens);
        }
        if (call.usage.completionTokens > 0) {
          this.upstreamTokens.inc([model, 'completion'], call.usage.completionTokens);
        }
      }
      if (call.outcome === 'error') {
        this.upstreamErrors.inc(labelSet({ model, code: call.errorCode ?? 'internal_error' }));
      }
    });
  }

  /** A model call's ledger record: its cost and tokens, by account and model. */
  usageRecorded(usage: UsageRecord): void {
    this.usage.recorded(usage);
  }

  /** A WebSocket connection was accepted; call the returned function once when it closes. */
  webSocketOpened(channel: WebSocketChannel): () => void {
    record(() => {
      this.webSocketAccepted.inc(labelSet({ channel }));
      this.webSocketSessions.inc(labelSet({ channel }));
    });
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      record(() => this.webSocketSessions.dec(labelSet({ channel })));
    };
  }

  /** For a job queue: how many jobs wait and run now (set on every change, or on each scrape). */
  setJobCounts(queue: string, counts: { waiting: number; active: number }): void {
    record(() => {
      this.jobsWaiting.set(labelSet({ queue }), counts.waiting);
      this.jobsActive.set(labelSet({ queue }), counts.active);
    });
  }

  /** For a job queue: one job ended, after `seconds` of running. */
  jobEnded(queue: string, outcome: JobOutcome, seconds: number): void {
    record(() => {
      this.jobs.inc(labelSet({ queue, outcome }));
      this.jobDuration.observe(labelSet({ queue, outcome }), seconds);
    });
  }

  /** A model call took a budget of `scope` (account, key, user) past its soft limit. */
  softLimitCrossed(scope: string): void {
    record(() => this.budgetWarnings.inc(labelSet({ scope })));
  }

  /** A model call was refused by a budget of `scope`. */
  budgetRefused(scope: string): void {
    record(() => this.budgetRefusals.inc(labelSet({ scope })));
  }
}
