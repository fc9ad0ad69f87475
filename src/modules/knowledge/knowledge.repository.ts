// Knowledge bases, their documents and chunks. Every query is scoped by account. A document and its
// chunks are written by DocumentStore, invisible (`pending_documents`) until it counts them on the
// knowledge base: no query here shows a pending document.
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { DatabaseSchema } from '../../storage/schema.js';
import { pageOf } from '../../storage/repositories/paging.js';
import type {
  KnowledgeBase,
  EmbeddingStatus,
  KnowledgeDocument,
  ChunkWithDocument,
} from './knowledge-base.js';

export interface Page {
  limit: number;
  offset: number;
}

/** Documents of a knowledge base whose chunks have no vectors although it has a model. */
export interface UnembeddedDocuments {
  kbId: string;
  documents: number;
  chunks: number;
}

function toKnowledgeBase(row: DatabaseSchema['knowledge_bases']): KnowledgeBase {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    description: row.description,
    embeddingModel: row.embedding_model,
    embeddingDimensions:
      row.embedding_dimensions === null ? null : Number(row.embedding_dimensions),
    documentCount: Number(row.document_count),
    chunkCount: Number(row.chunk_count),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

type DocumentRow = Omit<DatabaseSchema['documents'], 'content' | 'text'>;

const documentColumns = [
  'id',
  'kb_id',
  'account_id',
  'title',
  'content_type',
  'source',
  'metadata',
  'char_count',
  'chunk_count',
  'embedding_status',
  'embedding_error',
  'created_at',
] as const;

function toDocument(row: DocumentRow): KnowledgeDocument {
  return {
    id: row.id,
    kbId: row.kb_id,
    accountId: row.account_id,
    title: row.title,
    contentType: row.content_type,
    source: row.source,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    charCount: Number(row.char_count),
    chunkCount: Number(row.chunk_count),
    embeddingStatus: row.embedding_status as EmbeddingStatus,
    embeddingError: row.embedding_error,
    createdAt: row.created_at,
  };
}

/** The documents of these knowledge bases still being stored (DocumentStore), as a subquery. */
function pendingIn(kbIds: readonly string[]) {
  return (eb: ExpressionBuilder<DatabaseSchema, keyof DatabaseSchema>) =>
    eb.selectFrom('pending_documents').select('document_id').where('kb_id', 'in', kbIds);
}

export class KnowledgeRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insertKnowledgeBase(knowledgeBase: KnowledgeBase): Promise<void> {
    await this.db
      .insertInto('knowledge_bases')
      .values({
        id: knowledgeBase.id,
        account_id: knowledgeBase.accountId,
        name: knowledgeBase.name,
        description: knowledgeBase.description,
        embedding_model: knowledgeBase.embeddingModel,
        embedding_dimensions: knowledgeBase.embeddingDimensions,
        document_count: 0,
        chunk_count: 0,
        created_at: knowledgeBase.createdAt,
        updated_at: knowledgeBase.updatedAt,
      })
      .execute();
  }

  async findKnowledgeBase(accountId: string, id: string): Promise<KnowledgeBase | undefined> {
    const row = await this.db
      .selectFrom('knowledge_bases')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toKnowledgeBase(row);
  }

  /** The account's knowledge bases among `ids` (unknown and foreign ids are simply absent). */
  async findKnowledgeBases(accountId: string, ids: readonly string[]): Promise<KnowledgeBase[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .selectFrom('knowledge_bases')
      .selectAll()
      .where('id', 'in', ids)
      .where('account_id', '=', accountId)
      .execute();
    return rows.map(toKnowledgeBase);
  }

  async listKnowledgeBases(
    accountId: string,
    page: Page,
  ): Promise<{ knowledgeBases: KnowledgeBase[]; total: number }> {
    const { rows, total } = await pageOf(
      this.db.selectFrom('knowledge_bases').where('account_id', '=', accountId),
      page,
      (query) => query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
    );
    return { knowledgeBases: rows.map(toKnowledgeBase), total };
  }

  /** Deletes it with its documents and chunks (cascades); false when there was none. */
  async deleteKnowledgeBase(accountId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('knowledge_bases')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async listDocuments(
    accountId: string,
    kbId: string,
    page: Page,
  ): Promise<{ documents: KnowledgeDocument[]; total: number }> {
    const { rows, total } = await pageOf(
      this.db
        .selectFrom('documents')
        .where('kb_id', '=', kbId)
        .where('account_id', '=', accountId)
        .where('id', 'not in', pendingIn([kbId])),
      page,
      (query) => query.select(documentColumns).orderBy('created_at', 'desc').orderBy('id', 'desc'),
    );
    return { documents: rows.map(toDocument), total };
  }

  /** Deletes the document with its chunks and uncounts them; false when there was none. */
  async deleteDocument(
    accountId: string,
    kbId: string,
    documentId: string,
    updatedAt: string,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const deleted = await transaction
        .deleteFrom('documents')
        .where('id', '=', documentId)
        .where('kb_id', '=', kbId)
        .where('account_id', '=', accountId)
        // One being stored is not counted yet: it cannot be deleted before it is.
        .where('id', 'not in', pendingIn([kbId]))
        .returning('chunk_count')
        .executeTakeFirst();
      if (deleted === undefined) return false;
      await transaction
        .updateTable('knowledge_bases')
        .set((eb) => ({
          document_count: eb('document_count', '-', 1),
          chunk_count: eb('chunk_count', '-', Number(deleted.chunk_count)),
          updated_at: updatedAt,
        }))
        .where('id', '=', kbId)
        .execute();
      return true;
    });
  }

  async chunksWithDocuments(chunkIds: readonly string[]): Promise<Map<string, ChunkWithDocument>> {
    if (chunkIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('chunks')
      .innerJoin('documents', 'documents.id', 'chunks.document_id')
      .select([
        'chunks.id as id',
        'chunks.document_id as document_id',
        'chunks.kb_id as kb_id',
        'chunks.position as position',
        'documents.title as title',
        'chunks.heading as heading',
        'chunks.text as text',
        'documents.source as source',
        'documents.metadata as metadata',
      ])
      .where('chunks.id', 'in', chunkIds)
      .where('documents.id', 'not in', (eb) =>
        eb.selectFrom('pending_documents').select('document_id'),
      )
      .execute();
    return new Map(
      rows.map((row) => [
        row.id,
        {
          id: row.id,
          documentId: row.document_id,
          kbId: row.kb_id,
          position: Number(row.position),
          title: row.title,
          heading: row.heading,
          text: row.text,
          source: row.source,
          metadata: JSON.parse(row.metadata) as Record<string, unknown>,
        },
      ]),
    );
  }

  /** Per knowledge base, the documents stored without vectors because embedding failed. */
  async unembeddedDocuments(kbIds: readonly string[]): Promise<UnembeddedDocuments[]> {
    if (kbIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('documents')
      .select((eb) => [
        'kb_id',
        eb.fn.countAll<number>().as('documents'),
        eb.fn.sum<number>('chunk_count').as('chunks'),
      ])
      .where('kb_id', 'in', kbIds)
      .where('embedding_status', 'in', ['unavailable', 'failed'])
      .where('id', 'not in', pendingIn(kbIds))
      .groupBy('kb_id')
      .orderBy('kb_id')
      .execute();
    return rows.map((row) => ({
      kbId: row.kb_id,
      documents: Number(row.documents),
      chunks: Number(row.chunks),
    }));
  }
}
