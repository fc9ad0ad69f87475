// Knowledge-base search on PostgreSQL: a generated, weighted tsvector with a GIN index for keywords;
// vectors as real[] ranked by pgvector when it is installed, else by an exact cosine scan in SQL.
//
// - `chunks.search` is generated from title (weight A), heading (B) and text (D) with the `english`
//   configuration (stemming, stop words); queries go through `websearch_to_tsquery`, which never
//   raises a syntax error, over terms already reduced to letters and digits, and are ranked by
//   `ts_rank_cd` (cover density, normalised by document length). PostgreSQL has no BM25: the
//   ranking weighs how often and how close the words occur, not how rare they are.
// - Vectors are `real[]`: `vector(n)` cannot be the column type because each knowledge base has
//   its own embedding model and so its own n. With pgvector (`create extension vector`, tried at
//   start) the arrays are cast to `vector` and ordered by `<=>`; without it, cosine similarity is
//   computed in SQL over `unnest(embedding, query)`. Both are exact scans of the knowledge bases'
//   chunks: correct first, fast enough for tens of thousands of chunks per knowledge base.
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

export const postgresKnowledgeSchema: KnowledgeSchemaDialect = {
  addChunkNumber: (table) =>
    table.addColumn('number', 'bigint', (column) =>
      column.primaryKey().generatedAlwaysAsIdentity(),
    ),
  embeddingColumnType: sql`real[]`,
  async createSearchIndex(db) {
    await sql`
      alter table chunks add column search tsvector generated always as (
        setweight(to_tsvector('english'::regconfig, title), 'A') ||
        setweight(to_tsvector('english'::regconfig, heading), 'B') ||
        setweight(to_tsvector('english'::regconfig, text), 'D')
      ) stored`.execute(db);
    await sql`create index chunks_search on chunks using gin (search)`.execute(db);
  },
};

/** `websearch_to_tsquery` text: each term quoted (a phrase), any of them may match. */
export function websearchQuery(query: string): string | null {
  const terms = keywordTerms(query);
  return terms.length === 0 ? null : terms.map((term) => `"${term}"`).join(' or ');
}

/**
 * A vector as the text of a PostgreSQL `real[]`, each component to nine significant digits, which
 * give every float32 back exactly. Given the numbers instead, the driver writes each as a double's
 * shortest text (up to 17 digits) and quotes and escapes it with two regular expressions: 7.3 s of
 * CPU for the vectors of a 5 MB document (5,000 chunks of 1,536 components), against 1.6 s.
 */
export function realArrayText(vector: Float32Array): string {
  let text = '{';
  for (let index = 0; index < vector.length; index += 1) {
    if (index > 0) text += ',';
    text += vector[index]!.toPrecision(9);
  }
  return `${text}}`;
}

export function createPostgresKnowledgeIndex(db: Kysely<DatabaseSchema>): KnowledgeIndex {
  let pgvector = false;

  const index: KnowledgeIndex = {
    get vectorMethod() {
      return pgvector
        ? 'pgvector <=> over real[] cast to vector (exact scan)'
        : 'cosine similarity in SQL over real[] (exact scan; pgvector not installed)';
    },

    async prepare() {
      // Needs the extension's files on the server and the right to create it; without either,
      // the exact scan in SQL serves instead. A concurrent start may race us to it: also fine.
      const { rows: available } = await sql<{
        name: string;
      }>`select name from pg_available_extensions where name = 'vector'`.execute(db);
      if (available.length > 0) {
        await sql`create extension if not exists vector`.execute(db).catch(() => undefined);
      }
      const { rows } = await sql<{
        present: boolean;
      }>`select to_regtype('vector') is not null as present`.execute(db);
      pgvector = rows[0]?.present === true;
    },

    insertChunks: (executor, chunks: readonly ChunkRecord[]) =>
      insertChunkRows(
        executor,
        chunks,
        (embedding) => sql<number[]>`${realArrayText(embedding)}::real[]`,
      ),

    async keywordSearch(kbIds, query, limit): Promise<RankedChunk[]> {
      const text = websearchQuery(query);
      if (text === null || kbIds.length === 0) return [];
      // Weights {D, C, B, A}: text 0.5, heading 0.75, title 1 — the ratios of the SQLite BM25.
      const { rows } = await sql<{ id: string; rank: number }>`
        select c.id, ts_rank_cd('{0.5, 0.5, 0.75, 1.0}'::float4[], c.search, q, 1) as rank
        from chunks c, websearch_to_tsquery('english', ${text}) q
        where c.kb_id in (${sql.join(kbIds)}) and c.search @@ q
          and c.document_id not in (${pendingDocumentIds(kbIds)})
        order by rank desc, c.id
        limit ${limit}`.execute(db);
      return rows.map((row) => ({ chunkId: row.id, score: Number(row.rank) }));
    },

    async vectorSearch(kbIds, vector, limit): Promise<RankedChunk[]> {
      const norm = vectorNorm(vector);
      if (kbIds.length === 0 || norm === 0) return [];
      // pgvector's text of the query vector, written once for the two places that use it.
      const literal = pgvector ? `[${vector.join(',')}]` : '';
      const { rows } = pgvector
        ? await sql<{ id: string; similarity: number }>`
            select id, 1 - (embedding::vector <=> ${literal}::vector) as similarity
            from chunks
            where kb_id in (${sql.join(kbIds)}) and cardinality(embedding) = ${vector.length}
              and document_id not in (${pendingDocumentIds(kbIds)})
            order by embedding::vector <=> ${literal}::vector, id
            limit ${limit}`.execute(db)
        : await sql<{ id: string; similarity: number }>`
            select c.id, s.dot / (sqrt(s.squares) * ${norm}) as similarity
            from chunks c
            cross join lateral (
              select sum(a::float8 * b::float8) as dot, sum(a::float8 * a::float8) as squares
              from unnest(c.embedding, ${realArrayText(vector)}::real[]) as pair (a, b)
            ) s
            where c.kb_id in (${sql.join(kbIds)})
              and cardinality(c.embedding) = ${vector.length}
              and c.document_id not in (${pendingDocumentIds(kbIds)})
              and s.squares > 0
            order by similarity desc, c.id
            limit ${limit}`.execute(db);
      return rows.map((row) => ({ chunkId: row.id, score: Number(row.similarity) }));
    },
  };
  return index;
}
