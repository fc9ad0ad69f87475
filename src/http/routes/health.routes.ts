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
      const database = await services.storage
        .ping(1500)
        .then(() => 'ok' as const)
        .catch(() => 'unavailable' as const);
      let redis: 'ok' | 'unavailable' | 'not_configured' = 'not_configured';
      if (services.redis !== null) {
        redis = await services.redis
          .ping()
          .then(() => 'ok' as const)
          .catch(() => 'unavailable' as const);
      }
      const healthy = database === 'ok' && redis !== 'unavailable';
      return reply.code(healthy ? 200 : 503).send({
        status: healthy ? 'ok' : 'degraded',
        service: services.config.serviceName,
        version: services.config.version,
        checks: { database, redis },
      });
    },
  );
}
