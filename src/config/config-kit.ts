// What every piece of the configuration checks its part with (a piece: `src/config/*-config.ts`
// for the service's own settings, `src/modules/<area>/<area>.config.ts` beside a feature module).
// The config file's shape is TypeBox, checked by one Ajv that reports every error at once, each
// worded for whoever runs the service: where (a variable's name, or the path in the file), then
// what is wrong. Environment variables are text: `EnvReader` checks and converts them (whole
// numbers in a range, fractions, booleans, lists, URLs) and reports what it cannot read.
import type { ValidateFunction } from 'ajv';
import Type, { type Static, type TSchema } from 'typebox';
import { createAjv } from '../validation/ajv.js';
import { forbiddenKeys } from '../validation/safe-keys.js';
import { describeErrors } from './config-problems.js';

/** Every problem found, one line each; the loader throws them together. */
export type Problems = string[];

/** The environment, as given to the loader; pieces read it only through an `EnvReader`. */
export type Env = Readonly<Record<string, string | undefined>>;

/** An http(s) URL with a host, as `new URL` reads it. */
function isHttpUrl(value: string): boolean {
  const trimmed = value.trim();
  if (!/^https?:\/\/[^/?#]/i.test(trimmed)) return false;
  return URL.canParse(trimmed);
}

const ajv = createAjv({ allErrors: true, verbose: true });
ajv.addFormat('http-url', isHttpUrl);
const validators = new WeakMap<TSchema, ValidateFunction>();

function validatorOf(schema: TSchema): ValidateFunction {
  let validate = validators.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  return validate;
}

// Schemas the pieces share. `message` (any keyword) or `messages` (by keyword) on a schema words
// its failures, except a wrong type, in the operator's terms.

export const Integer = (minimum: number, maximum: number) => Type.Integer({ minimum, maximum });
export const OptionalInteger = (minimum: number, maximum: number) =>
  Type.Optional(Integer(minimum, maximum));
export const PositiveInteger = () => Type.Integer({ exclusiveMinimum: 0 });
export const NonEmptyString = () => Type.String({ minLength: 1 });
export const HttpUrl = () => Type.String({ format: 'http-url', message: 'Invalid URL' });
/** The name of an environment variable (where a secret is read from). */
export const EnvironmentVariableName = (message?: string) =>
  Type.String({
    pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
    ...(message === undefined ? {} : { message }),
  });
/** A list in the config file: a YAML/JSON list, or one comma-separated string. */
export const TextList = () => Type.Union([Type.String(), Type.Array(Type.String())]);
/** An object that names every key it takes (an unknown key is a problem). */
export const Closed = <Properties extends Record<string, TSchema>>(properties: Properties) =>
  Type.Object(properties, { additionalProperties: false });
/** Keeps a name that would reach an object's prototype out (template variables…). */
export const notReservedKey = {
  not: { enum: [...forbiddenKeys] },
  messages: { not: 'a reserved name (__proto__, constructor, prototype)' },
} as const;

/** What a section's cross-checks need: where problems go, and the kinds of the catalog's models. */
export interface SectionContext {
  /** The config file's path, or `config` (problems of a section are the file's). */
  readonly label: string;
  readonly problems: Problems;
  /** The kind (`chat`, `embedding`…) of a model of the catalog; undefined for an unknown name. */
  readonly modelTypeOf: (name: string) => string | undefined;
}

/** Reports a setting that names a model the catalog lacks, or one of another kind. */
export function requireModel(
  context: SectionContext,
  setting: string,
  name: string,
  type: string,
): void {
  if (context.modelTypeOf(name) !== type) {
    context.problems.push(`${context.label}: ${setting}: '${name}' is not a defined ${type} model`);
  }
}

/** A list from the config file or the environment: a comma-separated string's items, trimmed. */
export function toList(value: string | readonly string[]): string[] {
  if (typeof value !== 'string') return [...value];
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/**
 * Checks `data` against `schema`, adding every failure to `problems` as `<where(path)>: <what>`
 * (path: dotted, `''` for `data` itself). True when `data` conforms.
 */
export function checkAgainst<T extends TSchema>(
  schema: T,
  data: unknown,
  where: (path: string) => string,
  problems: Problems,
): data is Static<T> {
  const validate = validatorOf(schema);
  if (validate(data)) return true;
  for (const { path, message } of describeErrors(validate.errors ?? [])) {
    problems.push(`${where(path)}: ${message}`);
  }
  return false;
}

/** Where a problem of the config file lies: `<file>: <path>` (`(top level)` for the whole file). */
export function inFile(label: string): (path: string) => string {
  return (path) => `${label}: ${path === '' ? '(top level)' : path}`;
}

const WholeNumberText = Type.String({ pattern: '^\\d+$', message: 'expected a whole number' });
const FractionText = Type.String({
  pattern: '^(0|1|0?\\.\\d+|1\\.0*)$',
  message: 'expected a number from 0 to 1',
});
const BooleanText = Type.Enum(['true', 'false', '1', '0'], {
  message: "expected 'true' or 'false'",
});
const AnyText = Type.String();
const NonEmptyText = NonEmptyString();
const HttpUrlText = HttpUrl();
const integerRanges = new Map<string, TSchema>();
const choices = new Map<string, TSchema>();

/**
 * Reads environment variables as text, checks and converts them, and reports each by name. A
 * variable set to the empty string counts as unset (a compose file's `KEY=` or `${KEY:-}`), except
 * a list, where it is the empty list.
 */
export class EnvReader {
  constructor(
    private readonly env: Env,
    private readonly problems: Problems,
  ) {}

  /** The variable as it is, unchecked (undefined when unset or empty). */
  raw(name: string): string | undefined {
    const value = this.env[name];
    return value === '' ? undefined : value;
  }

  /** The variable's text when it is set, not empty, and matches `schema`. */
  text(name: string, schema: TSchema = NonEmptyText): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    return checkAgainst(schema, value, () => name, this.problems) ? value : undefined;
  }

  /** A whole number from `minimum` to `maximum`, written in digits. */
  integer(name: string, minimum: number, maximum: number): number | undefined {
    const text = this.text(name, WholeNumberText);
    if (text === undefined) return undefined;
    const key = `${minimum}:${maximum}`;
    let range = integerRanges.get(key);
    if (range === undefined) integerRanges.set(key, (range = Integer(minimum, maximum)));
    const value = Number(text);
    return checkAgainst(range, value, () => name, this.problems) ? value : undefined;
  }

  /** A fraction from 0 to 1 written as a decimal number (`0.05`, `1`). */
  fraction(name: string): number | undefined {
    const text = this.text(name, FractionText);
    return text === undefined ? undefined : Number(text);
  }

  /** `true`/`1` or `false`/`0`. */
  boolean(name: string): boolean | undefined {
    const text = this.text(name, BooleanText);
    return text === undefined ? undefined : text === 'true' || text === '1';
  }

  /** One of `values`, exactly. */
  oneOf<const Value extends string>(name: string, values: readonly Value[]): Value | undefined {
    const key = values.join('\n');
    let schema = choices.get(key);
    if (schema === undefined) choices.set(key, (schema = Type.Enum([...values])));
    return this.text(name, schema) as Value | undefined;
  }

  /** A comma-separated list, blanks dropped (an empty variable is an empty list). */
  list(name: string): string[] | undefined {
    const text = this.env[name];
    if (text === undefined) return undefined;
    return checkAgainst(AnyText, text, () => name, this.problems) ? toList(text) : undefined;
  }

  /** An http(s) URL, surrounding blanks dropped. */
  url(name: string): string | undefined {
    return this.text(name, HttpUrlText)?.trim();
  }
}
