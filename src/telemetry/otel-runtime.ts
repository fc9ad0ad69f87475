// The OpenTelemetry SDK, started only when an OTLP endpoint is configured (see
// config/telemetry-config.ts): the official Node SDK, loaded on first start, reads the standard
// variables itself (protocol, headers, sampler, metric interval) and registers the W3C trace-context
// propagator and the async-context manager. Traces and metrics are process-wide by OpenTelemetry's
// design, so the started SDK is too: `telemetry()` is null while none runs, and every instrumented
// path checks that and nothing else.
import type * as Api from '@opentelemetry/api';
import type { NodeSDK } from '@opentelemetry/sdk-node';
import type { Logger } from 'pino';
import type { TelemetrySettings } from '../config/config.js';

/** The GenAI semantic conventions' metrics (bucket boundaries as the conventions advise). */
export interface GenAiInstruments {
  readonly tokenUsage: Api.Histogram;
  readonly operationDuration: Api.Histogram;
  readonly timeToFirstToken: Api.Histogram;
  readonly timePerOutputToken: Api.Histogram;
}

export interface TelemetryRuntime {
  readonly api: typeof Api;
  readonly tracer: Api.Tracer;
  readonly instruments: GenAiInstruments;
  /** Prompts and answers are put on spans (the operator opted in). */
  readonly captureMessageContent: boolean;
}

let runtime: TelemetryRuntime | null = null;
let sdk: NodeSDK | null = null;
/** Services of this process that started it (tests build several): the last one stops it. */
let users = 0;

/** The running telemetry, or null when none is configured (then nothing is traced). */
export function telemetry(): TelemetryRuntime | null {
  return runtime;
}

/** Each GenAI histogram: its name, description, unit and the conventions' bucket boundaries. */
const histograms: Record<keyof GenAiInstruments, [string, string, string, number[]]> = {
  tokenUsage: [
    'gen_ai.client.token.usage',
    'Number of input and output tokens used',
    '{token}',
    [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  ],
  operationDuration: [
    'gen_ai.client.operation.duration',
    'GenAI operation duration',
    's',
    [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
  ],
  timeToFirstToken: [
    'gen_ai.server.time_to_first_token',
    'Time to generate first token for successful responses',
    's',
    [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0],
  ],
  timePerOutputToken: [
    'gen_ai.server.time_per_output_token',
    'Time per output token generated after the first token for successful responses',
    's',
    [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5],
  ],
};

function instrumentsOf(meter: Api.Meter): GenAiInstruments {
  const histogram = ([name, description, unit, boundaries]: [string, string, string, number[]]) =>
    meter.createHistogram(name, {
      description,
      unit,
      advice: { explicitBucketBoundaries: boundaries },
    });
  return {
    tokenUsage: histogram(histograms.tokenUsage),
    operationDuration: histogram(histograms.operationDuration),
    timeToFirstToken: histogram(histograms.timeToFirstToken),
    timePerOutputToken: histogram(histograms.timePerOutputToken),
  };
}

/**
 * Starts the SDK when `settings` enable it (once per process; later callers share it) and returns
 * what stops it again: the last stop flushes what is pending and shuts the exporters down.
 */
export async function startTelemetry(
  settings: TelemetrySettings,
  logger: Logger,
): Promise<() => Promise<void>> {
  if (!settings.enabled) return async () => {};
  users += 1;
  if (sdk === null) {
    const [api, { NodeSDK }] = await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/sdk-node'),
    ]);
    // The SDK's own warnings and errors (an unreachable collector, a refused export) go to the
    // service's log; its chatter below that does not.
    const warn = (message: string, ...args: unknown[]) =>
      logger.warn(args.length === 0 ? {} : { args }, `OpenTelemetry: ${message}`);
    api.diag.setLogger(
      {
        error: warn,
        warn,
        info: () => {},
        debug: () => {},
        verbose: () => {},
      },
      api.DiagLogLevel.WARN,
    );
    // No automatic instrumentation: the spans are the service's own (GenAI conventions), and
    // patching modules at load time is what costs a hot path when nothing asked for it.
    const started = new NodeSDK({ serviceName: settings.serviceName, instrumentations: [] });
    started.start();
    sdk = started;
    runtime = {
      api,
      tracer: api.trace.getTracer('conversational-ai-platform'),
      instruments: instrumentsOf(api.metrics.getMeter('conversational-ai-platform')),
      captureMessageContent: settings.captureMessageContent,
    };
    logger.info({ serviceName: settings.serviceName }, 'OpenTelemetry traces and metrics on');
  }
  let stopped = false;
  return async () => {
    if (stopped) return;
    stopped = true;
    users -= 1;
    if (users > 0 || sdk === null) return;
    const stopping = sdk;
    const { api } = runtime!;
    runtime = null;
    sdk = null;
    try {
      await stopping.shutdown();
    } catch (error) {
      logger.warn({ err: error }, 'OpenTelemetry did not shut down cleanly');
    } finally {
      // A later start (a test's next service) registers afresh.
      api.trace.disable();
      api.metrics.disable();
      api.propagation.disable();
      api.context.disable();
    }
  };
}

/** Ends what is pending now (tests read the receiver after it). */
export async function flushTelemetry(): Promise<void> {
  if (sdk === null || runtime === null) return;
  type Flushable = { forceFlush?: () => Promise<void> };
  const { api } = runtime;
  // The API's global tracer provider is a proxy of the SDK's, which is the one that flushes.
  const proxy = api.trace.getTracerProvider() as Flushable & { getDelegate?: () => Flushable };
  await (proxy.getDelegate?.() ?? proxy).forceFlush?.();
  await (api.metrics.getMeterProvider() as Flushable).forceFlush?.();
}
