// Knowledge bases of an account: CRUD, document ingestion (extract → chunk → embed → store) and
// hybrid search (keyword + vector, fused by reciprocal rank), the retrieval behind RetrievalAgent.
// A facade: ingestion and search are their own files.
import type { AppConfig } from '../../config/config.js';
import { InvalidParameterError, NotFoundError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { KnowledgeIndex } from '../../storage/dialects/knowledge-index.js';
import type { TextPool } from '../../text-pool/text-pool.js';
import { semanticSearchStatus, type SemanticSearchStatus } from './embedding.js';
import { HybridSearch, type SearchOptions, type SearchResult } from './hybrid-search.js';
import { DocumentIngestion, type AddDocumentInput } from './ingestion.js';
import type { KnowledgeBase, KnowledgeDocument } from './knowledge-base.js';
import type { DocumentStore } from './document-store.repository.js';
import type { KnowledgeRepository, Page } from './knowledge.repository.js';
import { neverAborted } from './limits.js';
import { traceOperation } from '../../telemetry/operation-spans.js';

export interface CreateKnowledgeBaseInput {
  name: string;
  description?: string | undefined;
  /** A catalog embedding model; null: keyword search only; undefined: the configured default. */
  embeddingModel?: string | null | undefined;
}

export interface KnowledgeServiceOptions {
  repository: KnowledgeRepository;
  /** Where documents are written with their chunks. */
  documents: DocumentStore;
  index: KnowledgeIndex;
  models: ModelRegistry;
  /** Where documents are extracted and chunked, off the event loop. */
  text: TextPool;
  settings: AppConfig['knowledge'];
  logger: { warn(details: Record<string, unknown>, message: string): void };
  now?: () => number;
}

export class KnowledgeService {
  private readonly now: () => number;
  private readonly ingestion: DocumentIngestion;
  private readonly hybridSearch: HybridSearch;

  constructor(private readonly options: KnowledgeServiceOptions) {
    this.now = options.now ?? Date.now;
    const { repository, documents, index, models, text, settings, logger } = options;
    this.ingestion = new DocumentIngestion({
      documents,
      models,
      text,
      settings,
      logger,
      now: this.now,
    });
    this.hybridSearch = new HybridSearch({ repository, index, models, logger });
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
    return semanticSearchStatus(this.options.models, knowledgeBase);
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

  /** Adds a document to the knowledge base (see DocumentIngestion.add): stored even unembedded. */
  async addDocument(
    accountId: string,
    kbId: string,
    input: AddDocumentInput,
    signal: AbortSignal = neverAborted,
  ): Promise<KnowledgeDocument> {
    const knowledgeBase = await this.getKnowledgeBase(accountId, kbId);
    return this.ingestion.add(accountId, knowledgeBase, input, signal);
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

  // ------------------------------------------------------------------------------------------
  // Search

  /** Hybrid search of the account's knowledge bases `kbIds` (see HybridSearch.search). */
  search(
    accountId: string,
    kbIds: readonly string[],
    query: string,
    options: SearchOptions = {},
  ): Promise<SearchResult> {
    return traceOperation(
      'retrieval',
      kbIds.join(','),
      {
        'gen_ai.data_source.id': kbIds.join(','),
        'platform.account.id': accountId,
        'gen_ai.request.top_k': options.topK,
      },
      () => this.hybridSearch.search(accountId, kbIds, query, options),
      (result) => ({ attributes: { 'platform.retrieval.results': result.results.length } }),
    );
  }
}
