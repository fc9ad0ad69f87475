import { Ajv } from 'ajv';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAjv } from './ajv.js';

/** Two problems the meta-schema names: a length that is not a number, a type that is no type. */
const invalidSchema = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 'three' }, age: { type: 'whole' } },
};

describe('createAjv', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('still refuses a schema the meta-schema refuses, in compile and in addSchema', () => {
    for (const ajv of [createAjv(), createAjv({ coerceTypes: 'array' })]) {
      expect(() => ajv.compile(invalidSchema)).toThrow(/^schema is invalid: data\/properties/);
      expect(() => ajv.addSchema({ ...invalidSchema, $id: 'invalid' })).toThrow(
        /^schema is invalid/,
      );
      expect(ajv.validateSchema(invalidSchema)).toBe(false);
      expect(ajv.errors?.length).toBe(1);
      expect(ajv.validateSchema({ type: 'string', minLength: 3 })).toBe(true);
    }
  });

  it('names every problem of a schema when every error is asked for', () => {
    const ajv = createAjv({ allErrors: true });
    expect(ajv.validateSchema(invalidSchema)).toBe(false);
    const paths = ajv.errors?.map((error) => error.instancePath);
    expect(paths).toContain('/properties/name/minLength');
    expect(paths).toContain('/properties/age/type');
    expect(() => ajv.compile(invalidSchema)).toThrow(/minLength[\s\S]*type|type[\s\S]*minLength/);
  });

  it('compiles the meta-schema once per process, not once per instance', () => {
    // Ajv's own (private) step: spied on to count, and a plain instance shows that it is counted.
    const compileMetaSchema = vi.spyOn(
      Ajv.prototype as unknown as { _compileMetaSchema: (schema: unknown) => void },
      '_compileMetaSchema',
    );
    const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } } };
    for (let index = 0; index < 5; index += 1) {
      const validate = createAjv({ coerceTypes: index % 2 === 0 ? false : 'array' }).compile(
        schema,
      );
      expect(validate({ n: 2 })).toBe(true);
    }
    // At most the first: another test of this process may have compiled the checker's already.
    expect(compileMetaSchema.mock.calls.length).toBeLessThanOrEqual(1);
    const before = compileMetaSchema.mock.calls.length;
    new Ajv().compile(schema);
    expect(compileMetaSchema.mock.calls.length).toBe(before + 1);
  });
});
