// The search side of knowledge bases, one interface over both dialects: the chunk table's dialect
// columns, full-text ranking (FTS5 / tsvector) and vector similarity (sqlite-vec / pgvector / scan).
import { setImmediate } from 'node:timers/promises';
import { sql, type CreateTableBuilder, type Kysely, type RawBuilder } from 'kysely';
import type { DatabaseSchema } from '../schema.js';

export interface ChunkRecord {
  id: string;
  documentId: string;
  kbId: string;
  accountId: string;
  position: number;
  title: string;
  heading: string;
  text: string;
  /** Null when the chunk has no vector (no embedding model, or embedding failed). */
  embedding: Float32Array | null;
  createdAt: string;
}

/** A chunk found by one ranking, best first. */
export interface RankedChunk {
  chunkId: string;
  /** Keyword: the engine's relevance (higher is better); vector: cosine similarity, -1..1. */
  score: number;
}

export interface KnowledgeIndex {
  /** How vectors are ranked here, for logs and the OpenAPI description. */
  readonly vectorMethod: string;
  /** Start-up work of the dialect (PostgreSQL: find or install pgvector); safe to repeat. */
  prepare(): Promise<void>;
  /**
   * Stores chunks with their vectors and full-text entries, on `executor`, in batches that each
   * commit on their own unless `executor` is a transaction. Deleting a chunk row (directly or by
   * cascade) removes it from both indexes.
   */
  insertChunks(executor: Kysely<DatabaseSchema>, chunks: readonly ChunkRecord[]): Promise<void>;
  /** Chunks of these knowledge bases matching any word of `query`, best first. */
  keywordSearch(kbIds: readonly string[], query: string, limit: number): Promise<RankedChunk[]>;
  /**
   * Chunks of these knowledge bases whose vector has the query's length, by cosine similarity,
   * best first. An exact ranking (no approximate index), so results never miss a better chunk.
   */
  vectorSearch(
    kbIds: readonly string[],
    vector: Float32Array,
    limit: number,
  ): Promise<RankedChunk[]>;
}

/** What the knowledge migration leaves to the dialect. */
export interface KnowledgeSchemaDialect {
  /** The integer `number` column (SQLite: the rowid alias the full-text index points at). */
  addChunkNumber<C extends string>(
    table: CreateTableBuilder<'chunks', C>,
  ): CreateTableBuilder<'chunks', C | 'number'>;
  readonly embeddingColumnType: Parameters<CreateTableBuilder<'chunks'>['addColumn']>[1];
  /** Creates the full-text index over `chunks` (title, heading, text) and keeps it in step. */
  createSearchIndex(db: Kysely<unknown>): Promise<void>;
}

// Common English words that match most chunks and carry no meaning for ranking; PostgreSQL's
// `english` configuration drops the same kind of words itself.
const stopWords = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have how i if in ' +
    'into is it its me my not of on or our so such than that the their them then there these ' +
    'they this to was we were what when where which who why will with would you your'
  ).split(' '),
);

/**
 * The words of a user's query as search terms, safe to quote in FTS5 and `websearch_to_tsquery`:
 * only letters, marks and digits survive, so no input (`"foo`, `a AND OR`, `NEAR(`) can be read as
 * query syntax. Words joined by punctuation (`snake_case`, `e-mail`) stay together as a phrase.
 * Stop words are dropped unless nothing else is left.
 */
export function keywordTerms(query: string, maxTerms = 32): string[] {
  const terms: string[] = [];
  for (const word of query.normalize('NFKC').toLowerCase().split(/\s+/)) {
    const parts = word.match(/[\p{L}\p{M}\p{N}]+/gu);
    if (parts === null) continue;
    const term = parts.map((part) => part.slice(0, 64)).join(' ');
    if (!terms.includes(term)) terms.push(term);
  }
  const meaningful = terms.filter((term) => !stopWords.has(term));
  return (meaningful.length > 0 ? meaningful : terms).slice(0, maxTerms);
}

/**
 * The documents of these knowledge bases still being stored (migration 018), as a subquery: their
 * chunks are written before the document is counted, and no search may find them until it is.
 */
export function pendingDocumentIds(kbIds: readonly string[]) {
  return sql`select document_id from pending_documents where kb_id in (${sql.join(kbIds)})`;
}

/** Euclidean length; vectors of length 0 cannot be compared by cosine and are not stored. */
export function vectorNorm(vector: ArrayLike<number>): number {
  let sum = 0;
  for (let index = 0; index < vector.length; index += 1) sum += vector[index]! * vector[index]!;
  return Math.sqrt(sum);
}

/**
 * Rows per INSERT: well under both dialects' limits on bound parameters, and small enough that one
 * batch (SQLite runs it on the event loop, full-text indexing included) takes a few milliseconds.
 */
const chunkInsertBatch = 100;

/**
 * Vector components per INSERT: PostgreSQL's driver writes each one out as text on the event loop
 * (100 rows of 1,536 took 30–40 ms), so rows of long vectors go fewer to a batch.
 */
const vectorComponentsPerBatch = 32 * 1024;

/** Rows per INSERT for these chunks: `chunkInsertBatch`, fewer when their vectors are long. */
function batchRows(chunks: readonly ChunkRecord[]): number {
  const length = chunks.find((chunk) => chunk.embedding !== null)?.embedding?.length ?? 0;
  if (length === 0) return chunkInsertBatch;
  return Math.max(1, Math.min(chunkInsertBatch, Math.floor(vectorComponentsPerBatch / length)));
}

/**
 * Inserts chunk rows in batches, each vector stored as the dialect's `encode` makes it. The event
 * loop turns between batches: a large document is hundreds of batches.
 */
export async function insertChunkRows(
  executor: Kysely<DatabaseSchema>,
  chunks: readonly ChunkRecord[],
  encode: (embedding: Float32Array) => Buffer | RawBuilder<number[]>,
): Promise<void> {
  const rows = batchRows(chunks);
  for (let start = 0; start < chunks.length; start += rows) {
    if (start > 0) await setImmediate();
    await executor
      .insertInto('chunks')
      .values(
        chunks.slice(start, start + rows).map((chunk) => ({
          id: chunk.id,
          document_id: chunk.documentId,
          kb_id: chunk.kbId,
          account_id: chunk.accountId,
          position: chunk.position,
          title: chunk.title,
          heading: chunk.heading,
          text: chunk.text,
          embedding: chunk.embedding === null ? null : encode(chunk.embedding),
          created_at: chunk.createdAt,
        })),
      )
      .execute();
  }
}
