// The knowledge bases' configuration: the embedding model of new ones and how documents are cut
// into chunks (`knowledge` in the config file).
import Type, { type Static } from 'typebox';
import {
  Closed,
  NonEmptyString,
  OptionalInteger,
  requireModel,
  type SectionContext,
} from '../../config/config-kit.js';

export const KnowledgeFileSchema = Closed({
  embedding_model: Type.Optional(NonEmptyString()),
  chunk_size: OptionalInteger(200, 20_000),
  chunk_overlap: OptionalInteger(0, 5000),
});

export function knowledgeConfig(
  file: Static<typeof KnowledgeFileSchema> = {},
  context: SectionContext,
) {
  const embeddingModel = file.embedding_model ?? null;
  if (embeddingModel !== null) {
    requireModel(context, 'knowledge.embedding_model', embeddingModel, 'embedding');
  }
  const chunkSize = file.chunk_size ?? 1200;
  const chunkOverlap = file.chunk_overlap ?? 150;
  if (chunkOverlap >= chunkSize / 2) {
    context.problems.push(
      `${context.label}: knowledge.chunk_overlap must be less than half of chunk_size`,
    );
  }
  return { embeddingModel, chunkSize, chunkOverlap };
}
