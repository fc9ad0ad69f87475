// Hybrid search over an account's knowledge bases: a keyword ranking and, per embedding model, a
// vector ranking, fused by reciprocal rank; keywords alone when no model can take part.
import {
  AppError,
  InvalidParameterError,
  MissingParameterError,
  NotFoundError,
} from '../../errors/app-error.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import { RequestAbortedError } from '../../models/spec.js';
import type { KnowledgeIndex, RankedChunk } from '../../storage/dialects/knowledge-index.js';
import { semanticSearchStatus, toVector, type EmbeddingLogger } from './embedding.js';
import type { ChunkWithDocument, KnowledgeBase } from './knowledge-base.js';
import type { KnowledgeRepository, UnembeddedDocuments } from './knowledge.repository.js';
import { knowledgeLimits, neverAborted } from './limits.js';
import { reciprocalRankFusion, type FusedItem } from './rank-fusion.js';

export type SearchMode = 'hybrid' | 'bm25';

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

export interface HybridSearchOptions {
  repository: Pick<
    KnowledgeRepository,
    'findKnowledgeBases' | 'unembeddedDocuments' | 'chunksWithDocuments'
  >;
  index: Pick<KnowledgeIndex, 'keywordSearch' | 'vectorSearch'>;
  models: Pick<ModelRegistry, 'status' | 'embeddingModel'>;
  logger: EmbeddingLogger;
}

interface VectorRanking {
  ranking: RankedChunk[] | null;
  notices: string[];
}

/** The request's search, checked: a 400 naming the first parameter out of bounds. */
function checkedSearch(kbIds: readonly string[], query: string, options: SearchOptions) {
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
  return { ids, text, topK, minScore };
}

function unembeddedNotice(entry: UnembeddedDocuments): string {
  return `${entry.chunks} chunk${entry.chunks === 1 ? '' : 's'} of ${entry.documents} document${entry.documents === 1 ? '' : 's'} in knowledge base '${entry.kbId}' have no vectors (the embedding model was unavailable or failed at upload; each document's embedding_error says why): they are found by keywords only.`;
}

/** What the answer says of the parts of the search that were off; null when none was. */
function searchNotice(mode: SearchMode, notices: readonly string[]): string | null {
  const reasons = notices.filter((notice) => notice !== '');
  if (mode === 'bm25') {
    return `Semantic search is off: ${reasons.length > 0 ? reasons.join(' ') : 'no document of these knowledge bases has vectors yet.'} Results are ranked by keywords alone.`;
  }
  return reasons.length > 0 ? reasons.join(' ') : null;
}

/** The hit of a fused item; none for a chunk deleted between ranking and reading. */
function hitOf(
  item: FusedItem,
  chunks: ReadonlyMap<string, ChunkWithDocument>,
  similarities: ReadonlyMap<string, number>,
): SearchHit[] {
  const chunk = chunks.get(item.id);
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
}

export class HybridSearch {
  constructor(private readonly options: HybridSearchOptions) {}

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
    const { ids, text, topK, minScore } = checkedSearch(kbIds, query, options);
    const knowledgeBases = await this.knowledgeBases(accountId, ids);
    const { byModel, notices } = this.byEmbeddingModel(knowledgeBases);

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
    notices.push(...unembedded.map(unembeddedNotice));

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
    const results = fused.flatMap((item) => hitOf(item, chunks, similarities));
    return { results, mode, notice: searchNotice(mode, notices) };
  }

  /** The account's knowledge bases `ids`, in that order; NotFoundError names the first missing. */
  private async knowledgeBases(accountId: string, ids: readonly string[]) {
    const found = await this.options.repository.findKnowledgeBases(accountId, ids);
    const byId = new Map(found.map((knowledgeBase) => [knowledgeBase.id, knowledgeBase]));
    return ids.map((id) => {
      const knowledgeBase = byId.get(id);
      if (knowledgeBase === undefined) throw new NotFoundError('Knowledge base', id);
      return knowledgeBase;
    });
  }

  /**
   * The knowledge bases with vectors, grouped by the embedding model that can rank them now, and
   * why each other one cannot ('' when it simply has no vectors yet).
   */
  private byEmbeddingModel(knowledgeBases: readonly KnowledgeBase[]) {
    const notices: string[] = [];
    const byModel = new Map<string, KnowledgeBase[]>();
    for (const knowledgeBase of knowledgeBases) {
      const semantic = semanticSearchStatus(this.options.models, knowledgeBase);
      const model = knowledgeBase.embeddingModel;
      if (!semantic.enabled || model === null) {
        notices.push(semantic.reason ?? '');
      } else if (knowledgeBase.embeddingDimensions !== null) {
        // A knowledge base without dimensions has no vectors yet, so nothing to rank by meaning.
        byModel.set(model, [...(byModel.get(model) ?? []), knowledgeBase]);
      }
    }
    return { byModel, notices };
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
  ): Promise<VectorRanking> {
    const notices: string[] = [];
    let vector: Float32Array | null;
    try {
      // The knowledge base's own model call, recorded under its account.
      const attribution = {
        accountId: knowledgeBases[0]?.accountId ?? '',
        apiKeyId: null,
        endUser: null,
        route: 'knowledge',
      };
      const result = await this.options.models
        .embeddingModel(model)
        .embed([query], signal, attribution);
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
