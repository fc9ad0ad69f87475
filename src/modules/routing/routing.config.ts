// The learned router's configuration: its cache, its confidence floor, how much it may be taught,
// and the models it blends in or classifies intents with (`routing` in the config file).
import Type, { type Static } from 'typebox';
import {
  Closed,
  NonEmptyString,
  OptionalInteger,
  requireModel,
  type SectionContext,
} from '../../config/config-kit.js';

/**
 * The learned router declines (default route, low confidence) when its best route scores below
 * this; chosen by cross-validation on the routing benchmark's training split (bench/routing.ts).
 */
export const defaultRoutingMinScore = 0.13;

export const RoutingFileSchema = Closed({
  cache_max_bytes: OptionalInteger(1024 * 1024, 64 * 1024 * 1024 * 1024),
  min_score: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  max_examples_per_account: OptionalInteger(1, 1_000_000),
  embedding_model: Type.Optional(Type.Union([NonEmptyString(), Type.Literal(false)])),
  intent_model: Type.Optional(NonEmptyString()),
});

/** The router's settings; its embedding model defaults to the knowledge bases' one, else `auto`. */
export function routingConfig(
  file: Static<typeof RoutingFileSchema> = {},
  knowledgeEmbeddingModel: string | null,
  context: SectionContext,
) {
  const embeddingModel = file.embedding_model;
  if (typeof embeddingModel === 'string') {
    requireModel(context, 'routing.embedding_model', embeddingModel, 'embedding');
  }
  const intentModel = file.intent_model ?? null;
  if (intentModel !== null) requireModel(context, 'routing.intent_model', intentModel, 'chat');
  return {
    cacheMaxBytes: file.cache_max_bytes ?? 256 * 1024 * 1024,
    minScore: file.min_score ?? defaultRoutingMinScore,
    maxExamplesPerAccount: file.max_examples_per_account ?? 50_000,
    embeddingModel:
      embeddingModel === false
        ? (false as const)
        : (embeddingModel ?? knowledgeEmbeddingModel ?? 'auto'),
    intentModel,
  };
}
