// Knowledge documents stored in steps (issue 29): a large document's chunks are written in small
// batches, each committed on its own, so that no single commit (SQLite's is synchronous, on the
// event loop) grows with the document and other requests reach the database between batches. A
// document listed here is being stored: it is invisible (not listed, searched, counted nor
// deletable) until its last chunk is in, when its row here is deleted in the same transaction that
// counts it on its knowledge base. One left behind by a stopped process is deleted, with its
// chunks, when the service next starts (after a grace period, for other processes still storing).
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function pendingDocuments(types: ColumnTypes): Migration {
  const timestamp = sql.raw(types.timestamp);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('pending_documents')
        .addColumn('document_id', 'text', (column) =>
          column.primaryKey().references('documents.id').onDelete('cascade'),
        )
        .addColumn('kb_id', 'text', (column) => column.notNull())
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .execute();
    },
  };
}
