// One structured log line per finished request (method, path, status, duration, key id).
import type { FastifyInstance } from 'fastify';

export function installRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        path: request.url.split('?')[0],
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 100) / 100,
        key_id: request.principal?.keyId,
      },
      'request completed',
    );
    done();
  });
}
