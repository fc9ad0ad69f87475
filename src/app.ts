// buildApp(services): the HTTP application with every route, hook and error mapping; never listens.
import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import { AppError } from './errors/app-error.js';
import { installAccessControl } from './http/access-control.js';
import { sendError } from './http/error-handler.js';
import { docsPrefix, registerOpenApi } from './http/openapi.js';
import { RouteRegistry } from './http/route-registry.js';
import { accountRoutes } from './http/routes/accounts.routes.js';
import { apiKeyRoutes } from './http/routes/api-keys.routes.js';
import { featureRoutes } from './http/routes/features.routes.js';
import { healthRoutes } from './http/routes/health.routes.js';
import { ErrorBodySchema } from './http/schemas/common.js';
import type { App } from './http/types.js';
import { createValidatorCompiler } from './http/validation.js';
import type { Services } from './services.js';

const incomingRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

export async function buildApp(services: Services, logger: FastifyBaseLogger): Promise<App> {
  const { config } = services;
  const registry = new RouteRegistry();
  const app = Fastify({
    loggerInstance: logger,
    // One line per request is written by the onResponse hook below, not Fastify's two.
    logController: new LogController({
      disableRequestLogging: true,
      requestIdLogLabel: 'request_id',
    }),
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && incomingRequestId.test(incoming)
        ? incoming
        : `req_${randomUUID().replaceAll('-', '')}`;
    },
    bodyLimit: config.server.bodyLimitBytes,
    trustProxy: config.server.trustProxy.length > 0 ? [...config.server.trustProxy] : false,
    // Requests already on open connections are finished during shutdown rather than refused with
    // a body outside the contract.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON is the only body this API takes; anything else is a 415, not a string to validate.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(createValidatorCompiler());
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error as Error));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = registry.allowedMethods(path);
    if (allowed.length > 0) {
      void reply.header('allow', allowed.join(', '));
      return sendError(
        request,
        reply,
        new AppError(
          'method_not_allowed',
          `${request.method} is not allowed on ${path}. Allowed: ${allowed.join(', ')}.`,
        ),
      );
    }
    return sendError(
      request,
      reply,
      new AppError('not_found', `No route ${request.method} ${path}.`),
    );
  });
  app.addSchema(ErrorBodySchema);

  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
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

  installAccessControl(app, {
    authenticator: services.authenticator,
    rateLimiter: services.rateLimiter,
    registry,
    publicPrefixes: [docsPrefix],
  });
  await registerOpenApi(app, config);

  healthRoutes(app, services);
  featureRoutes(app, services);
  apiKeyRoutes(app, services);
  accountRoutes(app, services);

  await app.ready();
  return app;
}
