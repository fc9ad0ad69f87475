// A pipeline's `input_schema`: the JSON Schema of its run inputs, which the platform's MCP server
// publishes as the pipeline tool's inputSchema and checks each call's arguments against. Checked
// when the pipeline is saved: an object schema, bounded in size and depth, self-contained (no
// references), without the keywords whose cost does not grow linearly with the checked input (a
// client's regular expressions, pairwise uniqueness), and one Ajv compiles.
import { InvalidParameterError } from '../../errors/app-error.js';
import { assertSafeKeys } from '../../validation/safe-keys.js';
import { checkAgainstSchema } from '../../validation/schema-validator.js';

export const inputSchemaLimits = { maxBytes: 32 * 1024, maxDepth: 10 } as const;

/** What a tool of a pipeline without an input_schema takes: any object. */
export const defaultInputSchema: Readonly<Record<string, unknown>> = Object.freeze({
  type: 'object',
  additionalProperties: true,
});

/**
 * Refused wherever a schema stands: references and identifiers (the schema is one document),
 * `pattern` and `patternProperties` (a client's regular expression, run by the service on every
 * call, could backtrack for seconds), and `uniqueItems` (compares items pairwise).
 */
const refusedKeywords = new Set([
  '$ref',
  '$dynamicRef',
  '$recursiveRef',
  '$id',
  '$schema',
  '$anchor',
  '$dynamicAnchor',
  'pattern',
  'patternProperties',
  'uniqueItems',
]);

/** Keywords whose value is one subschema. */
const schemaKeywords = [
  'additionalProperties',
  'items',
  'additionalItems',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
];
/** Keywords whose value is an array of subschemas. */
const schemaListKeywords = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
/** Keywords whose value maps names to subschemas. */
const schemaMapKeywords = ['properties', '$defs', 'definitions', 'dependentSchemas'];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Walks the subschemas of `schema` (booleans are schemas too), refusing what is not allowed. */
function checkSubschema(schema: unknown, param: string, depth: number): void {
  if (typeof schema === 'boolean') return;
  if (!isObject(schema)) {
    throw new InvalidParameterError(param, `'${param}' must be a JSON Schema (an object).`);
  }
  if (depth > inputSchemaLimits.maxDepth) {
    throw new InvalidParameterError(
      param,
      `'input_schema' nests schemas more than ${inputSchemaLimits.maxDepth} deep.`,
    );
  }
  for (const keyword of Object.keys(schema)) {
    if (refusedKeywords.has(keyword)) {
      throw new InvalidParameterError(
        `${param}.${keyword}`,
        `'${keyword}' is not allowed in 'input_schema': the schema is self-contained, without references, regular expressions or uniqueItems.`,
      );
    }
  }
  for (const keyword of schemaKeywords) {
    const value = schema[keyword];
    if (value !== undefined && !Array.isArray(value)) {
      checkSubschema(value, `${param}.${keyword}`, depth + 1);
    }
  }
  for (const keyword of schemaListKeywords) {
    const value = schema[keyword];
    if (Array.isArray(value)) {
      value.forEach((entry, index) =>
        checkSubschema(entry, `${param}.${keyword}[${index}]`, depth + 1),
      );
    }
  }
  for (const keyword of schemaMapKeywords) {
    const value = schema[keyword];
    if (value === undefined) continue;
    if (!isObject(value)) {
      throw new InvalidParameterError(`${param}.${keyword}`, `'${keyword}' must be an object.`);
    }
    for (const [name, entry] of Object.entries(value)) {
      checkSubschema(entry, `${param}.${keyword}.${name}`, depth + 1);
    }
  }
}

/**
 * The schema as it is stored, or a 400 naming `input_schema` (or the part of it at fault): an
 * object whose `type` is `object`, at most 32 KiB of JSON and 10 schemas deep, with no reserved
 * key, no refused keyword, and valid for Ajv.
 */
export function checkInputSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const param = 'input_schema';
  assertSafeKeys(schema, param);
  if (Buffer.byteLength(JSON.stringify(schema)) > inputSchemaLimits.maxBytes) {
    throw new InvalidParameterError(
      param,
      `'input_schema' is larger than ${inputSchemaLimits.maxBytes / 1024} KiB of JSON.`,
    );
  }
  if (schema.type !== 'object') {
    throw new InvalidParameterError(
      `${param}.type`,
      "'input_schema' must describe an object: its 'type' is 'object' (a tool's arguments are an object).",
    );
  }
  checkSubschema(schema, param, 1);
  try {
    // Compiling is the check: Ajv refuses a schema its meta-schema does not accept.
    checkAgainstSchema(schema, {}, 'pipeline inputs', '');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new InvalidParameterError(
      param,
      `'input_schema' is not a valid JSON Schema: ${reason.slice(0, 300)}`,
    );
  }
  return schema;
}
