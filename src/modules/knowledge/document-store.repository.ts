// Writing a knowledge document with its chunks, in steps that each commit a bounded amount, the
// document invisible (`pending_documents`, migration 018) until the last step counts it.
import type { Kysely } from 'kysely';
import type { ChunkRecord, KnowledgeIndex } from '../../storage/dialects/knowledge-index.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { NewKnowledgeDocument } from './knowledge-base.js';

export type InsertDocumentOutcome =
  | { kind: 'stored' }
  | { kind: 'knowledge-base-missing' }
  /** The knowledge base's vectors have another length (its model changed meanwhile). */
  | { kind: 'dimensions-differ'; dimensions: number };

/** Thrown inside the transaction to roll it back. */
class DimensionsDiffer extends Error {
  constructor(readonly dimensions: number) {
    super('embedding dimensions differ');
  }
}

export class DocumentStore {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly index: KnowledgeIndex,
  ) {}

  /**
   * Stores the document and its chunks, then counts them on the knowledge base, in steps that each
   * commit a bounded amount (SQLite commits synchronously, on the event loop, and the transaction
   * of a 5 MiB document with thousands of chunks and vectors held the loop and kept every other
   * request from the database for as long as it lasted):
   *
   * 1. the knowledge base is checked (its row updated, which locks it; the first vectors fix its
   *    `embedding_dimensions`, and vectors of another length store nothing) and the document's row
   *    is written, marked pending (`pending_documents`), which keeps it and its chunks invisible;
   * 2. the chunks are written in batches, each its own statement, the loop turning between them;
   * 3. the pending mark is removed and the document counted on its knowledge base, together.
   *
   * So a document is never visible half-stored, and it is stored once step 3 has committed. A
   * failure in between deletes what was written; a process stopped in between leaves a pending
   * document, which `discardPending` deletes at the next start.
   */
  async insert(
    document: NewKnowledgeDocument,
    chunks: readonly ChunkRecord[],
    updatedAt: string,
  ): Promise<InsertDocumentOutcome> {
    const started = await this.start(document, chunks, updatedAt);
    if (started.kind !== 'stored') return started;
    try {
      await this.index.insertChunks(this.db, chunks);
      return await this.finish(document, chunks.length, updatedAt);
    } catch (error) {
      // The knowledge base was deleted meanwhile (the document with it): its chunks cannot refer
      // to the document any more. Otherwise what was written goes, and the failure is the caller's.
      if (!(await this.exists(document.id))) return { kind: 'knowledge-base-missing' };
      // Should this fail too, the next start deletes the pending document.
      await this.db
        .deleteFrom('documents')
        .where('id', '=', document.id)
        .execute()
        .catch(() => undefined);
      throw error;
    }
  }

  /** Step 1 of `insert`: the knowledge base checked, the document written as pending. */
  private async start(
    document: NewKnowledgeDocument,
    chunks: readonly ChunkRecord[],
    createdAt: string,
  ): Promise<InsertDocumentOutcome> {
    const dimensions = chunks.find((chunk) => chunk.embedding !== null)?.embedding?.length ?? null;
    try {
      return await this.db.transaction().execute(async (transaction) => {
        const checked = await transaction
          .updateTable('knowledge_bases')
          .set((eb) =>
            dimensions === null
              ? { embedding_dimensions: eb.ref('embedding_dimensions') }
              : {
                  embedding_dimensions: eb.fn.coalesce('embedding_dimensions', eb.val(dimensions)),
                },
          )
          .where('id', '=', document.kbId)
          .where('account_id', '=', document.accountId)
          .returning('embedding_dimensions')
          .executeTakeFirst();
        if (checked === undefined) return { kind: 'knowledge-base-missing' as const };
        const stored =
          checked.embedding_dimensions === null ? null : Number(checked.embedding_dimensions);
        if (dimensions !== null && stored !== dimensions) {
          throw new DimensionsDiffer(stored ?? 0);
        }
        await transaction
          .insertInto('documents')
          .values({
            id: document.id,
            kb_id: document.kbId,
            account_id: document.accountId,
            title: document.title,
            content_type: document.contentType,
            source: document.source,
            metadata: JSON.stringify(document.metadata),
            content: document.content,
            text: document.text,
            char_count: document.charCount,
            chunk_count: document.chunkCount,
            embedding_status: document.embeddingStatus,
            embedding_error: document.embeddingError,
            created_at: document.createdAt,
          })
          .execute();
        await transaction
          .insertInto('pending_documents')
          .values({ document_id: document.id, kb_id: document.kbId, created_at: createdAt })
          .execute();
        return { kind: 'stored' as const };
      });
    } catch (error) {
      if (error instanceof DimensionsDiffer) {
        return { kind: 'dimensions-differ', dimensions: error.dimensions };
      }
      throw error;
    }
  }

  /** Step 3 of `insert`: the pending mark removed and the document counted, together. */
  private async finish(
    document: NewKnowledgeDocument,
    chunkCount: number,
    updatedAt: string,
  ): Promise<InsertDocumentOutcome> {
    return this.db.transaction().execute(async (transaction) => {
      const counted = await transaction
        .updateTable('knowledge_bases')
        .set((eb) => ({
          document_count: eb('document_count', '+', 1),
          chunk_count: eb('chunk_count', '+', chunkCount),
          updated_at: updatedAt,
        }))
        .where('id', '=', document.kbId)
        .where('account_id', '=', document.accountId)
        .returning('id')
        .executeTakeFirst();
      if (counted === undefined) return { kind: 'knowledge-base-missing' as const };
      await transaction
        .deleteFrom('pending_documents')
        .where('document_id', '=', document.id)
        .execute();
      return { kind: 'stored' as const };
    });
  }

  private async exists(id: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('documents')
      .select('id')
      .where('id', '=', id)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Deletes, with their chunks, the documents left pending before `before` by a process that
   * stopped while storing them; how many there were.
   */
  async discardPending(before: string): Promise<number> {
    const result = await this.db
      .deleteFrom('documents')
      .where('id', 'in', (eb) =>
        eb.selectFrom('pending_documents').select('document_id').where('created_at', '<', before),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
