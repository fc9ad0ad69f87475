// Validates agent configurations, execution inputs and model output against JSON Schemas (TypeBox),
// filling defaults, refusing unknown keys, and naming the offending key in the 400.
import type { ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import type { AppError } from '../errors/app-error.js';
import { schemaIssueToError } from '../errors/schema-errors.js';
import { createAjv } from './ajv.js';

/** Validators by schema object: a schema defined once, in code, is found here every time. */
const compiled = new WeakMap<object, ValidateFunction>();

/*
 * Some schemas are built per run (an agent's answer schema follows its configuration). An Ajv
 * instance keeps a reference to every schema and validator it ever compiled (its code-generation
 * scope, which removeSchema does not clear), so those are compiled by an instance that is replaced
 * after `perGeneration` compiles, and found again by their text among the last ones: memory stays
 * bounded by about two generations however many distinct schemas arrive.
 */
const perGeneration = 256;
let ajv = createAjv();
let compiledByThisAjv = 0;
const compiledByText = new LRUCache<string, ValidateFunction>({
  maxSize: perGeneration,
  sizeCalculation: () => 1,
});
let compiledCount = 0;

/** How many validators this process has compiled (tests: schemas built per run are not recompiled). */
export function compiledAgentValidators(): number {
  return compiledCount;
}

function validatorFor(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (validate !== undefined) return validate;
  const text = JSON.stringify(schema);
  validate = compiledByText.get(text);
  if (validate === undefined) {
    if (compiledByThisAjv >= perGeneration) {
      ajv = createAjv();
      compiledByThisAjv = 0;
    }
    validate = ajv.compile(schema);
    // Not found by the object again (a per-run object is garbage after its run): by its text.
    ajv.removeSchema(schema);
    compiledByThisAjv += 1;
    compiledCount += 1;
    compiledByText.set(text, validate);
  }
  compiled.set(schema, validate);
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
