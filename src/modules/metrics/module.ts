// The metrics module, wired: the service's Prometheus registry (which the HTTP layer, the models,
// the sockets and the job queue record into) and its HTTP plugin for app.ts to register. The
// separate METRICS_PORT server and the HTTP hook stay in src/http/ (metrics-server.ts, metrics.ts).
import type { AppConfig } from '../../config/config.js';
import type { FeaturePlugin } from '../../http/feature-plugin.js';
import { metricsPlugin } from './metrics.routes.js';
import { PlatformMetrics } from './metrics.js';

export interface MetricsModuleDependencies {
  /** Whether GET /metrics is served on the API's port (METRICS_PORT unset) or on its own. */
  readonly config: Pick<AppConfig, 'metrics'>;
}

export interface MetricsModule {
  readonly metrics: PlatformMetrics;
  /** GET /metrics on the API's port; declares nothing when METRICS_PORT is set. */
  readonly plugin: FeaturePlugin;
}

export function createMetricsModule(dependencies: MetricsModuleDependencies): MetricsModule {
  const metrics = new PlatformMetrics();
  // The registry holds no connection or timer to end: it lives as long as the process.
  return {
    metrics,
    plugin: metricsPlugin(metrics, dependencies.config),
  };
}
