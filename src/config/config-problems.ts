// How Ajv's errors are worded as problems of the configuration: one line per problem, each a path
// (dotted: `models.2.name`, '' for the value itself) and what is wrong, in the operator's terms; a
// union's failure told once, the unknown keys of an object together. A schema may word its own
// failures (but a wrong type) with `message`, or `messages` by keyword.
import type { ErrorObject } from 'ajv';

export interface Described {
  path: string;
  message: string;
}

interface SchemaNode {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: SchemaNode[];
  properties?: Record<string, SchemaNode>;
  patternProperties?: Record<string, SchemaNode>;
  message?: string;
  messages?: Record<string, string>;
}

export function describeErrors(errors: readonly ErrorObject[]): Described[] {
  const described: Described[] = [];
  const unknownKeys = new Map<string, Described & { keys: string[] }>();
  for (const error of withoutUnionBranches(withoutFollowingErrors(errors))) {
    const path = pathOf(error.instancePath);
    const parent = error.parentSchema as SchemaNode | undefined;
    if (error.keyword === 'additionalProperties') {
      const key = String((error.params as { additionalProperty: string }).additionalProperty);
      if (parent?.patternProperties !== undefined) {
        described.push({ path: joinPath(path, key), message: 'Invalid key in record' });
        continue;
      }
      const entry = unknownKeys.get(path);
      if (entry !== undefined) entry.keys.push(key);
      else {
        const fresh = { path, message: '', keys: [key] };
        unknownKeys.set(path, fresh);
        described.push(fresh);
      }
      continue;
    }
    if (error.keyword === 'required') {
      const key = String((error.params as { missingProperty: string }).missingProperty);
      const expected = parent?.properties?.[key];
      described.push({ path: joinPath(path, key), message: expectation(expected, undefined) });
      continue;
    }
    described.push({ path, message: messageOf(error, parent) });
  }
  for (const entry of unknownKeys.values()) {
    const names = entry.keys.map((key) => JSON.stringify(key)).join(', ');
    entry.message = `Unrecognized key${entry.keys.length > 1 ? 's' : ''}: ${names}`;
  }
  // Unknown keys come after the other problems, as a list of what the file should not hold.
  const ordered = [
    ...described.filter((entry) => !('keys' in entry)),
    ...described.filter((entry) => 'keys' in entry),
  ];
  const seen = new Set<string>();
  return ordered
    .map(({ path, message }) => ({ path, message }))
    .filter(({ path, message }) => {
      const key = `${path}\n${message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

function messageOf(error: ErrorObject, parent: SchemaNode | undefined): string {
  const limit = (error.params as { limit?: number }).limit;
  if (error.keyword === 'type') {
    return expectation({ type: (error.params as { type: string }).type }, error.data);
  }
  const custom = parent?.messages?.[error.keyword] ?? parent?.message;
  if (custom !== undefined) return custom;
  switch (error.keyword) {
    case 'minimum':
      return `Too small: expected number to be >=${limit}`;
    case 'exclusiveMinimum':
      return `Too small: expected number to be >${limit}`;
    case 'maximum':
      return `Too big: expected number to be <=${limit}`;
    case 'exclusiveMaximum':
      return `Too big: expected number to be <${limit}`;
    case 'minLength':
      return `Too small: expected string to have >=${limit} characters`;
    case 'maxLength':
      return `Too big: expected string to have <=${limit} characters`;
    case 'minItems':
      return `Too small: expected array to have >=${limit} items`;
    case 'maxItems':
      return `Too big: expected array to have <=${limit} items`;
    case 'pattern':
      return `Invalid string: must match pattern /${(error.params as { pattern: string }).pattern}/`;
    case 'enum':
    case 'anyOf':
    case 'const':
      return expectation(parent, error.data);
    default:
      return error.message ?? 'Invalid input';
  }
}

/** What a schema expects, against what was given: `Invalid input: expected int, received string`. */
function expectation(schema: SchemaNode | undefined, data: unknown): string {
  const options = literalsOf(schema);
  if (options !== null) {
    return `Invalid option: expected one of ${options.map((value) => JSON.stringify(value)).join('|')}`;
  }
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  if (type === undefined) return 'Invalid input';
  const received = jsonTypeOf(data, false);
  // A whole number is asked for: a fraction is not an int, anything else is not a number.
  const expected = type !== 'integer' ? type : received === 'number' ? 'int' : 'number';
  return `Invalid input: expected ${expected}, received ${received}`;
}

/** The values a schema allows when it is a list of them (an enum, a const, a union of consts). */
function literalsOf(schema: SchemaNode | undefined): unknown[] | null {
  if (schema === undefined) return null;
  if (schema.enum !== undefined) return schema.enum;
  if (schema.const !== undefined) return [schema.const];
  if (schema.anyOf === undefined) return null;
  const values = schema.anyOf.map(literalsOf);
  return values.every((value) => value !== null) ? values.flat() : null;
}

function jsonTypeOf(data: unknown, integers: boolean): string {
  if (data === null) return 'null';
  if (Array.isArray(data)) return 'array';
  if (integers && typeof data === 'number' && Number.isInteger(data)) return 'integer';
  return typeof data;
}

/** Whether a union's branch is meant for a value of this type (then its own errors are told). */
function admits(branch: SchemaNode, type: string): boolean {
  if (branch.const !== undefined) return admitsType(jsonTypeOf(branch.const, false), type);
  if (branch.enum !== undefined) {
    return branch.enum.some((value) => admitsType(jsonTypeOf(value, false), type));
  }
  if (branch.anyOf !== undefined) return branch.anyOf.some((inner) => admits(inner, type));
  if (branch.type === undefined) return true;
  const types = Array.isArray(branch.type) ? branch.type : [branch.type];
  return types.some((allowed) => admitsType(allowed, type));
}

function admitsType(allowed: string, type: string): boolean {
  const numeric = (name: string) => name === 'number' || name === 'integer';
  return allowed === type || (numeric(allowed) && numeric(type));
}

/**
 * A failed union (`anyOf`) is told once: by the errors of the one branch meant for the value's
 * type when there is one (a reserved name given as a string, a bad field of an object), else as
 * itself ("Invalid input", or the values it allows).
 */
function withoutUnionBranches(errors: readonly ErrorObject[]): ErrorObject[] {
  const dropped = new Set<ErrorObject>();
  const unions = errors
    .filter((error) => error.keyword === 'anyOf')
    .sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  for (const union of unions) {
    if (dropped.has(union)) continue;
    const branches = union.schema as SchemaNode[];
    const type = jsonTypeOf(union.data, true);
    const meant = literalsOf({ anyOf: branches }) === null ? branchesFor(branches, type) : [];
    const within = (error: ErrorObject, index: number) =>
      error.schemaPath.startsWith(`${union.schemaPath}/${index}/`) &&
      (error.instancePath === union.instancePath ||
        error.instancePath.startsWith(`${union.instancePath}/`));
    for (const error of errors) {
      branches.forEach((_, index) => {
        if (within(error, index) && !(meant.length === 1 && meant[0] === index)) {
          dropped.add(error);
        }
      });
    }
    if (meant.length === 1) dropped.add(union);
  }
  return errors.filter((error) => !dropped.has(error));
}

/** The branches with a shape for a value of this type (a literal's mismatch is the union's). */
function branchesFor(branches: readonly SchemaNode[], type: string): number[] {
  return branches.flatMap((branch, index) =>
    literalsOf(branch) === null && admits(branch, type) ? [index] : [],
  );
}

/** A value of the wrong type is told so, not also how it misses the bounds of the right one. */
function withoutFollowingErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const mistyped = new Set(
    errors
      .filter((error) => error.keyword === 'type')
      .map((error) => `${error.instancePath}\n${error.schemaPath.replace(/\/type$/, '')}`),
  );
  return errors.filter((error) => {
    if (error.keyword === 'type') return true;
    const schemaPath = error.schemaPath.slice(0, error.schemaPath.lastIndexOf('/'));
    return !mistyped.has(`${error.instancePath}\n${schemaPath}`);
  });
}

function pathOf(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((step) => step.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
}

function joinPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
