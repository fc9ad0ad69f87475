// GET /v1/health: liveness and database reachability, no key needed.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import type { Services } from '../../services.js';
import type { App } from '../types.js';

const HealthSchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  service: Type.String(),
  version: Type.String(),
  checks: Type.Object({
    database: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
    redis: Type.Union([
      Type.Literal('ok'),
      Type.Literal('unavailable'),
      Type.Literal('not_configured'),
    ]),
  }),
});

export function healthRoutes(app: App, services: Services): void {
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
      const report = await services.health.check();
      return reply.code(report.healthy ? 200 : 503).send({
        status: report.healthy ? 'ok' : 'degraded',
        service: services.config.serviceName,
        version: services.config.version,
        checks: report.checks,
      });
    },
  );
}
