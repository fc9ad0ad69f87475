// GET /v1/health: liveness and database reachability, no key needed.
import { access } from '../../auth/scopes.js';
import type { AppConfig } from '../../config/config.js';
import type { HealthService } from './health-service.js';
import { HealthSchema } from './health.schemas.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';

export type HealthPlugin = FeaturePlugin;

/** The health check's route, registered by app.ts like any Fastify plugin. */
export function healthPlugin(
  health: HealthService,
  config: Pick<AppConfig, 'serviceName' | 'version'>,
): HealthPlugin {
  return featurePlugin('health', (app) => {
    app.get(
      '/v1/health',
      {
        config: { access: access.public() },
        schema: {
          operationId: 'getHealth',
          tags: ['Health'],
          summary: 'Health check',
          description:
            "Answers 200 with status 'ok', or 503 with status 'degraded' when the database (or Redis, when configured) does not answer.",
          response: { 200: HealthSchema, 503: HealthSchema },
        },
      },
      async (_request, reply) => {
        const report = await health.check();
        return reply.code(report.healthy ? 200 : 503).send({
          status: report.healthy ? 'ok' : 'degraded',
          service: config.serviceName,
          version: config.version,
          checks: report.checks,
        });
      },
    );
  });
}
