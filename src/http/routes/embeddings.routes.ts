// POST /embeddings and /v1/embeddings: OpenAI's Embeddings format over the catalog's embedding
// models (a provider's, or a local GGUF model's).
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { commonParameters } from '../schemas/common.js';
import type { Services } from '../../services.js';
import { clientGoneSignal } from '../streaming.js';
import type { App } from '../types.js';

const EmbeddingRequestSchema = Type.Object(
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

/** OpenAI's base64 form: the vector's float32 values, little-endian. */
function toBase64(vector: readonly number[]): string {
  const buffer = Buffer.alloc(vector.length * 4);
  vector.forEach((value, index) => buffer.writeFloatLE(value, index * 4));
  return buffer.toString('base64');
}

export function embeddingRoutes(app: App, services: Services): void {
  for (const path of ['/embeddings', '/v1/embeddings']) {
    app.post(
      path,
      {
        config: { access: access.scopes('chat:write') },
        schema: {
          operationId: path === '/embeddings' ? 'createEmbeddings' : 'createEmbeddingsV1',
          tags: ['Models'],
          summary: 'Create embeddings (OpenAI-compatible)',
          body: EmbeddingRequestSchema,
          response: {
            200: Type.Object({
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
            }),
          },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const name = services.models.resolve('embedding', body.model);
        const inputs = typeof body.input === 'string' ? [body.input] : body.input;
        const result = await services.models
          .embeddingModel(name)
          .embed(inputs, clientGoneSignal(reply));
        return {
          object: 'list' as const,
          data: result.embeddings.map((vector, index) => ({
            object: 'embedding' as const,
            index,
            embedding: body.encoding_format === 'base64' ? toBase64(vector) : vector,
          })),
          model: name,
          usage: { prompt_tokens: result.tokens, total_tokens: result.tokens },
        };
      },
    );
  }
}
