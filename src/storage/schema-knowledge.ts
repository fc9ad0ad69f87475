// Table shapes of the knowledge bases, their documents and chunks, as Kysely sees them (part of
// DatabaseSchema in schema.ts; its conventions hold here).
import type { ColumnType } from 'kysely';

export interface KnowledgeBasesTable {
  id: string;
  account_id: string;
  name: string;
  description: string;
  /** The catalog's embedding model chosen at creation; null: keyword search only. */
  embedding_model: string | null;
  /** Length of the stored vectors, fixed by the first document embedded; null before. */
  embedding_dimensions: number | null;
  document_count: number;
  chunk_count: number;
  created_at: string;
  updated_at: string;
}

export interface DocumentsTable {
  id: string;
  kb_id: string;
  account_id: string;
  title: string;
  content_type: string;
  source: string | null;
  /** JSON object. */
  metadata: string;
  /** The content as uploaded. */
  content: string;
  /** The plain text extracted from it, which was chunked. */
  text: string;
  char_count: number;
  chunk_count: number;
  /** `complete`, `none` (no embedding model), `unavailable` or `failed`. */
  embedding_status: string;
  embedding_error: string | null;
  created_at: string;
}

/** A document whose chunks are being stored: invisible until they all are (migration 018). */
export interface PendingDocumentsTable {
  document_id: string;
  kb_id: string;
  created_at: string;
}

export interface ChunksTable {
  /** Integer row number: the SQLite full-text index's rowid; an identity on PostgreSQL. */
  number: ColumnType<number, never, never>;
  id: string;
  document_id: string;
  kb_id: string;
  account_id: string;
  position: number;
  /** The document's title, repeated so that the full-text index can weight it per chunk. */
  title: string;
  heading: string;
  text: string;
  /** float32 BLOB on SQLite, real[] on PostgreSQL (see storage/dialects/*-knowledge.ts). */
  embedding: ColumnType<Buffer | number[] | null, Buffer | number[] | null, never>;
  created_at: string;
}
