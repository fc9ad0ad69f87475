// Validates agent configurations, execution inputs and model output against JSON Schemas (TypeBox),
// filling defaults, refusing unknown keys, and naming the offending key in the 400.
import type { ValidateFunction } from 'ajv';
import type { AppError } from '../errors/app-error.js';
import { schemaIssueToError } from '../errors/schema-errors.js';
import { createAjv } from '../validation/ajv.js';

const ajv = createAjv();

const compiled = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/**
 * A copy of `value` with defaults filled in when it matches `schema`; otherwise the 400 for its
 * first problem, with parameters named under `prefix` (e.g. `configuration`).
 */
export function checkAgainstSchema<T>(
  schema: object,
  value: unknown,
  where: string,
  prefix: string,
): { ok: true; value: T } | { ok: false; error: AppError } {
  const copy: unknown = value === undefined ? undefined : structuredClone(value);
  const validate = validatorFor(schema);
  if (validate(copy)) return { ok: true, value: copy as T };
  return { ok: false, error: schemaIssueToError(validate.errors ?? [], where, prefix) };
}

export function requireSchema<T>(schema: object, value: unknown, where: string, prefix: string): T {
  const checked = checkAgainstSchema<T>(schema, value, where, prefix);
  if (!checked.ok) throw checked.error;
  return checked.value;
}
