// The baseline for the auth benchmark: a bare Fastify route answering the same JSON, without keys,
// scopes or rate limits. With `--logged` it logs exactly as the service does (same logger, same
// one line per request), so that the two can be compared with and without request logging.
import Fastify, { LogController, type FastifyServerOptions } from 'fastify';
import { createLogger } from '../src/logger.js';
import { installRequestLog } from '../src/http/request-log.js';
import { FeaturesResponseSchema } from '../src/modules/health/health.schemas.js';

const port = Number(process.argv[2] ?? 0);
const payload = JSON.parse(process.argv[3] ?? '{}') as unknown;
const logged = process.argv.includes('--logged');

const options: FastifyServerOptions = logged
  ? {
      loggerInstance: createLogger('bare', 'info'),
      logController: new LogController({
        disableRequestLogging: true,
        requestIdLogLabel: 'request_id',
      }),
    }
  : { logger: false };
const app = Fastify(options);
if (logged) installRequestLog(app);
// The service's own response schema, so that both serialise through the same compiled schema and
// serve the same body (a hand-copied schema fell behind when `reason` was added).
app.get('/v1/features', { schema: { response: { 200: FeaturesResponseSchema } } }, () => payload);
await app.listen({ host: '127.0.0.1', port });
