// A SERVER span per HTTP request when telemetry runs (OpenTelemetry's HTTP conventions): a
// client's `traceparent` is continued, the route's handler runs inside the span (so the model calls,
// tools and runs it starts are its children), and it ends when the answer is sent or the client
// leaves — streams included. Without telemetry no hook is installed.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type * as Api from '@opentelemetry/api';
import { telemetry, type TelemetryRuntime } from '../telemetry/otel-runtime.js';
import type { App } from './types.js';

const spanOf = new WeakMap<FastifyRequest, { span: Api.Span; context: Api.Context }>();

function start(rt: TelemetryRuntime, request: FastifyRequest, reply: FastifyReply): void {
  const { api } = rt;
  const parent = api.propagation.extract(api.ROOT_CONTEXT, request.headers);
  const route = request.routeOptions.url;
  const span = rt.tracer.startSpan(
    route === undefined ? request.method : `${request.method} ${route}`,
    {
      kind: api.SpanKind.SERVER,
      attributes: {
        'http.request.method': request.method,
        'url.path': request.url.split('?', 1)[0]!,
        'url.scheme': request.protocol,
        'client.address': request.ip,
        ...(route === undefined ? {} : { 'http.route': route }),
      },
    },
    parent,
  );
  spanOf.set(request, { span, context: api.trace.setSpan(parent, span) });
  // 'close' comes for every answer: sent whole, streamed to the end, or cut by the client.
  reply.raw.once('close', () => {
    const status = reply.raw.statusCode;
    const { principal } = request;
    if (principal !== null) {
      span.setAttributes({
        'platform.account.id': principal.accountId,
        'platform.api_key.id': principal.keyId,
      });
    }
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) {
      span.setAttribute('error.type', String(status));
      span.setStatus({ code: api.SpanStatusCode.ERROR });
    }
    span.end();
  });
}

/** Installs the request spans when telemetry runs; nothing otherwise. */
export function installServerSpans(app: App): void {
  const rt = telemetry();
  if (rt === null) return;
  app.addHook('onRequest', (request, reply, done) => {
    start(rt, request, reply);
    done();
  });
  // After the body is read (whose events run outside any request's context), the handler and all
  // it awaits run in the span's context.
  app.addHook('preHandler', (request, _reply, done) => {
    const traced = spanOf.get(request);
    if (traced === undefined) done();
    else rt.api.context.with(traced.context, done);
  });
}
