// GET /metrics: the Prometheus exposition text. On the API's port it needs an admin key of the
// platform owner's account (the figures cover every account); with METRICS_PORT set it is served
// there instead, without a key (see src/http/metrics-server.ts), and this route is not registered.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import type { AppConfig } from '../../config/config.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import type { PlatformMetrics } from './metrics.js';

/** The metrics route, registered by app.ts like any Fastify plugin; empty with METRICS_PORT. */
export function metricsPlugin(
  metrics: PlatformMetrics,
  config: Pick<AppConfig, 'metrics'>,
): FeaturePlugin {
  return featurePlugin('metrics', (app) => {
    if (config.metrics.port !== null) return;
    app.get(
      '/metrics',
      {
        config: { access: access.owner() },
        schema: {
          operationId: 'getMetrics',
          tags: ['Health'],
          summary: 'Prometheus metrics',
          description:
            "The service's metrics in the Prometheus text format (0.0.4): HTTP requests by route and status with latency histograms, model latency, tokens and errors by model, the usage ledger's cost and tokens by account and model, rate-limit refusals, WebSocket sessions, background jobs, and Node's own (event-loop lag, heap, CPU). Needs an admin key of the platform owner's account; when METRICS_PORT is set, it is served on that port without a key instead, and not here.",
          response: {
            200: {
              description: 'The metrics, one sample per line.',
              content: { 'text/plain': { schema: Type.String() } },
            },
          },
        },
      },
      async (_request, reply) => {
        const text = await metrics.text();
        return reply.type(metrics.contentType).send(text);
      },
    );
  });
}
