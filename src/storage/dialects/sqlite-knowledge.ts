// Knowledge-base search on SQLite: FTS5 with BM25 for keywords, sqlite-vec's cosine distance over
// float32 BLOBs for vectors.
//
// - `chunks.number` is an INTEGER PRIMARY KEY (the rowid alias, stable across VACUUM), and the
//   full-text table `chunks_fts` is contentless (`content=''`, `contentless_delete=1`): it keeps the
//   index only, keyed by that rowid, and triggers on `chunks` keep it in step — so a document or
//   knowledge-base delete, cascading to its chunks, leaves nothing behind in either index.
// - The knowledge base's id is indexed too, so a search matches only its chunks inside FTS5 and
//   ranks and cuts there, instead of ranking every tenant's matches and filtering afterwards.
// - Tokens: Porter stemming over unicode61 with diacritics folded; BM25 weights title 2, heading
//   1.5, text 1 (the title is repeated on each chunk).
// - Vectors are little-endian float32 BLOBs in `chunks.embedding`; `vec_distance_cosine` (sqlite-vec,
//   loaded with each connection in dialects/sqlite.ts) ranks a knowledge base's chunks by an exact
//   scan in C — no approximate index, fine to ~100k chunks per knowledge base.
// - Neither ranking finds the chunks of a document still being stored (`pending_documents`).
import { sql, type Kysely } from 'kysely';
import type { DatabaseSchema } from '../schema.js';
import {
  insertChunkRows,
  keywordTerms,
  pendingDocumentIds,
  vectorNorm,
  type ChunkRecord,
  type KnowledgeIndex,
  type KnowledgeSchemaDialect,
  type RankedChunk,
} from './knowledge-index.js';

export const sqliteKnowledgeSchema: KnowledgeSchemaDialect = {
  addChunkNumber: (table) => table.addColumn('number', 'integer', (column) => column.primaryKey()),
  embeddingColumnType: 'blob',
  async createSearchIndex(db) {
    await sql`
      create virtual table chunks_fts using fts5(
        kb_id, title, heading, text,
        content = '', contentless_delete = 1,
        tokenize = 'porter unicode61 remove_diacritics 2'
      )`.execute(db);
    await sql`
      create trigger chunks_fts_insert after insert on chunks begin
        insert into chunks_fts (rowid, kb_id, title, heading, text)
        values (new.number, new.kb_id, new.title, new.heading, new.text);
      end`.execute(db);
    await sql`
      create trigger chunks_fts_delete after delete on chunks begin
        delete from chunks_fts where rowid = old.number;
      end`.execute(db);
    await sql`
      create trigger chunks_fts_update after update of kb_id, title, heading, text on chunks begin
        delete from chunks_fts where rowid = old.number;
        insert into chunks_fts (rowid, kb_id, title, heading, text)
        values (new.number, new.kb_id, new.title, new.heading, new.text);
      end`.execute(db);
  },
};

function toBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/**
 * FTS5 query text: chunks of the knowledge bases (their id, a phrase in the `kb_id` column) that
 * match any of the terms (each a quoted phrase) in title, heading or text.
 */
export function fts5Query(kbIds: readonly string[], query: string): string | null {
  const terms = keywordTerms(query);
  if (terms.length === 0 || kbIds.length === 0) return null;
  const knowledgeBases = kbIds.map((id) => `"${id.replaceAll('"', '')}"`).join(' OR ');
  const words = terms.map((term) => `"${term}"`).join(' OR ');
  return `{kb_id} : (${knowledgeBases}) AND {title heading text} : (${words})`;
}

/** The rowids of the chunks of documents still being stored, which no search may find yet. */
function pendingChunkNumbers(kbIds: readonly string[]) {
  return sql`
    select c.number from pending_documents p
    join chunks c on c.document_id = p.document_id
    where p.kb_id in (${sql.join(kbIds)})`;
}

export function createSqliteKnowledgeIndex(db: Kysely<DatabaseSchema>): KnowledgeIndex {
  return {
    vectorMethod: 'sqlite-vec vec_distance_cosine (exact scan)',

    prepare: () => Promise.resolve(),

    insertChunks: (executor, chunks: readonly ChunkRecord[]) =>
      insertChunkRows(executor, chunks, toBlob),

    async keywordSearch(kbIds, query, limit): Promise<RankedChunk[]> {
      const match = fts5Query(kbIds, query);
      if (match === null) return [];
      // The index itself narrows the match to the knowledge bases, so only the best `limit`
      // entries are joined to their chunks. bm25() is smaller for better matches; ties go by
      // rowid inside the index and by chunk id after, the same way every time. The kb_id column
      // weighs 0, and the join re-checks it (ids are matched case-insensitively as tokens).
      // Materialising the matches keeps the full-text table from being probed by rowid: SQLite
      // 3.53's FTS5 ignores a `rowid = ?` bound at run time next to MATCH.
      const { rows } = await sql<{ id: string; rank: number }>`
        with matches as materialized (
          select rowid as number, bm25(chunks_fts, 0.0, 2.0, 1.5, 1.0) as rank
          from chunks_fts
          where chunks_fts match ${match}
            and rowid not in (${pendingChunkNumbers(kbIds)})
          order by rank, rowid
          limit ${limit}
        )
        select c.id as id, matches.rank as rank
        from matches
        join chunks c on c.number = matches.number
        where c.kb_id in (${sql.join(kbIds)})
        order by matches.rank, c.id`.execute(db);
      return rows.map((row) => ({ chunkId: row.id, score: -row.rank }));
    },

    async vectorSearch(kbIds, vector, limit): Promise<RankedChunk[]> {
      // A zero vector has no direction: vec_distance_cosine answers NULL for it.
      if (kbIds.length === 0 || vectorNorm(vector) === 0) return [];
      // Materialised so that the distance is computed once per chunk, not again for the filter.
      const { rows } = await sql<{ id: string; distance: number }>`
        with distances as materialized (
          select id, vec_distance_cosine(embedding, ${toBlob(vector)}) as distance
          from chunks
          where kb_id in (${sql.join(kbIds)})
            and embedding is not null and length(embedding) = ${vector.length * 4}
            and document_id not in (${pendingDocumentIds(kbIds)})
        )
        select id, distance from distances
        where distance is not null
        order by distance, id
        limit ${limit}`.execute(db);
      return rows.map((row) => ({ chunkId: row.id, score: 1 - row.distance }));
    },
  };
}
