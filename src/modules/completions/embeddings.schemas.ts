// The HTTP shapes of OpenAI's Embeddings: the request and the list of vectors.
import Type from 'typebox';
import { commonParameters } from '../../http/schemas/common.js';

export const EmbeddingRequestSchema = Type.Object(
  {
    ...commonParameters(),
    model: Type.Optional(
      Type.String({
        maxLength: 256,
        description: 'An embedding model; default: the first one in the catalog.',
      }),
    ),
    input: Type.Union([
      Type.String({ minLength: 1, maxLength: 1_000_000 }),
      Type.Array(Type.String({ minLength: 1, maxLength: 1_000_000 }), {
        minItems: 1,
        maxItems: 2048,
      }),
    ]),
    encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64')])),
    user: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: false },
);

export const EmbeddingListSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({
      object: Type.Literal('embedding'),
      index: Type.Integer(),
      embedding: Type.Union([Type.Array(Type.Number()), Type.String()]),
    }),
  ),
  model: Type.String(),
  usage: Type.Object({ prompt_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});
