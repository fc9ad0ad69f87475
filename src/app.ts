// buildApp(services): the HTTP application with every route, hook and error mapping; never listens.
import { randomUUID } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import fastifyCors from '@fastify/cors';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Server } from 'node:http';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyHttpOptions,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { AppConfig } from './config/config.js';
import { AppError } from './errors/app-error.js';
import { installAccessControl } from './http/access-control.js';
import { auditTrailOf, installAuditTrail } from './http/audit-trail.js';
import { sendError, writeClientError } from './http/error-handler.js';
import { docsPrefix, registerOpenApi } from './http/openapi.js';
import { installInputSafety } from './http/input-safety.js';
import { installHttpMetrics } from './http/metrics.js';
import { installRequestLog } from './http/request-log.js';
import { installServerSpans } from './http/server-spans.js';
import { RouteRegistry } from './http/route-registry.js';
import { ErrorBodySchema } from './http/schemas/common.js';
import type { App } from './http/types.js';
import {
  lazySerializerFactory,
  strictValidatorFactory,
  trackPendingSchemas,
  type PendingSchemas,
} from './http/validation.js';
import { webApp as dashboard, type WebApp } from './http/web-app.js';
import { httpPlugins, type Services } from './service-container.js';

const incomingRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

export async function buildApp(services: Services, logger: FastifyBaseLogger): Promise<App> {
  const { config } = services;
  const registry = new RouteRegistry();
  const pendingSchemas: PendingSchemas = new Set();
  const app = Fastify(
    serverOptions(config, logger, pendingSchemas),
  ).withTypeProvider<TypeBoxTypeProvider>();

  // JSON is the only body this API takes; anything else is a 415, not a string to validate.
  app.removeContentTypeParser('text/plain');
  installInputSafety(app, { parseLarge: (text) => services.text.json(text) });
  trackPendingSchemas(app, pendingSchemas);
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error as Error));
  const webApp = dashboard(config.webApp.directory);
  app.setNotFoundHandler((request, reply) => notFound(request, reply, registry, webApp));
  app.addSchema(ErrorBodySchema);

  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  installServerSpans(app);
  installRequestLog(app, config.server.requestLogSample);
  installHttpMetrics(app, services.metrics);
  closeAnsweredUpgrades(app);

  // Both add onRequest hooks that must run before access control: cookies are parsed, and CORS
  // preflights are answered (and error responses carry CORS headers) before any key is asked for.
  await app.register(fastifyCookie);
  await registerCors(app, config.server.corsOrigins);

  installAccessControl(app, {
    features: config.features,
    authenticator: services.authenticator,
    rateLimiter: services.rateLimiter,
    sessions: services.sessions,
    corsOrigins: config.server.corsOrigins,
    publicOrigin: config.server.publicOrigin,
    registry,
    publicPrefixes: [docsPrefix],
  });
  // Administrative changes leave their audit records (every module's routes, from the root).
  installAuditTrail(app, auditTrailOf(services));
  await registerOpenApi(app, config);

  // The feature modules' routes, each module in its own encapsulated context under the hooks above,
  // in the order the OpenAPI document lists them.
  for (const plugin of httpPlugins(services.modules, webApp.plugin)) await app.register(plugin);

  await app.ready();
  return app;
}

/** Fastify's options: request ids, limits, timeouts, and the contract's body for its own errors. */
function serverOptions(
  config: AppConfig,
  logger: FastifyBaseLogger,
  pendingSchemas: PendingSchemas,
): FastifyHttpOptions<Server, FastifyBaseLogger> {
  return {
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
    // The strict validator and the serializers (built on a route's first use) of every context,
    // each module's included (src/http/validation.ts).
    schemaController: {
      compilersFactory: {
        buildValidator: strictValidatorFactory(pendingSchemas),
        buildSerializer: lazySerializerFactory(pendingSchemas),
      },
    },
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
    // A client that sends its request slowly (one byte every few seconds) holds a connection
    // and a parser; it is cut off with 408 once the whole request took longer than this.
    requestTimeout: config.server.requestTimeoutMs,
    keepAliveTimeout: config.server.keepAliveTimeoutMs,
    http: {
      headersTimeout: config.server.headersTimeoutMs,
      // Node checks the timeouts above on this period (30 s by default, too coarse for them).
      connectionsCheckingInterval: Math.min(1000, config.server.headersTimeoutMs / 2),
    },
    clientErrorHandler: writeClientError,
    // Requests already on open connections are finished during shutdown rather than refused with
    // a body outside the contract.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
  };
}

/** An unknown path: a page of the dashboard, a 405 for a path that takes other methods, or a 404. */
function notFound(
  request: FastifyRequest,
  reply: FastifyReply,
  registry: RouteRegistry,
  webApp: WebApp,
) {
  // The dashboard's own routes (/keys, /pipelines/pipe_…) are pages of the app, not API paths.
  if (webApp.isAppRoute(request)) return webApp.sendIndex(request, reply);
  const path = request.url.split('?')[0] ?? '/';
  const allowed = registry.allowedMethods(path);
  // A route that takes this method and found nothing (a static file) is a 404, not a 405.
  if (allowed.length > 0 && !allowed.includes(request.method)) {
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
}

/**
 * A WebSocket upgrade that any route answers over HTTP (an unknown path, a refused key, a full
 * connection cap, a path that is not a WebSocket) leaves its socket with nobody reading it, which
 * would keep the server from ever closing: the answer was the last thing it carries. (An accepted
 * upgrade is hijacked by the WebSocket plugin and never gets here while open.)
 */
function closeAnsweredUpgrades(app: App): void {
  app.addHook('onResponse', (request, _reply, done) => {
    // Node's parser sets `upgrade` on a request that came by the server's 'upgrade' event.
    if ((request.raw as { upgrade?: boolean }).upgrade === true) request.raw.socket.destroy();
    done();
  });
}

/**
 * CORS for the configured browser origins, with credentials and the contract's headers exposed.
 * With none configured (the default) no origin can be allowed, and nothing is registered: the
 * plugin would still run on every request (copying its options, adding `Vary: Origin` to answers
 * that do not vary by origin) to send no header. A preflight then gets the 405 of a method its
 * path does not take, where the plugin answered 404: a refusal either way.
 */
async function registerCors(app: App, origins: readonly string[]): Promise<void> {
  if (origins.length === 0) return;
  const corsOrigins = new Set(origins);
  await app.register(fastifyCors, {
    origin: (origin, callback) => callback(null, origin !== undefined && corsOrigins.has(origin)),
    credentials: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    // Mcp-Protocol-Version: what a browser's MCP client sends to POST /mcp after the handshake.
    allowedHeaders: [
      'Authorization',
      'X-API-Key',
      'Content-Type',
      'X-CSRF-Token',
      'X-Request-Id',
      'Mcp-Protocol-Version',
    ],
    exposedHeaders: [
      'X-Request-Id',
      'RateLimit',
      'RateLimit-Policy',
      'Retry-After',
      'x-ratelimit-limit-requests',
      'x-ratelimit-remaining-requests',
      'x-ratelimit-reset-requests',
    ],
    maxAge: 600,
  });
}
