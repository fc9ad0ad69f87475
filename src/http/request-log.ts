// One structured log line per finished request (method, path, status, duration, key id; the
// request id comes from the request's logger). Failed requests (status 400 and up) are always
// logged; successful ones are sampled at `sample` (REQUEST_LOG_SAMPLE, 1: all), since at gateway
// rates the line's serialisation and write cost a noticeable share of the request's CPU.
import type { FastifyInstance } from 'fastify';

export function installRequestLog(app: FastifyInstance, sample = 1): void {
  app.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    if (status < 400 && (sample <= 0 || (sample < 1 && Math.random() >= sample))) {
      done();
      return;
    }
    const url = request.url;
    const query = url.indexOf('?');
    request.log.info(
      {
        method: request.method,
        path: query === -1 ? url : url.slice(0, query),
        status,
        duration_ms: Math.round(reply.elapsedTime * 100) / 100,
        key_id: request.principal?.keyId,
      },
      'request completed',
    );
    done();
  });
}
