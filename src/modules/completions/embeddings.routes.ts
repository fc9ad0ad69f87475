// POST /embeddings and /v1/embeddings: OpenAI's Embeddings format over the catalog's embedding
// models (a provider's, or a local GGUF model's), as one Fastify plugin; the translation is
// embeddings-dialect.ts.
import { access } from '../../auth/scopes.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import { clientGoneSignal } from '../../http/streaming.js';
import { principalOf, type App } from '../../http/types.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import { embeddingInputs, embeddingsBody } from './embeddings-dialect.js';
import { EmbeddingListSchema, EmbeddingRequestSchema } from './embeddings.schemas.js';

export type EmbeddingsPlugin = FeaturePlugin;

/** What the embedding routes use of the registry. */
type EmbeddingModels = Pick<ModelRegistry, 'resolve' | 'embeddingModel'>;

/** The embedding routes, registered by app.ts like any Fastify plugin. */
export function embeddingsPlugin(models: EmbeddingModels): EmbeddingsPlugin {
  return featurePlugin('embeddings', (app) => {
    embeddingRoutes(app, models);
  });
}

function embeddingRoutes(app: App, models: EmbeddingModels): void {
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
            200: EmbeddingListSchema,
          },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const name = models.resolve('embedding', body.model);
        const caller = principalOf(request);
        const user = (body as { user?: unknown }).user;
        const result = await models
          .embeddingModel(name)
          .embed(embeddingInputs(body.input), clientGoneSignal(reply), {
            accountId: caller.accountId,
            apiKeyId: caller.keyId,
            endUser: typeof user === 'string' && user !== '' ? user : null,
            route: `POST ${path}`,
          });
        return embeddingsBody(result, name, body.encoding_format);
      },
    );
  }
}
