// Knowledge bases for RetrievalAgent over HTTP: create, list, read, delete; their documents; hybrid
// search; as one Fastify plugin over the knowledge service.
import { access } from '../../auth/scopes.js';
import { clientGoneSignal } from '../../http/streaming.js';
import { principalOf, type App } from '../../http/types.js';
import { assertSafeKeys } from '../../validation/safe-keys.js';
import type { SearchHit } from './hybrid-search.js';
import type { KnowledgeBase, KnowledgeDocument } from './knowledge-base.js';
import type { KnowledgeService } from './knowledge-service.js';
import {
  AddDocumentBody,
  CreateKnowledgeBaseBody,
  DeletedSchema,
  DocumentListSchema,
  DocumentParams,
  DocumentSchema,
  KnowledgeBaseListSchema,
  KnowledgeBaseParams,
  KnowledgeBaseSchema,
  PageQuery,
  SearchBody,
  SearchResponseSchema,
  tags,
} from './knowledge.schemas.js';
import { knowledgeLimits } from './limits.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';

export type KnowledgePlugin = FeaturePlugin;

export interface KnowledgeRouteOptions {
  /** The app's request body limit; a document upload may be larger (up to 16 MiB). */
  readonly bodyLimitBytes: number;
}

/** The routes of knowledge bases, registered by app.ts like any Fastify plugin. */
export function knowledgePlugin(
  knowledge: KnowledgeService,
  options: KnowledgeRouteOptions,
): KnowledgePlugin {
  return featurePlugin('knowledge', (app) => {
    knowledgeBaseCollectionRoutes(app, knowledge);
    knowledgeBaseRoutes(app, knowledge);
    addDocumentRoute(app, knowledge, options);
    documentRoutes(app, knowledge);
    searchRoute(app, knowledge);
  });
}

function searchHitToJson(hit: SearchHit) {
  return {
    document_id: hit.documentId,
    title: hit.title,
    text: hit.text,
    score: hit.score,
    source: hit.source,
    chunk_id: hit.chunkId,
    knowledge_base_id: hit.knowledgeBaseId,
    heading: hit.heading,
    position: hit.position,
    metadata: hit.metadata,
    keyword_rank: hit.keywordRank,
    vector_rank: hit.vectorRank,
    similarity: hit.similarity,
  };
}

function documentToJson(document: KnowledgeDocument) {
  return {
    id: document.id,
    knowledge_base_id: document.kbId,
    title: document.title,
    content_type: document.contentType,
    source: document.source,
    metadata: document.metadata,
    char_count: document.charCount,
    chunk_count: document.chunkCount,
    embedding_status: document.embeddingStatus,
    embedding_error: document.embeddingError,
    created_at: document.createdAt,
  };
}

function knowledgeBaseToJson(knowledge: KnowledgeService, knowledgeBase: KnowledgeBase) {
  const semantic = knowledge.semanticSearchStatus(knowledgeBase);
  return {
    id: knowledgeBase.id,
    name: knowledgeBase.name,
    description: knowledgeBase.description,
    embedding_model: knowledgeBase.embeddingModel,
    embedding_dimensions: knowledgeBase.embeddingDimensions,
    document_count: knowledgeBase.documentCount,
    chunk_count: knowledgeBase.chunkCount,
    search_mode: semantic.enabled ? ('hybrid' as const) : ('bm25' as const),
    notice: semantic.reason,
    created_at: knowledgeBase.createdAt,
    updated_at: knowledgeBase.updatedAt,
  };
}

/** POST and GET /v1/knowledge-bases. */
function knowledgeBaseCollectionRoutes(app: App, knowledge: KnowledgeService): void {
  app.post(
    '/v1/knowledge-bases',
    {
      config: { access: access.scopes('agents:write'), feature: 'semantic_search' },
      schema: {
        operationId: 'createKnowledgeBase',
        tags,
        summary: 'Create a knowledge base',
        description:
          "Its embedding model is fixed at creation: `embedding_model` when given (an embedding model of the catalog, else 400), else the configured `knowledge.embedding_model`, else the first available embedding model of the catalog, else none. `embedding_model: null` asks for keyword search only. Without an embedding model, search ranks by keywords alone (`search_mode: 'bm25'`).",
        body: CreateKnowledgeBaseBody,
        response: { 201: KnowledgeBaseSchema },
      },
    },
    async (request, reply) => {
      const knowledgeBase = await knowledge.createKnowledgeBase(principalOf(request).accountId, {
        name: request.body.name,
        description: request.body.description,
        embeddingModel: request.body.embedding_model,
      });
      return reply.code(201).send(knowledgeBaseToJson(knowledge, knowledgeBase));
    },
  );

  app.get(
    '/v1/knowledge-bases',
    {
      config: { access: access.scopes('agents:read'), feature: 'semantic_search' },
      schema: {
        operationId: 'listKnowledgeBases',
        tags,
        summary: "List the account's knowledge bases",
        description: 'Newest first.',
        querystring: PageQuery,
        response: { 200: KnowledgeBaseListSchema },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const page = await knowledge.listKnowledgeBases(principalOf(request).accountId, {
        limit,
        offset,
      });
      return {
        knowledge_bases: page.knowledgeBases.map((item) => knowledgeBaseToJson(knowledge, item)),
        total: page.total,
        limit,
        offset,
      };
    },
  );
}

/** GET and DELETE /v1/knowledge-bases/{kb_id}. */
function knowledgeBaseRoutes(app: App, knowledge: KnowledgeService): void {
  app.get(
    '/v1/knowledge-bases/:kb_id',
    {
      config: { access: access.scopes('agents:read'), feature: 'semantic_search' },
      schema: {
        operationId: 'getKnowledgeBase',
        tags,
        summary: 'Get a knowledge base',
        params: KnowledgeBaseParams,
        response: { 200: KnowledgeBaseSchema },
      },
    },
    async (request) =>
      knowledgeBaseToJson(
        knowledge,
        await knowledge.getKnowledgeBase(principalOf(request).accountId, request.params.kb_id),
      ),
  );

  app.delete(
    '/v1/knowledge-bases/:kb_id',
    {
      config: { access: access.scopes('agents:write'), feature: 'semantic_search' },
      schema: {
        operationId: 'deleteKnowledgeBase',
        tags,
        summary: 'Delete a knowledge base',
        description: 'Deletes it with all its documents and their chunks.',
        params: KnowledgeBaseParams,
        response: { 200: DeletedSchema },
      },
    },
    async (request) => {
      const id = request.params.kb_id;
      await knowledge.deleteKnowledgeBase(principalOf(request).accountId, id);
      return { success: true, message: `Knowledge base '${id}' deleted.`, id };
    },
  );
}

const addDocumentDescription = [
  `\`content\` is plain text, Markdown or HTML (\`content_type\`), at most ${knowledgeLimits.maxDocumentBytes} bytes (5 MiB) of UTF-8; \`title\` defaults to the document's own (HTML \`<title>\`, first heading, first line).`,
  'The text is extracted (HTML: scripts, styles, navigation, page header/footer and forms removed; Markdown: markup removed, code blocks kept verbatim) and split by section: each chunk carries its heading path (`Install > Linux`) and packs whole sentences up to `knowledge.chunk_size` characters (default 1200), repeating up to `knowledge.chunk_overlap` characters (default 150) of whole sentences from the previous chunk. Code blocks and list items are never cut at punctuation; a sentence longer than a chunk is cut between words.',
  'Limits: at most 20,000 chunks per document (each section under a heading makes one at least), refused with 400 `invalid_parameter` on `content` as soon as the sections show it. Extraction and chunking run in the text worker threads within a deadline of `text.timeout_ms` plus `text.timeout_ms_per_mib` per MiB of content (2 s + 6 s per MiB by default); text that takes longer gets 400 `invalid_parameter` on `content`, and a full worker queue 503 `service_unavailable` with `Retry-After`. HTML nested deeper than 256 elements is flattened into the element at that depth, its text kept.',
  "The chunks are embedded with the knowledge base's embedding model. When that model is unavailable or fails, the document is still stored, without vectors: `embedding_status` and `embedding_error` say so, and keyword search finds it.",
].join('\n\n');

/** POST /v1/knowledge-bases/{kb_id}/documents. */
function addDocumentRoute(
  app: App,
  knowledge: KnowledgeService,
  options: KnowledgeRouteOptions,
): void {
  app.post(
    '/v1/knowledge-bases/:kb_id/documents',
    {
      config: { access: access.scopes('agents:write'), feature: 'semantic_search' },
      // Documents may be up to 5 MiB of text, and JSON escaping makes the body larger still.
      bodyLimit: Math.max(options.bodyLimitBytes, 16 * 1024 * 1024),
      schema: {
        operationId: 'addDocument',
        tags,
        summary: 'Add a document to a knowledge base',
        description: addDocumentDescription,
        params: KnowledgeBaseParams,
        body: AddDocumentBody,
        response: { 201: DocumentSchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      // Metadata keys are the client's own names, at any depth: none may be a reserved name.
      if (body.metadata !== undefined) assertSafeKeys(body.metadata, 'metadata');
      const document = await knowledge.addDocument(
        principalOf(request).accountId,
        request.params.kb_id,
        {
          title: body.title,
          content: body.content,
          contentType: body.content_type,
          source: body.source,
          metadata: body.metadata,
        },
        clientGoneSignal(reply),
      );
      return reply.code(201).send(documentToJson(document));
    },
  );
}

/** GET /v1/knowledge-bases/{kb_id}/documents, and DELETE of one document. */
function documentRoutes(app: App, knowledge: KnowledgeService): void {
  app.get(
    '/v1/knowledge-bases/:kb_id/documents',
    {
      config: { access: access.scopes('agents:read'), feature: 'semantic_search' },
      schema: {
        operationId: 'listDocuments',
        tags,
        summary: 'List the documents of a knowledge base',
        description: 'Newest first; without their content.',
        params: KnowledgeBaseParams,
        querystring: PageQuery,
        response: { 200: DocumentListSchema },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const page = await knowledge.listDocuments(
        principalOf(request).accountId,
        request.params.kb_id,
        { limit, offset },
      );
      return {
        knowledge_base_id: request.params.kb_id,
        documents: page.documents.map(documentToJson),
        total: page.total,
        limit,
        offset,
      };
    },
  );

  app.delete(
    '/v1/knowledge-bases/:kb_id/documents/:doc_id',
    {
      config: { access: access.scopes('agents:write'), feature: 'semantic_search' },
      schema: {
        operationId: 'deleteDocument',
        tags,
        summary: 'Delete a document',
        description: 'Deletes it with its chunks, from both the keyword and the vector index.',
        params: DocumentParams,
        response: { 200: DeletedSchema },
      },
    },
    async (request) => {
      const { kb_id: kbId, doc_id: documentId } = request.params;
      await knowledge.deleteDocument(principalOf(request).accountId, kbId, documentId);
      return { success: true, message: `Document '${documentId}' deleted.`, id: documentId };
    },
  );
}

const searchDescription = [
  'Hybrid search: the 50 best chunks by keywords (BM25 over SQLite FTS5; `ts_rank_cd` over PostgreSQL full-text search, English stemming, title and heading weighted above text; any word of the query may match, and no input is read as query syntax) and the 50 most similar by the cosine of their embeddings to the query’s (exact, not approximate), fused by reciprocal rank fusion with k = 60.',
  '`score` is the fused score divided by the best possible (first in every ranking used), so it lies in 0..1. `mode` is `hybrid` when the vector ranking took part; `bm25` when the knowledge base has no embedding model, its model is unavailable, or the query could not be embedded — `notice` then says why. `notice` also reports documents stored without vectors.',
].join('\n\n');

/** POST /v1/knowledge-bases/{kb_id}/search. */
function searchRoute(app: App, knowledge: KnowledgeService): void {
  app.post(
    '/v1/knowledge-bases/:kb_id/search',
    {
      config: { access: access.scopes('agents:read'), feature: 'semantic_search' },
      schema: {
        operationId: 'searchKnowledgeBase',
        tags,
        summary: 'Search a knowledge base',
        description: searchDescription,
        params: KnowledgeBaseParams,
        body: SearchBody,
        response: { 200: SearchResponseSchema },
      },
    },
    async (request, reply) => {
      const topK = request.body.top_k ?? knowledgeLimits.defaultTopK;
      const found = await knowledge.search(
        principalOf(request).accountId,
        [request.params.kb_id],
        request.body.query,
        { topK, minScore: request.body.min_score, signal: clientGoneSignal(reply) },
      );
      return {
        results: found.results.map(searchHitToJson),
        mode: found.mode,
        notice: found.notice,
        query: request.body.query,
        top_k: topK,
      };
    },
  );
}
