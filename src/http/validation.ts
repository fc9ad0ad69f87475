// Request validation: JSON bodies are checked strictly (no type coercion, unknown fields named),
// while query strings and path parameters are coerced from text, as they can only be text.
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { createAjv } from '../validation/ajv.js';

export function createValidatorCompiler(): FastifySchemaCompiler<FastifySchema> {
  const bodyAjv = createAjv({ coerceTypes: false });
  const textAjv = createAjv({ coerceTypes: 'array' });
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : textAjv;
    return ajv.compile(schema as object);
  };
}
