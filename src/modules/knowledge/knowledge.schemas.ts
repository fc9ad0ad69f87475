// The HTTP shapes of knowledge bases: parameters, request bodies and answers of the knowledge-base,
// document and search routes.
import Type from 'typebox';
import {
  commonParameters,
  LimitSchema,
  OffsetSchema,
  PageSchema,
  Timestamp,
} from '../../http/schemas/common.js';
import { reservedKeysNote } from '../../validation/safe-keys.js';
import { knowledgeLimits } from './limits.js';

export const tags = ['Knowledge bases'];

const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: `Free-form JSON object of your own (at most 16 KiB), returned with search results. At any depth, ${reservedKeysNote}`,
});
const SearchMode = Type.Union([Type.Literal('hybrid'), Type.Literal('bm25')]);
export const KnowledgeBaseParams = Type.Object({ kb_id: Type.String({ maxLength: 100 }) });
export const DocumentParams = Type.Object({
  kb_id: Type.String({ maxLength: 100 }),
  doc_id: Type.String({ maxLength: 100 }),
});
export const PageQuery = Type.Object(
  {
    limit: LimitSchema(),
    offset: OffsetSchema(),
  },
  { description: 'Query parameters not listed here are ignored.' },
);
export const DeletedSchema = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  id: Type.String(),
});
export const KnowledgeBaseSchema = Type.Object({
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

export const DocumentSchema = Type.Object({
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

export const SearchResultSchema = Type.Object({
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

export const CreateKnowledgeBaseBody = Type.Object(
  {
    ...commonParameters(),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    embedding_model: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()]),
    ),
  },
  { additionalProperties: false },
);

export const KnowledgeBaseListSchema = PageSchema('knowledge_bases', KnowledgeBaseSchema);

export const AddDocumentBody = Type.Object(
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
        [Type.Literal('text/plain'), Type.Literal('text/markdown'), Type.Literal('text/html')],
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
);

export const DocumentListSchema = Type.Object({
  knowledge_base_id: Type.String(),
  ...PageSchema('documents', DocumentSchema).properties,
});

export const SearchBody = Type.Object(
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
);

export const SearchResponseSchema = Type.Object({
  results: Type.Array(SearchResultSchema),
  mode: SearchMode,
  notice: Type.Union([Type.String(), Type.Null()]),
  query: Type.String(),
  top_k: Type.Integer(),
});
