// Knowledge bases for RetrievalAgent over HTTP: create, list, read, delete; their documents; hybrid
// search; as one Fastify plugin over the knowledge service.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginCallback, RawServerDefault } from 'fastify';
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import type { SearchHit } from './hybrid-search.js';
import type { KnowledgeService } from './knowledge-service.js';
import type { KnowledgeBase, KnowledgeDocument } from './knowledge-base.js';
import { knowledgeLimits } from './limits.js';
import { assertSafeKeys, reservedKeysNote } from '../../validation/safe-keys.js';
import { clientGoneSignal } from '../../http/streaming.js';
import {
  commonParameters,
  LimitSchema,
  OffsetSchema,
  PageSchema,
  Timestamp,
} from '../../http/schemas/common.js';
import { principalOf, type App } from '../../http/types.js';

const tags = ['Knowledge bases'];

const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: `Free-form JSON object of your own (at most 16 KiB), returned with search results. At any depth, ${reservedKeysNote}`,
});
const SearchMode = Type.Union([Type.Literal('hybrid'), Type.Literal('bm25')]);
const KnowledgeBaseParams = Type.Object({ kb_id: Type.String({ maxLength: 100 }) });
const DocumentParams = Type.Object({
  kb_id: Type.String({ maxLength: 100 }),
  doc_id: Type.String({ maxLength: 100 }),
});
const PageQuery = Type.Object(
  {
    limit: LimitSchema(),
    offset: OffsetSchema(),
  },
  { description: 'Query parameters not listed here are ignored.' },
);
const DeletedSchema = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  id: Type.String(),
});

const KnowledgeBaseSchema = Type.Object({
  id: Type.String({ description: 'kb_…' }),
  name: Type.String(),
  description: Type.String(),
  embedding_model: Type.Union([Type.String(), Type.Null()], {
    description:
      'The embedding model its chunks are embedded with, chosen at creation; null: keyword search only.',
  }),
  embedding_dimensions: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Length of its vectors, fixed by the first embedded document; null before.',
  }),
  document_count: Type.Integer(),
  chunk_count: Type.Integer(),
  search_mode: Type.Union([Type.Literal('hybrid'), Type.Literal('bm25')], {
    description:
      '`hybrid` when its embedding model is set and available now (keyword and vector ranking), else `bm25` (keywords alone).',
  }),
  notice: Type.Union([Type.String(), Type.Null()], {
    description: 'Why semantic search is off, and how to turn it on; null when it is on.',
  }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

const EmbeddingStatus = Type.Union(
  [
    Type.Literal('complete'),
    Type.Literal('none'),
    Type.Literal('unavailable'),
    Type.Literal('failed'),
  ],
  {
    description:
      '`complete`: every chunk has a vector. `none`: the knowledge base has no embedding model. `unavailable` / `failed`: the model could not be used or failed; the chunks were stored without vectors and are found by keyword search only (`embedding_error` says why).',
  },
);

const DocumentSchema = Type.Object({
  id: Type.String({ description: 'doc_…' }),
  knowledge_base_id: Type.String(),
  title: Type.String(),
  content_type: Type.String(),
  source: Type.Union([Type.String(), Type.Null()]),
  metadata: Metadata,
  char_count: Type.Integer({ description: 'Characters of the extracted plain text.' }),
  chunk_count: Type.Integer(),
  embedding_status: EmbeddingStatus,
  embedding_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp(),
});

const SearchResultSchema = Type.Object({
  document_id: Type.String(),
  title: Type.String({ description: "The document's title." }),
  text: Type.String({ description: 'The matching chunk of the document.' }),
  score: Type.Number({
    minimum: 0,
    maximum: 1,
    description:
      'Reciprocal rank fusion (k = 60) of the keyword and vector rankings, divided by the best possible score: 1.0 is first in every ranking the search used; in hybrid mode a chunk found by one ranking scores at most 0.5.',
  }),
  source: Type.Union([Type.String(), Type.Null()]),
  chunk_id: Type.String({ description: 'chunk_…' }),
  knowledge_base_id: Type.String(),
  heading: Type.String({
    description: "The chunk's section path in its document, e.g. `Install > Linux`.",
  }),
  position: Type.Integer({ description: '0-based position of the chunk in its document.' }),
  metadata: Metadata,
  keyword_rank: Type.Union([Type.Integer(), Type.Null()], {
    description: '1-based rank in the keyword ranking; null when not among its top 50.',
  }),
  vector_rank: Type.Union([Type.Integer(), Type.Null()], {
    description:
      '1-based rank by vector similarity; null when not among its top 50 or in bm25 mode.',
  }),
  similarity: Type.Union([Type.Number(), Type.Null()], {
    description: 'Cosine similarity of the chunk to the query, when it was a vector candidate.',
  }),
});

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

export type KnowledgePlugin = FastifyPluginCallback<
  Record<never, never>,
  RawServerDefault,
  TypeBoxTypeProvider
>;

export interface KnowledgeRouteOptions {
  /** The app's request body limit; a document upload may be larger (up to 16 MiB). */
  readonly bodyLimitBytes: number;
}

/** The routes of knowledge bases, registered by app.ts like any Fastify plugin. */
export function knowledgePlugin(
  knowledge: KnowledgeService,
  options: KnowledgeRouteOptions,
): KnowledgePlugin {
  const plugin: KnowledgePlugin = (app, _options, done) => {
    knowledgeBaseCollectionRoutes(app, knowledge);
    knowledgeBaseRoutes(app, knowledge);
    addDocumentRoute(app, knowledge, options);
    documentRoutes(app, knowledge);
    searchRoute(app, knowledge);
    done();
  };
  // Not encapsulated (Fastify's skip-override, as routing's plugin): its routes join the app's
  // own context, with the app's strict validator and hooks, exactly as before they moved here.
  return Object.assign(plugin, {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: 'knowledge',
  });
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
        body: Type.Object(
          {
            ...commonParameters(),
            name: Type.String({ minLength: 1, maxLength: 200 }),
            description: Type.Optional(Type.String({ maxLength: 5000 })),
            embedding_model: Type.Optional(
              Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()]),
            ),
          },
          { additionalProperties: false },
        ),
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
        response: {
          200: PageSchema('knowledge_bases', KnowledgeBaseSchema),
        },
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
        description: [
          `\`content\` is plain text, Markdown or HTML (\`content_type\`), at most ${knowledgeLimits.maxDocumentBytes} bytes (5 MiB) of UTF-8; \`title\` defaults to the document's own (HTML \`<title>\`, first heading, first line).`,
          'The text is extracted (HTML: scripts, styles, navigation, page header/footer and forms removed; Markdown: markup removed, code blocks kept verbatim) and split by section: each chunk carries its heading path (`Install > Linux`) and packs whole sentences up to `knowledge.chunk_size` characters (default 1200), repeating up to `knowledge.chunk_overlap` characters (default 150) of whole sentences from the previous chunk. Code blocks and list items are never cut at punctuation; a sentence longer than a chunk is cut between words.',
          'Limits: at most 20,000 chunks per document (each section under a heading makes one at least), refused with 400 `invalid_parameter` on `content` as soon as the sections show it. Extraction and chunking run in the text worker threads within a deadline of `text.timeout_ms` plus `text.timeout_ms_per_mib` per MiB of content (2 s + 6 s per MiB by default); text that takes longer gets 400 `invalid_parameter` on `content`, and a full worker queue 503 `service_unavailable` with `Retry-After`. HTML nested deeper than 256 elements is flattened into the element at that depth, its text kept.',
          "The chunks are embedded with the knowledge base's embedding model. When that model is unavailable or fails, the document is still stored, without vectors: `embedding_status` and `embedding_error` say so, and keyword search finds it.",
        ].join('\n\n'),
        params: KnowledgeBaseParams,
        body: Type.Object(
          {
            ...commonParameters(),
            title: Type.Optional(Type.String({ maxLength: 500 })),
            content: Type.String({
              // The schema's bound is the body limit's (lengths count UTF-16 code units, in
              // constant time: src/validation/ajv.ts); the service checks the exact limit, in UTF-8
              // bytes, and refuses content without text, each in its own words.
              maxLength: 16 * 1024 * 1024,
              description: 'At most 5 MiB of UTF-8 (and within the request body limit).',
            }),
            content_type: Type.Optional(
              Type.Union(
                [
                  Type.Literal('text/plain'),
                  Type.Literal('text/markdown'),
                  Type.Literal('text/html'),
                ],
                { default: 'text/plain' },
              ),
            ),
            source: Type.Optional(
              Type.Union([Type.String({ maxLength: 2048 }), Type.Null()], {
                description:
                  'Where the document comes from (a URL, a file name); returned with search results.',
              }),
            ),
            metadata: Type.Optional(Metadata),
          },
          { additionalProperties: false },
        ),
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
        response: {
          200: Type.Object({
            knowledge_base_id: Type.String(),
            ...PageSchema('documents', DocumentSchema).properties,
          }),
        },
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
        description: [
          'Hybrid search: the 50 best chunks by keywords (BM25 over SQLite FTS5; `ts_rank_cd` over PostgreSQL full-text search, English stemming, title and heading weighted above text; any word of the query may match, and no input is read as query syntax) and the 50 most similar by the cosine of their embeddings to the query’s (exact, not approximate), fused by reciprocal rank fusion with k = 60.',
          '`score` is the fused score divided by the best possible (first in every ranking used), so it lies in 0..1. `mode` is `hybrid` when the vector ranking took part; `bm25` when the knowledge base has no embedding model, its model is unavailable, or the query could not be embedded — `notice` then says why. `notice` also reports documents stored without vectors.',
        ].join('\n\n'),
        params: KnowledgeBaseParams,
        body: Type.Object(
          {
            ...commonParameters(),
            query: Type.String({ minLength: 1, maxLength: knowledgeLimits.maxQueryLength }),
            top_k: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: knowledgeLimits.maxTopK,
                default: knowledgeLimits.defaultTopK,
              }),
            ),
            min_score: Type.Optional(
              Type.Number({
                minimum: 0,
                maximum: 1,
                description: 'Leave out results scoring below this.',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            results: Type.Array(SearchResultSchema),
            mode: SearchMode,
            notice: Type.Union([Type.String(), Type.Null()]),
            query: Type.String(),
            top_k: Type.Integer(),
          }),
        },
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
