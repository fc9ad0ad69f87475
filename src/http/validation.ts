// Request validation and response serialization. JSON bodies are checked strictly (no type
// coercion, unknown fields named), while query strings and path parameters are coerced from text,
// as they can only be text.
//
// Both are compiled on a route's first use, not at start: some 200 routes' validators and
// serializers are generated code an idle service would hold (several MiB) and start-up would
// spend most of its time building. `compilePendingSchemas(app)` compiles all that are left, so
// that a test finds a schema that does not compile without calling every route.
import {
  SerializerSelector,
  type Serializer,
  type SerializerFactory,
} from '@fastify/fast-json-stringify-compiler';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import type { ValidateFunction } from 'ajv';
import { createAjv } from '../validation/ajv.js';

/** One application's compilers not yet run. */
export type PendingSchemas = Set<() => void>;

const pendingByApp = new WeakMap<object, PendingSchemas>();

export function trackPendingSchemas(app: object, pending: PendingSchemas): void {
  pendingByApp.set(app, pending);
}

/** Compiles every validator and serializer of `app` not yet compiled (tests: all are valid). */
export function compilePendingSchemas(app: object): number {
  const compilers = [...(pendingByApp.get(app) ?? [])];
  for (const compile of compilers) compile();
  return compilers.length;
}

export function createValidatorCompiler(
  pending: PendingSchemas,
): FastifySchemaCompiler<FastifySchema> {
  const bodyAjv = createAjv({ coerceTypes: false });
  const textAjv = createAjv({ coerceTypes: 'array' });
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : textAjv;
    let compiled: ValidateFunction | undefined;
    const compile = () => {
      pending.delete(compile);
      compiled ??= ajv.compile(schema as object);
      return compiled;
    };
    pending.add(compile);
    // Fastify reads a failed validation's errors from the function's `errors` property.
    const validate = (data: unknown): boolean => {
      const check = compiled ?? compile();
      const valid = check(data);
      validate.errors = check.errors;
      return valid;
    };
    validate.errors = null as ValidateFunction['errors'];
    return validate;
  };
}

/** Fastify's own serializer factory (fast-json-stringify), each route's serializer built lazily. */
export function lazySerializerFactory(pending: PendingSchemas): SerializerFactory {
  const eager = SerializerSelector();
  return (externalSchemas, serializerOptions) => {
    const compileRoute = eager(externalSchemas, serializerOptions);
    return (routeSchema) => {
      let compiled: Serializer | undefined;
      const compile = () => {
        pending.delete(compile);
        compiled ??= compileRoute(routeSchema);
        return compiled;
      };
      pending.add(compile);
      return (data: unknown) => (compiled ?? compile())(data);
    };
  };
}
