// buildApp(services): the HTTP application with every route, hook and error mapping; never listens.
import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import { AppError } from './errors/app-error.js';
import { installAccessControl } from './http/access-control.js';
import { sendError } from './http/error-handler.js';
import { docsPrefix, registerOpenApi } from './http/openapi.js';
import { installRequestLog } from './http/request-log.js';
import { RouteRegistry } from './http/route-registry.js';
import { accountRoutes } from './http/routes/accounts.routes.js';
import { agentRoutes } from './http/routes/agents.routes.js';
import { apiKeyRoutes } from './http/routes/api-keys.routes.js';
import { chatRoutes } from './http/routes/chat.routes.js';
import { completionRoutes } from './http/routes/completions.routes.js';
import { conversationRoutes } from './http/routes/conversations.routes.js';
import { embeddingRoutes } from './http/routes/embeddings.routes.js';
import { feedbackRoutes } from './http/routes/feedback.routes.js';
import { featureRoutes } from './http/routes/features.routes.js';
import { healthRoutes } from './http/routes/health.routes.js';
import { knowledgeRoutes } from './http/routes/knowledge.routes.js';
import { modelRoutes } from './http/routes/models.routes.js';
import { pipelineRoutes } from './http/routes/pipelines.routes.js';
import { templateRoutes } from './http/routes/templates.routes.js';
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
    // Path parameters are ids (~30 characters) and model names (≤ 128); longer ones cannot exist.
    routerOptions: { maxParamLength: 256 },
    // Errors Fastify raises before routing (a malformed URL, an over-long parameter) get the
    // contract's error body like every other.
    frameworkErrors: (error, request, reply) => {
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      void sendError(
        request,
        reply,
        new AppError(
          tooLong ? 'not_found' : 'invalid_parameter',
          tooLong
            ? `No route ${request.method} ${request.url.split('?')[0] ?? ''}: a path parameter is longer than any id.`
            : 'The request URL is malformed (invalid percent-encoding).',
        ),
      );
    },
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
  installRequestLog(app);

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
  modelRoutes(app, services);
  templateRoutes(app, services);
  chatRoutes(app, services);
  completionRoutes(app, services);
  embeddingRoutes(app, services);
  conversationRoutes(app, services);
  feedbackRoutes(app, services);
  knowledgeRoutes(app, services);
  agentRoutes(app, services);
  pipelineRoutes(app, services);

  await app.ready();
  return app;
}
