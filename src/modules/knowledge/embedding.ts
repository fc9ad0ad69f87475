// Embedding with a knowledge base's model: whether it can be used now, a document's chunks in
// batches, and the vectors checked (finite, one length, the length the knowledge base holds).
// A model that is unavailable or fails is reported in the result, never thrown: the document is
// stored without vectors and keyword search still finds it.
import { AppError } from '../../errors/app-error.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import {
  RequestAbortedError,
  type CallAttribution,
  type EmbeddingModel,
} from '../../models/spec.js';
import { vectorNorm } from '../../storage/dialects/knowledge-index.js';
import type { TextChunk } from './chunker.js';
import type { EmbeddingStatus, KnowledgeBase } from './knowledge-base.js';
import { knowledgeLimits } from './limits.js';

export interface SemanticSearchStatus {
  enabled: boolean;
  /** Why it is off, and how to turn it on; null when enabled. */
  reason: string | null;
}

export interface Embedded {
  vectors: (Float32Array | null)[] | null;
  status: EmbeddingStatus;
  error: string | null;
}

export interface EmbeddingLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

/** Whether the knowledge base's chunks can be ranked by meaning now, and if not, why. */
export function semanticSearchStatus(
  models: Pick<ModelRegistry, 'status'>,
  knowledgeBase: KnowledgeBase,
): SemanticSearchStatus {
  const name = knowledgeBase.embeddingModel;
  if (name === null) {
    return {
      enabled: false,
      reason: `Knowledge base '${knowledgeBase.id}' has no embedding model (none was configured in knowledge.embedding_model or available in the model catalog when it was created, or it was created with embedding_model: null).`,
    };
  }
  const status = models.status(name);
  if (status === undefined) {
    return {
      enabled: false,
      reason: `The embedding model '${name}' of knowledge base '${knowledgeBase.id}' is no longer in the model catalog.`,
    };
  }
  if (!status.available) {
    return {
      enabled: false,
      reason: `The embedding model '${name}' of knowledge base '${knowledgeBase.id}' is not available: ${status.reason ?? 'unknown reason'}`,
    };
  }
  return { enabled: true, reason: null };
}

/** The text a chunk is embedded as: its place in the document gives the vector context. */
function embeddingInput(title: string, chunk: TextChunk): string {
  return [title, chunk.heading, chunk.text].filter((part) => part !== '').join('\n\n');
}

/** A usable vector: float32, finite; null for a zero vector (no direction, so no cosine). */
export function toVector(values: readonly number[]): Float32Array | null {
  // A plain loop (a document's vectors are millions of components): each component checked as
  // stored, since a finite number may still overflow float32.
  const vector = new Float32Array(values.length);
  for (let index = 0; index < values.length; index += 1) {
    vector[index] = values[index]!;
    if (!Number.isFinite(vector[index]!)) {
      throw new Error('the embedding model returned a non-finite component');
    }
  }
  return vectorNorm(vector) === 0 ? null : vector;
}

export function dimensionsMessage(
  knowledgeBase: KnowledgeBase,
  vectors: (Float32Array | null)[] | null,
  expected: number,
): string {
  const length = vectors?.find((vector) => vector !== null)?.length ?? 0;
  return `The embedding model '${knowledgeBase.embeddingModel ?? ''}' returned vectors of ${length} dimensions, but knowledge base '${knowledgeBase.id}' holds vectors of ${expected}; the model's configuration changed after the first upload. Create a new knowledge base for the new model.`;
}

/**
 * The chunks' vectors by the knowledge base's model, in order: `none` without a model,
 * `unavailable` when it cannot be used now, `failed` (logged) when it fails or its vectors do not
 * fit the knowledge base. Only the caller going away is thrown.
 */
export async function embedChunks(
  models: Pick<ModelRegistry, 'status' | 'embeddingModel'>,
  logger: EmbeddingLogger,
  knowledgeBase: KnowledgeBase,
  title: string,
  chunks: readonly TextChunk[],
  signal: AbortSignal,
): Promise<Embedded> {
  const name = knowledgeBase.embeddingModel;
  if (name === null) return { vectors: null, status: 'none', error: null };
  const semantic = semanticSearchStatus(models, knowledgeBase);
  if (!semantic.enabled) {
    return { vectors: null, status: 'unavailable', error: semantic.reason };
  }
  try {
    const model = models.embeddingModel(name);
    // The knowledge base's own model calls, recorded under its account.
    const attribution = {
      accountId: knowledgeBase.accountId,
      apiKeyId: null,
      endUser: null,
      route: 'knowledge',
    };
    return fitting(knowledgeBase, await embedInBatches(model, title, chunks, signal, attribution));
  } catch (error) {
    if (error instanceof RequestAbortedError || signal.aborted) throw new RequestAbortedError();
    logger.warn(
      { err: error, model: name, knowledge_base_id: knowledgeBase.id },
      'embedding failed; the document is stored without vectors',
    );
    return {
      vectors: null,
      status: 'failed',
      error:
        error instanceof AppError
          ? `Embedding with '${name}' failed: ${error.message}`
          : `Embedding with '${name}' failed (the service log has the details).`,
    };
  }
}

/**
 * The chunks' vectors in order, a few batches in flight: a large document is hundreds of requests
 * to a remote provider. The first failing batch stops the others from starting and is thrown.
 */
async function embedInBatches(
  model: EmbeddingModel,
  title: string,
  chunks: readonly TextChunk[],
  signal: AbortSignal,
  attribution: CallAttribution,
): Promise<(Float32Array | null)[]> {
  const batches: TextChunk[][] = [];
  for (let start = 0; start < chunks.length; start += knowledgeLimits.embeddingBatchSize) {
    batches.push(chunks.slice(start, start + knowledgeLimits.embeddingBatchSize));
  }
  const embeddedBatches: (Float32Array | null)[][] = [];
  let nextBatch = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && nextBatch < batches.length) {
      const index = nextBatch;
      nextBatch += 1;
      const batch = batches[index]!;
      try {
        const result = await model.embed(
          batch.map((chunk) => embeddingInput(title, chunk)),
          signal,
          attribution,
        );
        if (result.embeddings.length !== batch.length) {
          throw new Error(
            `the embedding model returned ${result.embeddings.length} vectors for ${batch.length} texts`,
          );
        }
        embeddedBatches[index] = result.embeddings.map(toVector);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(knowledgeLimits.embeddingConcurrency, batches.length) }, worker),
  );
  return embeddedBatches.flat();
}

/** The vectors when they have one length, the knowledge base's if it has one yet; else `failed`. */
function fitting(knowledgeBase: KnowledgeBase, vectors: (Float32Array | null)[]): Embedded {
  const lengths = new Set(vectors.flatMap((vector) => (vector === null ? [] : [vector.length])));
  if (lengths.size > 1)
    throw new Error('the embedding model returned vectors of different lengths');
  const [length] = [...lengths];
  if (
    length !== undefined &&
    knowledgeBase.embeddingDimensions !== null &&
    length !== knowledgeBase.embeddingDimensions
  ) {
    return {
      vectors: null,
      status: 'failed',
      error: dimensionsMessage(knowledgeBase, vectors, knowledgeBase.embeddingDimensions),
    };
  }
  return { vectors, status: 'complete', error: null };
}
