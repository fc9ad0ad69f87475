// Request validation and response serialization. JSON bodies are checked strictly (no type
// coercion, unknown fields named), while query strings and path parameters are coerced from text,
// as they can only be text.
//
// Both compilers are given to Fastify as factories in its `schemaController` option rather than set
// with `setValidatorCompiler`: every encapsulated context (each feature module's plugin) reads its
// factories from that option, so a context that adds schemas of its own builds its compilers from
// these, not from Fastify's defaults (which coerce body types and drop unknown fields).
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
import type { FastifySchema, FastifySchemaCompiler, FastifyServerOptions } from 'fastify';
import type { Ajv, AnySchema, ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
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

/** The schemas a context added (`app.addSchema`), by id, which its routes' schemas may `$ref`. */
type SharedSchemas = Record<string, AnySchema | AnySchema[]>;

type ValidatorFactory = NonNullable<
  NonNullable<
    NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
  >['buildValidator']
>;

/** One set of shared schemas' two Ajv instances and what they compiled. */
interface CompilerKit {
  readonly body: { readonly ajv: Ajv; readonly compiled: LRUCache<string, ValidateFunction> };
  readonly text: { readonly ajv: Ajv; readonly compiled: LRUCache<string, ValidateFunction> };
}

/**
 * The process's compilers, by set of shared schemas (a few, which the code defines; bounded all
 * the same). A schema is
 * compiled once per process, whichever app asks for it (one in production; the test suite builds
 * hundreds in one process, and compiling the same validators again was a tenth of its CPU time):
 * compiled code depends only on the schema's content, the Ajv options and the shared schemas, so
 * it is kept by the schema's JSON text, bounded in entries. Ajv's own cache (by schema object) is
 * emptied after each compilation, so that schemas built per app are not held by it.
 */
const kits = new LRUCache<string, CompilerKit>({ max: 64 });
const maxCompiledPerKit = 2000;

function kitOf(key: string, shared: SharedSchemas): CompilerKit {
  let kit = kits.get(key);
  if (kit === undefined) {
    const part = (coerceTypes: false | 'array') => {
      const ajv = createAjv({ coerceTypes });
      // Fastify's buckets hold schemas with their `$id` (it refuses any without).
      for (const schema of Object.values(shared)) ajv.addSchema(schema);
      return { ajv, compiled: new LRUCache<string, ValidateFunction>({ max: maxCompiledPerKit }) };
    };
    kit = { body: part(false), text: part('array') };
    kits.set(key, kit);
  }
  return kit;
}

function compileOnce(part: CompilerKit['body'], schema: object): ValidateFunction {
  const text = JSON.stringify(schema);
  let compiled = part.compiled.get(text);
  if (compiled === undefined) {
    compiled = part.ajv.compile(schema);
    part.ajv.removeSchema(schema);
    part.compiled.set(text, compiled);
  }
  return compiled;
}

/**
 * The validator compiler of a context that knows `shared`: a strict Ajv for bodies, a coercing one
 * for the query string and path parameters, both holding the shared schemas.
 */
function createValidatorCompiler(
  pending: PendingSchemas,
  key: string,
  shared: SharedSchemas,
): FastifySchemaCompiler<FastifySchema> {
  const kit = kitOf(key, shared);
  return ({ schema, httpPart }) => {
    const part = httpPart === 'body' ? kit.body : kit.text;
    let compiled: ValidateFunction | undefined;
    const compile = () => {
      pending.delete(compile);
      compiled ??= compileOnce(part, schema);
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

/**
 * The validator factory of every context: one compiler per set of shared schemas. Fastify asks a
 * context that added schemas for its compiler again at each of its routes, so a set seen before
 * gets the compiler built for it (as Fastify's own factory does).
 */
export function strictValidatorFactory(pending: PendingSchemas): ValidatorFactory {
  const bySchemas = new Map<string, FastifySchemaCompiler<FastifySchema>>();
  const factory = (shared: SharedSchemas = {}) => {
    const key = JSON.stringify(shared);
    let compiler = bySchemas.get(key);
    if (compiler === undefined) {
      compiler = createValidatorCompiler(pending, key, shared);
      bySchemas.set(key, compiler);
    }
    return compiler;
  };
  // Fastify calls the compiler with a route's part ({schema, httpPart, …}); its types describe the
  // factory's result as Ajv's own compile function.
  return factory as unknown as ValidatorFactory;
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
