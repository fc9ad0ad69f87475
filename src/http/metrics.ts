// Metrics of the HTTP layer: each answered request is counted by route pattern and status, with
// its duration (Fastify's own measure, from the request's arrival to the response's end).
import type { FastifyInstance } from 'fastify';
import type { PlatformMetrics } from '../modules/metrics/metrics.js';

export function installHttpMetrics(app: FastifyInstance, metrics: PlatformMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.httpRequest({
      method: request.method,
      // The pattern (`/v1/agents/:agent_id`), never the URL; undefined when no route matched.
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
    done();
  });
}
