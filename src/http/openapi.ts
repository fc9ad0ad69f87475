// The OpenAPI 3.1 document, generated from the routes' own schemas, at /openapi.json; docs UI at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { access } from '../auth/scopes.js';
import type { AppConfig } from '../config/config.js';
import type { App } from './types.js';

export const docsPrefix = '/docs';

type JsonObject = Record<string, unknown>;

/**
 * A query parameter with a default may be left out, whatever the schema's `required` (which the
 * validator needs so that the default is filled in): the published document says it is optional.
 */
function optionalWhenDefaulted(querystring: unknown): unknown {
  if (typeof querystring !== 'object' || querystring === null) return querystring;
  const schema = querystring as JsonObject;
  const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
  if (!Array.isArray(schema.required)) return schema;
  const required = (schema.required as string[]).filter(
    (name) => properties[name]?.default === undefined,
  );
  return { ...schema, required };
}

/**
 * A multipart route's form, which its handler reads (Fastify would validate a `body` schema against
 * a body the multipart parser never sets): documented from `x-multipart-body` instead.
 */
function multipartBody(schema: JsonObject): JsonObject {
  const { 'x-multipart-body': form } = schema;
  return form === undefined ? {} : { body: form, 'x-multipart-body': undefined };
}

export async function registerOpenApi(app: App, config: AppConfig): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Conversational AI Platform API',
        version: config.version,
        description:
          'One API for chat with many models, conversations, prompt templates, feedback, agents and pipelines. ' +
          "Every error has the body `{error: {message, type, code, param}}`. Each operation's required scopes are listed in its description and in `x-required-scopes`.",
      },
      servers: [{ url: '/', description: 'root_url; the REST base is /v1' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: "'Authorization: Bearer sk-…'",
          },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          sessionCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'platform_session',
            description:
              'A dashboard session from POST /v1/auth/login; requests that change state also send X-CSRF-Token.',
          },
        },
      },
    },
    transform: ({ schema, url }) => ({
      schema:
        schema === undefined || schema === null
          ? schema
          : {
              ...schema,
              querystring: optionalWhenDefaulted((schema as JsonObject).querystring),
              ...multipartBody(schema as JsonObject),
            },
      url,
    }),
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) =>
        typeof json.$id === 'string' ? json.$id : `def-${index}`,
    },
  });

  await app.register(swaggerUi, {
    routePrefix: docsPrefix,
    uiConfig: { url: '/openapi.json', deepLinking: true },
  });

  app.get('/openapi.json', { config: { access: access.public() }, schema: { hide: true } }, () =>
    app.swagger(),
  );
}
