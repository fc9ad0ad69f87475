// The JSON Schema keywords as the grammar translation (json-schema-grammar.ts) sorts them: words
// that only describe, constraints on values the grammar cannot enforce, what each type takes; and
// small checks of schema values.
import type { GbnfJsonSchema } from 'node-llama-cpp';

export type Schema = Readonly<Record<string, unknown>>;

/** Words that describe a value without constraining it: dropped. */
export const annotations = new Set([
  'title',
  'description',
  'default',
  'examples',
  'example',
  '$schema',
  '$id',
  '$comment',
  '$anchor',
  'deprecated',
  'readOnly',
  'writeOnly',
  'strict',
  '$defs',
  'definitions',
]);

/**
 * Constraints on values the grammar cannot enforce; the structure stays right, so a value that
 * breaks one of these is the model's answer for the caller to check (as with any provider's
 * non-strict output). Listed in docs/fragments/local-tools.md.
 */
export const unenforced = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'pattern',
  'format',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'propertyNames',
  'patternProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contentEncoding',
  'contentMediaType',
  'contentSchema',
]);

/** What each JSON type takes, beyond the type itself. */
export const keywordsOfType: Readonly<Record<string, readonly string[]>> = {
  string: ['minLength', 'maxLength'],
  object: ['properties', 'required', 'additionalProperties', 'minProperties', 'maxProperties'],
  array: ['items', 'prefixItems', 'additionalItems', 'minItems', 'maxItems'],
};

export const structuralKeywords = new Set([
  'type',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
  'nullable',
  ...Object.values(keywordsOfType).flat(),
]);

export const primitiveTypes = ['string', 'number', 'integer', 'boolean', 'null'] as const;
export const jsonTypes = new Set<string>([...primitiveTypes, 'object', 'array']);
/** String formats the grammar writes exactly; others are plain strings. */
export const grammarFormats = new Set(['date-time', 'date', 'time']);

/** Any JSON value: the subset has no "anything" schema, so it is each kind in turn. */
export const anyValue: GbnfJsonSchema = {
  oneOf: [
    { type: ['string', 'number', 'boolean', 'null'] },
    { type: 'object', additionalProperties: true },
    { type: 'array' },
  ],
};

export function isSchemaObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isPrimitive(value: unknown): value is string | number | boolean | null {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

export function asObject(value: unknown): Schema {
  return isSchemaObject(value) ? value : {};
}

/** A schema that is just a type list: it can join others in one. */
export function isPlain(schema: GbnfJsonSchema): boolean {
  return Object.keys(schema).length === 1 && 'type' in schema;
}
