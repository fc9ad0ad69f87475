// Checks a value against a TypeBox schema and words the most specific failure as `path: problem`.
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { TLocalizedValidationError } from 'typebox/error';
import { quoteValue } from './table.js';

export interface SchemaProblem {
  path: string;
  detail: string;
}

type Checker = (value: unknown, basePath: string) => SchemaProblem | null;

/** Compiles once; the returned checker gives null for a valid value. */
export function schemaChecker(schema: TSchema): Checker {
  const validator = Compile(schema);
  return (value, basePath) => {
    if (validator.Check(value)) return null;
    return describeProblem(schema, validator.Errors(value), basePath);
  };
}

/**
 * The deepest error is the most useful one (a bad `conditions[0].op` rather than "the operation is
 * invalid"). A union reports one `type` error per branch; those are merged into one message
 * listing the accepted types, unless a branch with the right type failed a narrower rule.
 */
function describeProblem(
  schema: TSchema,
  errors: readonly TLocalizedValidationError[],
  basePath: string,
): SchemaProblem {
  const candidates = errors.filter(
    (error) => error.keyword !== 'boolean' && error.keyword !== 'anyOf',
  );
  const depth = (error: TLocalizedValidationError) => pointerSegments(error.instancePath).length;
  let chosen = candidates[0];
  for (const error of candidates) {
    if (chosen === undefined || depth(error) > depth(chosen)) chosen = error;
    else if (
      depth(error) === depth(chosen) &&
      chosen.keyword === 'type' &&
      error.keyword !== 'type'
    )
      chosen = error;
  }
  if (chosen === undefined) return { path: basePath, detail: 'is invalid' };
  const segments = pointerSegments(chosen.instancePath);
  const params = chosen.params as Record<string, unknown>;
  // Widened to string: the keywords not worded here share the default branch.
  const keyword: string = chosen.keyword;
  switch (keyword) {
    case 'required': {
      const missing = (params.requiredProperties as string[] | undefined)?.[0] ?? '';
      return { path: joinPath(basePath, [...segments, missing]), detail: 'is required' };
    }
    case 'additionalProperties': {
      const unknown = (params.additionalProperties as string[] | undefined)?.[0] ?? '';
      const allowed = Object.keys(
        (resolvePointer(schema, chosen.schemaPath) as { properties?: object } | undefined)
          ?.properties ?? {},
      );
      return {
        path: joinPath(basePath, [...segments, unknown]),
        detail: `unknown field${allowed.length > 0 ? ` (allowed: ${allowed.join(', ')})` : ''}`,
      };
    }
    case 'type': {
      const unionTypes = candidates
        .filter(
          (error) =>
            error.keyword === 'type' &&
            error.instancePath === chosen.instancePath &&
            unionParent(error.schemaPath) !== null &&
            unionParent(error.schemaPath) === unionParent(chosen.schemaPath),
        )
        .map((error) => typeName(String((error.params as { type: unknown }).type)));
      const names = unionTypes.length > 1 ? unionTypes : [typeName(String(params.type))];
      return { path: joinPath(basePath, segments), detail: `must be ${orList(names)}` };
    }
    default:
      return { path: joinPath(basePath, segments), detail: constraintDetail(chosen) };
  }
}

function constraintDetail(error: TLocalizedValidationError): string {
  const params = error.params as Record<string, unknown>;
  const limit = params.limit as number;
  const keyword: string = error.keyword;
  switch (keyword) {
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map(quoteValue).join(', ')}`;
    case 'const':
      return `must be ${quoteValue(params.allowedValue)}`;
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must have at least ${limit} characters`;
    case 'maxLength':
      return `must have at most ${limit} characters`;
    case 'minItems':
      return limit === 1 ? 'must list at least one item' : `must list at least ${limit} items`;
    case 'maxItems':
      return `must list at most ${limit} items`;
    case 'minimum':
      return `must be at least ${limit}`;
    case 'maximum':
      return `must be at most ${limit}`;
    default:
      return error.message;
  }
}

function unionParent(schemaPath: string): string | null {
  const at = schemaPath.lastIndexOf('/anyOf/');
  return at < 0 ? null : schemaPath.slice(0, at);
}

function typeName(type: string): string {
  switch (type) {
    case 'null':
      return 'null';
    case 'integer':
    case 'array':
    case 'object':
      return `an ${type}`;
    case 'string':
      return 'text';
    default:
      return `a ${type}`;
  }
}

function orList(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

function pointerSegments(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function resolvePointer(schema: unknown, schemaPath: string): unknown {
  const pointer = schemaPath.startsWith('#') ? schemaPath.slice(1) : schemaPath;
  return pointerSegments(pointer).reduce<unknown>(
    (node, segment) =>
      typeof node === 'object' && node !== null
        ? (node as Record<string, unknown>)[segment]
        : undefined,
    schema,
  );
}

/** `operations[1]` + [`conditions`, `0`, `column`] → `operations[1].conditions[0].column`. */
export function joinPath(basePath: string, segments: readonly string[]): string {
  return segments.reduce((path, segment) => path + pathSegment(segment), basePath);
}

export function pathSegment(segment: string): string {
  return /^\d+$/.test(segment) ? `[${segment}]` : keySegment(segment);
}

/** An object key as a path step: `.name`, or `['unit price']` when it is not an identifier. */
export function keySegment(key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return `.${key}`;
  return `['${key.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`;
}
