// Knowledge bases of an account: CRUD, document ingestion (extract → chunk → embed → store) and
// hybrid search (keyword + vector, fused by reciprocal rank), the retrieval behind RetrievalAgent.
import type { AppConfig } from '../../config/config.js';
import {
  AppError,
  InvalidParameterError,
  MissingParameterError,
  NotFoundError,
} from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import { RequestAbortedError } from '../../models/spec.js';
import {
  vectorNorm,
  type ChunkRecord,
  type KnowledgeIndex,
  type RankedChunk,
} from '../../storage/dialects/knowledge-index.js';
import type { KnowledgeRepository, Page } from './knowledge.repository.js';
import type { EmbeddingStatus, KnowledgeBase, KnowledgeDocument } from './knowledge-base.js';
import type { TextChunk } from './chunker.js';
import { documentContentTypes, type DocumentContentType } from '../../text/extract-text.js';
import type { TextPool } from '../../text-pool/text-pool.js';
import { reciprocalRankFusion } from './rank-fusion.js';

export const knowledgeLimits = {
  /** Largest document content, in UTF-8 bytes. */
  maxDocumentBytes: 5 * 1024 * 1024,
  /**
   * Chunks one document may make (5 MiB of prose at the default chunk size makes about 5,000;
   * every section under a heading makes one at least): each is a row, an index entry and a vector.
   */
  maxChunksPerDocument: 20_000,
  maxMetadataBytes: 16 * 1024,
  maxTopK: 50,
  defaultTopK: 5,
  maxQueryLength: 2000,
  maxKnowledgeBasesPerSearch: 20,
  /** Candidates taken from each ranking before fusion. */
  candidatesPerRanking: 50,
  /** Texts per embedding request. */
  embeddingBatchSize: 64,
  /** Embedding requests in flight for one document. */
  embeddingConcurrency: 4,
  /** The k of reciprocal rank fusion. */
  fusionK: 60,
} as const;

export type SearchMode = 'hybrid' | 'bm25';

export interface CreateKnowledgeBaseInput {
  name: string;
  description?: string | undefined;
  /** A catalog embedding model; null: keyword search only; undefined: the configured default. */
  embeddingModel?: string | null | undefined;
}

export interface AddDocumentInput {
  /** Defaults to the document's own title (HTML `<title>`, first heading, first line). */
  title?: string | undefined;
  content: string;
  contentType?: DocumentContentType | undefined;
  source?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface SemanticSearchStatus {
  enabled: boolean;
  /** Why it is off, and how to turn it on; null when enabled. */
  reason: string | null;
}

export interface SearchOptions {
  /** Results wanted, 1..50; default 5. */
  topK?: number | undefined;
  /** Drop results whose normalised score is below this (0..1). */
  minScore?: number | undefined;
  /** Aborts the query embedding when the caller goes away. */
  signal?: AbortSignal | undefined;
}

export interface SearchHit {
  chunkId: string;
  documentId: string;
  knowledgeBaseId: string;
  title: string;
  /** The chunk's section path in its document, e.g. `Install > Linux`. */
  heading: string;
  text: string;
  source: string | null;
  metadata: Record<string, unknown>;
  /** 0-based position of the chunk in its document. */
  position: number;
  /** Fused reciprocal rank over the best possible, 0..1 (see `search`). */
  score: number;
  /** 1-based rank in the keyword ranking; null when the chunk was not among its candidates. */
  keywordRank: number | null;
  /** 1-based rank in the vector ranking; null when not among its candidates (or bm25 mode). */
  vectorRank: number | null;
  /** Cosine similarity of the chunk to the query, when it was a vector candidate. */
  similarity: number | null;
}

export interface SearchResult {
  results: SearchHit[];
  /** `hybrid` when a vector ranking took part, `bm25` when keywords alone ranked. */
  mode: SearchMode;
  /** Says what part of the search was off and why; null when everything took part. */
  notice: string | null;
}

export interface KnowledgeServiceOptions {
  repository: KnowledgeRepository;
  index: KnowledgeIndex;
  models: ModelRegistry;
  /** Where documents are extracted and chunked, off the event loop. */
  text: TextPool;
  settings: AppConfig['knowledge'];
  logger: { warn(details: Record<string, unknown>, message: string): void };
  now?: () => number;
}

interface Embedded {
  vectors: (Float32Array | null)[] | null;
  status: EmbeddingStatus;
  error: string | null;
}

const neverAborted = new AbortController().signal;

/** The text a chunk is embedded as: its place in the document gives the vector context. */
function embeddingInput(title: string, chunk: TextChunk): string {
  return [title, chunk.heading, chunk.text].filter((part) => part !== '').join('\n\n');
}

/** A usable vector: float32, finite; null for a zero vector (no direction, so no cosine). */
function toVector(values: readonly number[]): Float32Array | null {
  const vector = Float32Array.from(values);
  if (vector.some((value) => !Number.isFinite(value))) {
    throw new Error('the embedding model returned a non-finite component');
  }
  return vectorNorm(vector) === 0 ? null : vector;
}

export class KnowledgeService {
  private readonly now: () => number;

  constructor(private readonly options: KnowledgeServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  // ------------------------------------------------------------------------------------------
  // Knowledge bases

  async createKnowledgeBase(
    accountId: string,
    input: CreateKnowledgeBaseInput,
  ): Promise<KnowledgeBase> {
    const name = input.name.trim();
    if (name === '') throw new InvalidParameterError('name', "'name' must not be empty.");
    const now = new Date(this.now()).toISOString();
    const knowledgeBase: KnowledgeBase = {
      id: newId('kb'),
      accountId,
      name,
      description: input.description ?? '',
      embeddingModel: this.chooseEmbeddingModel(input.embeddingModel),
      embeddingDimensions: null,
      documentCount: 0,
      chunkCount: 0,
      createdAt: now,
      updatedAt: now,
    };
    await this.options.repository.insertKnowledgeBase(knowledgeBase);
    return knowledgeBase;
  }

  async getKnowledgeBase(accountId: string, id: string): Promise<KnowledgeBase> {
    const knowledgeBase = await this.options.repository.findKnowledgeBase(accountId, id);
    if (knowledgeBase === undefined) throw new NotFoundError('Knowledge base', id);
    return knowledgeBase;
  }

  /** The ids among `ids` that are not knowledge bases of the account (another's are missing too). */
  async missingKnowledgeBases(accountId: string, ids: readonly string[]): Promise<string[]> {
    const unique = [...new Set(ids)];
    const found = await this.options.repository.findKnowledgeBases(accountId, unique);
    const present = new Set(found.map((knowledgeBase) => knowledgeBase.id));
    return unique.filter((id) => !present.has(id));
  }

  listKnowledgeBases(accountId: string, page: Page) {
    return this.options.repository.listKnowledgeBases(accountId, page);
  }

  /** Deletes the knowledge base with every document and chunk of it. */
  async deleteKnowledgeBase(accountId: string, id: string): Promise<void> {
    if (!(await this.options.repository.deleteKnowledgeBase(accountId, id))) {
      throw new NotFoundError('Knowledge base', id);
    }
  }

  /** Whether the knowledge base's chunks can be ranked by meaning now, and if not, why. */
  semanticSearchStatus(knowledgeBase: KnowledgeBase): SemanticSearchStatus {
    const name = knowledgeBase.embeddingModel;
    if (name === null) {
      return {
        enabled: false,
        reason: `Knowledge base '${knowledgeBase.id}' has no embedding model (none was configured in knowledge.embedding_model or available in the model catalog when it was created, or it was created with embedding_model: null).`,
      };
    }
    const status = this.options.models.status(name);
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

  /**
   * The request's model when given (it must be an embedding model of the catalog), else the
   * configured `knowledge.embedding_model`, else the first available embedding model, else none.
   */
  private chooseEmbeddingModel(requested: string | null | undefined): string | null {
    if (requested === null) return null;
    if (requested !== undefined) {
      return this.options.models.resolve('embedding', requested, 'embedding_model');
    }
    return this.options.models.defaultOf('embedding');
  }

  // ------------------------------------------------------------------------------------------
  // Documents

  /**
   * Extracts the text and chunks it (by section, whole sentences, with overlap) in the text worker
   * threads (a 400 naming `content` past their deadline or the chunk limit), then embeds the chunks
   * with the knowledge base's model in batches. When the model is unavailable or fails, the
   * document is stored all the same, without vectors, and `embeddingStatus`/`embeddingError` say
   * so: keyword search finds it at once, and losing an upload to a flaky model would be worse.
   */
  async addDocument(
    accountId: string,
    kbId: string,
    input: AddDocumentInput,
    signal: AbortSignal = neverAborted,
  ): Promise<KnowledgeDocument> {
    const knowledgeBase = await this.getKnowledgeBase(accountId, kbId);
    const contentType = input.contentType ?? 'text/plain';
    if (!documentContentTypes.includes(contentType)) {
      throw new InvalidParameterError(
        'content_type',
        `'content_type' must be one of ${documentContentTypes.join(', ')}.`,
      );
    }
    const bytes = Buffer.byteLength(input.content, 'utf8');
    if (bytes > knowledgeLimits.maxDocumentBytes) {
      throw new InvalidParameterError(
        'content',
        `The document has ${bytes} bytes of content; at most ${knowledgeLimits.maxDocumentBytes} (5 MiB) are accepted. Split it into several documents.`,
      );
    }
    const metadata = input.metadata ?? {};
    if (Buffer.byteLength(JSON.stringify(metadata)) > knowledgeLimits.maxMetadataBytes) {
      throw new InvalidParameterError(
        'metadata',
        `'metadata' must serialise to at most ${knowledgeLimits.maxMetadataBytes} bytes of JSON.`,
      );
    }
    const chunked = await this.options.text.chunk(
      {
        content: input.content,
        contentType,
        chunkSize: this.options.settings.chunkSize,
        chunkOverlap: this.options.settings.chunkOverlap,
        maxChunks: knowledgeLimits.maxChunksPerDocument,
      },
      signal,
    );
    if (chunked.chunks.length === 0) {
      throw new InvalidParameterError(
        'content',
        'The content has no text to index (nothing is left once markup, scripts and styles are removed).',
      );
    }
    const title = input.title?.trim() || chunked.title || 'Untitled';
    const embedded = await this.embedChunks(knowledgeBase, title, chunked.chunks, signal);
    const now = new Date(this.now()).toISOString();
    const document = {
      id: newId('doc'),
      kbId: knowledgeBase.id,
      accountId,
      title,
      contentType,
      source: input.source ?? null,
      metadata,
      charCount: chunked.text.length,
      chunkCount: chunked.chunks.length,
      embeddingStatus: embedded.status,
      embeddingError: embedded.error,
      createdAt: now,
      content: input.content,
      text: chunked.text,
    };
    const records = (vectors: (Float32Array | null)[] | null): ChunkRecord[] =>
      chunked.chunks.map((chunk, index) => ({
        id: newId('chunk'),
        documentId: document.id,
        kbId: knowledgeBase.id,
        accountId,
        position: chunk.position,
        title,
        heading: chunk.heading,
        text: chunk.text,
        embedding: vectors?.[index] ?? null,
        createdAt: now,
      }));
    let outcome = await this.options.repository.insertDocument(
      document,
      records(embedded.vectors),
      now,
    );
    if (outcome.kind === 'dimensions-differ') {
      // Another upload fixed the knowledge base's vector length first, with a different model.
      document.embeddingStatus = 'failed';
      document.embeddingError = this.dimensionsMessage(
        knowledgeBase,
        embedded.vectors,
        outcome.dimensions,
      );
      outcome = await this.options.repository.insertDocument(document, records(null), now);
    }
    if (outcome.kind !== 'stored') throw new NotFoundError('Knowledge base', kbId);
    const { content: _content, text: _text, ...stored } = document;
    return stored;
  }

  async listDocuments(
    accountId: string,
    kbId: string,
    page: Page,
  ): Promise<{ documents: KnowledgeDocument[]; total: number }> {
    await this.getKnowledgeBase(accountId, kbId);
    return this.options.repository.listDocuments(accountId, kbId, page);
  }

  /** Deletes the document and its chunks, from both the keyword and the vector index. */
  async deleteDocument(accountId: string, kbId: string, documentId: string): Promise<void> {
    await this.getKnowledgeBase(accountId, kbId);
    const deleted = await this.options.repository.deleteDocument(
      accountId,
      kbId,
      documentId,
      new Date(this.now()).toISOString(),
    );
    if (!deleted) throw new NotFoundError('Document', documentId);
  }

  private dimensionsMessage(
    knowledgeBase: KnowledgeBase,
    vectors: (Float32Array | null)[] | null,
    expected: number,
  ): string {
    const length = vectors?.find((vector) => vector !== null)?.length ?? 0;
    return `The embedding model '${knowledgeBase.embeddingModel ?? ''}' returned vectors of ${length} dimensions, but knowledge base '${knowledgeBase.id}' holds vectors of ${expected}; the model's configuration changed after the first upload. Create a new knowledge base for the new model.`;
  }

  private async embedChunks(
    knowledgeBase: KnowledgeBase,
    title: string,
    chunks: readonly TextChunk[],
    signal: AbortSignal,
  ): Promise<Embedded> {
    const name = knowledgeBase.embeddingModel;
    if (name === null) return { vectors: null, status: 'none', error: null };
    const semantic = this.semanticSearchStatus(knowledgeBase);
    if (!semantic.enabled) {
      return { vectors: null, status: 'unavailable', error: semantic.reason };
    }
    try {
      const model = this.options.models.embeddingModel(name);
      const batches: TextChunk[][] = [];
      for (let start = 0; start < chunks.length; start += knowledgeLimits.embeddingBatchSize) {
        batches.push(chunks.slice(start, start + knowledgeLimits.embeddingBatchSize));
      }
      // A few batches in flight: a large document is hundreds of requests to a remote provider.
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
        Array.from(
          { length: Math.min(knowledgeLimits.embeddingConcurrency, batches.length) },
          worker,
        ),
      );
      const vectors = embeddedBatches.flat();
      const lengths = new Set(
        vectors.flatMap((vector) => (vector === null ? [] : [vector.length])),
      );
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
          error: this.dimensionsMessage(knowledgeBase, vectors, knowledgeBase.embeddingDimensions),
        };
      }
      return { vectors, status: 'complete', error: null };
    } catch (error) {
      if (error instanceof RequestAbortedError || signal.aborted) throw new RequestAbortedError();
      this.options.logger.warn(
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

  // ------------------------------------------------------------------------------------------
  // Search

  /**
   * Searches the account's knowledge bases `kbIds` (an unknown or foreign id → NotFoundError
   * naming it) for `query`.
   *
   * Two rankings of up to 50 candidates each: keywords (BM25 on SQLite's FTS5, `ts_rank_cd` on
   * PostgreSQL) and, for knowledge bases whose embedding model is available, cosine similarity of
   * the query's vector (candidates with similarity ≤ 0 are dropped). They are fused by reciprocal
   * rank fusion with k = 60: Σ 1/(60 + rank). `score` is that sum divided by the best possible —
   * first in every ranking the search used, 2/61 in hybrid mode, 1/61 in bm25 mode — so 1.0 means
   * "first everywhere", and a chunk found by one ranking only scores at most 0.5 in hybrid mode.
   * Equal scores are ordered by keyword rank, then vector rank, then chunk id.
   *
   * Without a usable embedding model (none, unavailable, or the query's embedding failed) the
   * search still answers from keywords alone: `mode` is `bm25` and `notice` says why.
   */
  async search(
    accountId: string,
    kbIds: readonly string[],
    query: string,
    options: SearchOptions = {},
  ): Promise<SearchResult> {
    const ids = [...new Set(kbIds)];
    if (ids.length === 0) {
      throw new MissingParameterError('knowledge_base_ids', 'Name at least one knowledge base.');
    }
    if (ids.length > knowledgeLimits.maxKnowledgeBasesPerSearch) {
      throw new InvalidParameterError(
        'knowledge_base_ids',
        `At most ${knowledgeLimits.maxKnowledgeBasesPerSearch} knowledge bases can be searched at once.`,
      );
    }
    const text = query.trim();
    if (text === '') throw new InvalidParameterError('query', "'query' must not be empty.");
    if (text.length > knowledgeLimits.maxQueryLength) {
      throw new InvalidParameterError(
        'query',
        `'query' must be at most ${knowledgeLimits.maxQueryLength} characters.`,
      );
    }
    const topK = options.topK ?? knowledgeLimits.defaultTopK;
    if (!Number.isInteger(topK) || topK < 1 || topK > knowledgeLimits.maxTopK) {
      throw new InvalidParameterError(
        'top_k',
        `'top_k' must be an integer from 1 to ${knowledgeLimits.maxTopK}.`,
      );
    }
    const minScore = options.minScore ?? 0;
    if (!(minScore >= 0 && minScore <= 1)) {
      throw new InvalidParameterError('min_score', "'min_score' must be between 0 and 1.");
    }

    const found = await this.options.repository.findKnowledgeBases(accountId, ids);
    const byId = new Map(found.map((knowledgeBase) => [knowledgeBase.id, knowledgeBase]));
    const knowledgeBases = ids.map((id) => {
      const knowledgeBase = byId.get(id);
      if (knowledgeBase === undefined) throw new NotFoundError('Knowledge base', id);
      return knowledgeBase;
    });

    const notices: string[] = [];
    const byModel = new Map<string, KnowledgeBase[]>();
    for (const knowledgeBase of knowledgeBases) {
      const semantic = this.semanticSearchStatus(knowledgeBase);
      const model = knowledgeBase.embeddingModel;
      if (!semantic.enabled || model === null) {
        notices.push(semantic.reason ?? '');
      } else if (knowledgeBase.embeddingDimensions !== null) {
        // A knowledge base without dimensions has no vectors yet, so nothing to rank by meaning.
        byModel.set(model, [...(byModel.get(model) ?? []), knowledgeBase]);
      }
    }

    const signal = options.signal ?? neverAborted;
    const candidates = knowledgeLimits.candidatesPerRanking;
    const [keyword, vectorRankings, unembedded] = await Promise.all([
      this.options.index.keywordSearch(ids, text, candidates),
      Promise.all(
        [...byModel.entries()].map(([model, group]) =>
          this.vectorRanking(model, group, text, candidates, signal),
        ),
      ),
      this.options.repository.unembeddedDocuments(
        knowledgeBases.filter((kb) => kb.embeddingModel !== null).map((kb) => kb.id),
      ),
    ]);
    // In the order of the models, not of their answers, so that the notice reads the same each time.
    for (const { notices: rankingNotices } of vectorRankings) notices.push(...rankingNotices);
    for (const entry of unembedded) {
      notices.push(
        `${entry.chunks} chunk${entry.chunks === 1 ? '' : 's'} of ${entry.documents} document${entry.documents === 1 ? '' : 's'} in knowledge base '${entry.kbId}' have no vectors (the embedding model was unavailable or failed at upload; each document's embedding_error says why): they are found by keywords only.`,
      );
    }

    const vectorLists = vectorRankings.flatMap(({ ranking }) =>
      ranking === null ? [] : [ranking],
    );
    const mode: SearchMode = vectorLists.length > 0 ? 'hybrid' : 'bm25';
    const similarities = new Map(
      vectorLists.flatMap((ranking) => ranking.map((entry) => [entry.chunkId, entry.score])),
    );
    const fused = reciprocalRankFusion(
      [
        keyword.map((entry) => entry.chunkId),
        ...vectorLists.map((ranking) => ranking.map((entry) => entry.chunkId)),
      ],
      { k: knowledgeLimits.fusionK, listsPerItem: mode === 'hybrid' ? 2 : 1 },
    )
      .filter((item) => item.score >= minScore)
      .slice(0, topK);
    const chunks = await this.options.repository.chunksWithDocuments(fused.map((item) => item.id));

    const results: SearchHit[] = fused.flatMap((item) => {
      const chunk = chunks.get(item.id);
      // A chunk deleted between ranking and reading is simply left out.
      if (chunk === undefined) return [];
      const vectorRank = item.ranks.slice(1).find((rank) => rank !== null) ?? null;
      return [
        {
          chunkId: chunk.id,
          documentId: chunk.documentId,
          knowledgeBaseId: chunk.kbId,
          title: chunk.title,
          heading: chunk.heading,
          text: chunk.text,
          source: chunk.source,
          metadata: chunk.metadata,
          position: chunk.position,
          score: item.score,
          keywordRank: item.ranks[0] ?? null,
          vectorRank,
          similarity: similarities.get(chunk.id) ?? null,
        },
      ];
    });

    const reasons = notices.filter((notice) => notice !== '');
    const notice =
      mode === 'bm25'
        ? `Semantic search is off: ${reasons.length > 0 ? reasons.join(' ') : 'no document of these knowledge bases has vectors yet.'} Results are ranked by keywords alone.`
        : reasons.length > 0
          ? reasons.join(' ')
          : null;
    return { results, mode, notice };
  }

  /**
   * The vector ranking of one embedding model's knowledge bases; null (with a notice) when the
   * query cannot be embedded, so that the search falls back to keywords instead of failing.
   */
  private async vectorRanking(
    model: string,
    knowledgeBases: readonly KnowledgeBase[],
    query: string,
    limit: number,
    signal: AbortSignal,
  ): Promise<{ ranking: RankedChunk[] | null; notices: string[] }> {
    const notices: string[] = [];
    let vector: Float32Array | null;
    try {
      const result = await this.options.models.embeddingModel(model).embed([query], signal);
      vector = toVector(result.embeddings[0] ?? []);
    } catch (error) {
      if (error instanceof RequestAbortedError || signal.aborted) throw new RequestAbortedError();
      this.options.logger.warn(
        { err: error, model },
        'query embedding failed; keyword search only',
      );
      notices.push(
        `The query could not be embedded with '${model}'${error instanceof AppError ? `: ${error.message}` : ' (the service log has the details).'}`,
      );
      return { ranking: null, notices };
    }
    // A query without any word the model can place has no direction: nothing is similar to it.
    if (vector === null) return { ranking: [], notices };
    const comparable = knowledgeBases.filter((kb) => kb.embeddingDimensions === vector.length);
    for (const knowledgeBase of knowledgeBases) {
      if (knowledgeBase.embeddingDimensions !== vector.length) {
        notices.push(
          `Knowledge base '${knowledgeBase.id}' holds vectors of ${knowledgeBase.embeddingDimensions} dimensions but '${model}' now returns ${vector.length}: it is searched by keywords only.`,
        );
      }
    }
    if (comparable.length === 0) return { ranking: null, notices };
    const ranking = await this.options.index.vectorSearch(
      comparable.map((kb) => kb.id),
      vector,
      limit,
    );
    return { ranking: ranking.filter((entry) => entry.score > 0), notices };
  }
}
