// Knowledge bases for RetrievalAgent: their documents and the documents' chunks, with the
// dialect's full-text index and vector column (see storage/dialects/*-knowledge.ts).
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';
import { knowledgeSchemaFor } from '../dialects/knowledge-dialect.js';

export function knowledge(types: ColumnTypes): Migration {
  const timestamp = sql.raw(types.timestamp);
  const json = sql.raw(types.json);
  const dialect = knowledgeSchemaFor(types);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('knowledge_bases')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('description', 'text', (column) => column.notNull())
        .addColumn('embedding_model', 'text')
        .addColumn('embedding_dimensions', 'integer')
        // Kept in the same transaction as the documents and chunks they count.
        .addColumn('document_count', 'integer', (column) => column.notNull())
        .addColumn('chunk_count', 'integer', (column) => column.notNull())
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .addColumn('updated_at', timestamp, (column) => column.notNull())
        .execute();
      await db.schema
        .createIndex('knowledge_bases_by_account')
        .on('knowledge_bases')
        .columns(['account_id', 'created_at'])
        .execute();

      await db.schema
        .createTable('documents')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('kb_id', 'text', (column) =>
          column.notNull().references('knowledge_bases.id').onDelete('cascade'),
        )
        .addColumn('account_id', 'text', (column) => column.notNull())
        .addColumn('title', 'text', (column) => column.notNull())
        .addColumn('content_type', 'text', (column) => column.notNull())
        .addColumn('source', 'text')
        .addColumn('metadata', json, (column) => column.notNull())
        .addColumn('char_count', 'integer', (column) => column.notNull())
        .addColumn('chunk_count', 'integer', (column) => column.notNull())
        .addColumn('embedding_status', 'text', (column) => column.notNull())
        .addColumn('embedding_error', 'text')
        .addColumn('created_at', timestamp, (column) => column.notNull())
        // Up to megabytes each, so last: SQLite reads a row's columns in order, through overflow
        // pages, and every other column stays cheap to read.
        .addColumn('content', 'text', (column) => column.notNull())
        .addColumn('text', 'text', (column) => column.notNull())
        .execute();
      await db.schema
        .createIndex('documents_by_kb')
        .on('documents')
        .columns(['kb_id', 'created_at'])
        .execute();
      // Covers the per-search count of documents stored without vectors.
      await db.schema
        .createIndex('documents_by_embedding_status')
        .on('documents')
        .columns(['kb_id', 'embedding_status', 'chunk_count'])
        .execute();

      await dialect
        .addChunkNumber(db.schema.createTable('chunks'))
        .addColumn('id', 'text', (column) => column.notNull().unique())
        .addColumn('document_id', 'text', (column) =>
          column.notNull().references('documents.id').onDelete('cascade'),
        )
        .addColumn('kb_id', 'text', (column) => column.notNull())
        .addColumn('account_id', 'text', (column) => column.notNull())
        .addColumn('position', 'integer', (column) => column.notNull())
        .addColumn('title', 'text', (column) => column.notNull())
        .addColumn('heading', 'text', (column) => column.notNull())
        .addColumn('text', 'text', (column) => column.notNull())
        .addColumn('embedding', dialect.embeddingColumnType)
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .execute();
      await db.schema
        .createIndex('chunks_by_document')
        .on('chunks')
        .columns(['document_id', 'position'])
        .execute();
      // Vector scans and keyword filters select a knowledge base's chunks.
      await db.schema.createIndex('chunks_by_kb').on('chunks').column('kb_id').execute();
      await dialect.createSearchIndex(db);
    },
  };
}
