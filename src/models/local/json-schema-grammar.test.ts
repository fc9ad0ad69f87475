import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../errors/app-error.js';
import { grammarSchemaOf, toGrammarSchema } from './json-schema-grammar.js';

const param = 'tools[0].function.parameters';
const translate = (schema: unknown) => grammarSchemaOf(schema, param);

function refusal(schema: unknown): InvalidParameterError {
  try {
    translate(schema);
  } catch (error) {
    if (error instanceof InvalidParameterError) return error;
    throw error;
  }
  throw new Error('the schema was accepted');
}

describe("JSON Schema to node-llama-cpp's grammar subset", () => {
  it('keeps what the grammar enforces, with descriptions, and drops annotations', () => {
    expect(
      translate({
        $schema: 'http://json-schema.org/draft-07/schema#',
        title: 'Weather',
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City name', minLength: 1, maxLength: 40 },
          unit: { enum: ['c', 'f'], default: 'c' },
          days: { type: 'integer', minimum: 1, maximum: 7 },
          when: { type: 'string', format: 'date' },
          tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' }, maxItems: 3 },
        },
        required: ['city'],
        additionalProperties: false,
      }),
    ).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name', minLength: 1, maxLength: 40 },
        unit: { enum: ['c', 'f'] },
        days: { type: 'integer' },
        when: { type: 'string', format: 'date' },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
      },
      additionalProperties: false,
    });
  });

  it('reads anyOf as alternatives and nullable type lists as one list or alternatives', () => {
    expect(translate({ anyOf: [{ type: 'string' }, { type: 'number' }] })).toEqual({
      oneOf: [{ type: 'string' }, { type: 'number' }],
    });
    expect(translate({ type: ['string', 'null'] })).toEqual({ type: ['string', 'null'] });
    expect(translate({ type: ['object', 'null'], properties: { a: { type: 'boolean' } } })).toEqual(
      {
        oneOf: [
          { type: 'null' },
          { type: 'object', properties: { a: { type: 'boolean' } }, additionalProperties: false },
        ],
      },
    );
    expect(translate({ type: 'string', nullable: true })).toEqual({
      oneOf: [{ type: 'string' }, { type: 'null' }],
    });
  });

  it('allows any object where the schema lists no properties, and writes required ones it does not describe', () => {
    expect(translate({ type: 'object' })).toEqual({
      type: 'object',
      properties: {},
      additionalProperties: true,
    });
    const translated = translate({ type: 'object', required: ['id'] }) as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(translated.properties)).toEqual(['id']);
  });

  it('follows $defs and definitions references, recursion included, renaming them apart', () => {
    const { schema, definitions } = toGrammarSchema(
      {
        type: 'object',
        properties: { root: { $ref: '#/definitions/Node' } },
        definitions: {
          Node: {
            type: 'object',
            properties: {
              label: { type: 'string' },
              children: { type: 'array', items: { $ref: '#/definitions/Node' } },
            },
          },
        },
      },
      { param, definitionPrefix: 'f0_' },
    );
    expect(schema).toEqual({
      type: 'object',
      properties: { root: { $ref: '#/$defs/f0_Node' } },
      additionalProperties: false,
    });
    expect(definitions).toEqual({
      f0_Node: {
        type: 'object',
        properties: {
          label: { type: 'string' },
          children: { type: 'array', items: { $ref: '#/$defs/f0_Node' } },
        },
        additionalProperties: false,
      },
    });
  });

  it('turns draft-07 tuples into prefixItems', () => {
    expect(
      translate({
        type: 'array',
        items: [{ type: 'string' }, { type: 'number' }],
        additionalItems: false,
      }),
    ).toEqual({
      type: 'array',
      prefixItems: [{ type: 'string' }, { type: 'number' }],
      maxItems: 2,
    });
  });

  it.each([
    [{ not: { type: 'string' } }, "'not'"],
    [{ allOf: [{ type: 'string' }, { maxLength: 3 }] }, "'allOf'"],
    [{ if: { type: 'string' }, then: { maxLength: 3 } }, "'if'"],
    [{ type: 'object', properties: { a: { $ref: '#' } } }, 'the reference "#"'],
    [{ $ref: '#/$defs/Missing' }, 'names no definition'],
    [{ type: 'string', anyOf: [{ maxLength: 1 }] }, "'anyOf' beside other structural keywords"],
    [{ const: { a: 1 } }, "a 'const' that is an object"],
    [{ type: 'date' }, 'the type "date"'],
    [false, 'allows nothing'],
  ])('refuses %j with a 400 naming the parameter', (schema, problem) => {
    const error = refusal(schema);
    expect(error.param).toBe(param);
    expect(error.status).toBe(400);
    expect(error.message).toContain(problem);
  });

  it('says where in the schema the problem is', () => {
    const error = refusal({ type: 'object', properties: { a: { not: {} } } });
    expect(error.message).toContain("'/properties/a'");
  });
});
