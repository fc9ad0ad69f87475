// Adding a document to a knowledge base: its input checked, its text extracted and chunked in the
// text worker threads, the chunks embedded, and everything stored (the document invisible until
// all of it is: DocumentStore).
import type { AppConfig } from '../../config/config.js';
import { InvalidParameterError, NotFoundError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { ChunkRecord } from '../../storage/dialects/knowledge-index.js';
import { documentContentTypes, type DocumentContentType } from '../../text/extract-text.js';
import type { TextPool } from '../../text-pool/text-pool.js';
import type { TextChunk } from './chunker.js';
import { dimensionsMessage, embedChunks, type EmbeddingLogger } from './embedding.js';
import type { KnowledgeBase, KnowledgeDocument, NewKnowledgeDocument } from './knowledge-base.js';
import type { DocumentStore } from './document-store.repository.js';
import { knowledgeLimits } from './limits.js';

export interface AddDocumentInput {
  /** Defaults to the document's own title (HTML `<title>`, first heading, first line). */
  title?: string | undefined;
  content: string;
  contentType?: DocumentContentType | undefined;
  source?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface DocumentIngestionOptions {
  documents: Pick<DocumentStore, 'insert'>;
  models: Pick<ModelRegistry, 'status' | 'embeddingModel'>;
  /** Where documents are extracted and chunked, off the event loop. */
  text: Pick<TextPool, 'chunk'>;
  settings: AppConfig['knowledge'];
  logger: EmbeddingLogger;
  now: () => number;
}

/** The content type and metadata of the input, or a 400 naming the first field out of bounds. */
function checkedInput(input: AddDocumentInput): {
  contentType: DocumentContentType;
  metadata: Record<string, unknown>;
} {
  const contentType = input.contentType ?? 'text/plain';
  if (!documentContentTypes.includes(contentType)) {
    throw new InvalidParameterError(
      'content_type',
      `'content_type' must be one of ${documentContentTypes.join(', ')}.`,
    );
  }
  const bytes = Buffer.byteLength(input.content, 'utf8');
  if (bytes > knowledgeLimits.maxDocumentBytes) {
    throw new InvalidParameterError(
      'content',
      `The document has ${bytes} bytes of content; at most ${knowledgeLimits.maxDocumentBytes} (5 MiB) are accepted. Split it into several documents.`,
    );
  }
  const metadata = input.metadata ?? {};
  if (Buffer.byteLength(JSON.stringify(metadata)) > knowledgeLimits.maxMetadataBytes) {
    throw new InvalidParameterError(
      'metadata',
      `'metadata' must serialise to at most ${knowledgeLimits.maxMetadataBytes} bytes of JSON.`,
    );
  }
  return { contentType, metadata };
}

export class DocumentIngestion {
  constructor(private readonly options: DocumentIngestionOptions) {}

  /**
   * Extracts the text and chunks it (by section, whole sentences, with overlap) in the text worker
   * threads (a 400 naming `content` past their deadline or the chunk limit), then embeds the chunks
   * with the knowledge base's model in batches. When the model is unavailable or fails, the
   * document is stored all the same, without vectors, and `embeddingStatus`/`embeddingError` say
   * so: keyword search finds it at once, and losing an upload to a flaky model would be worse.
   */
  async add(
    accountId: string,
    knowledgeBase: KnowledgeBase,
    input: AddDocumentInput,
    signal: AbortSignal,
  ): Promise<KnowledgeDocument> {
    const { contentType, metadata } = checkedInput(input);
    const chunked = await this.options.text.chunk(
      {
        content: input.content,
        contentType,
        chunkSize: this.options.settings.chunkSize,
        chunkOverlap: this.options.settings.chunkOverlap,
        maxChunks: knowledgeLimits.maxChunksPerDocument,
      },
      signal,
    );
    if (chunked.chunks.length === 0) {
      throw new InvalidParameterError(
        'content',
        'The content has no text to index (nothing is left once markup, scripts and styles are removed).',
      );
    }
    const title = input.title?.trim() || chunked.title || 'Untitled';
    const { models, logger } = this.options;
    const embedded = await embedChunks(
      models,
      logger,
      knowledgeBase,
      title,
      chunked.chunks,
      signal,
    );
    const now = new Date(this.options.now()).toISOString();
    const document: NewKnowledgeDocument = {
      id: newId('doc'),
      kbId: knowledgeBase.id,
      accountId,
      title,
      contentType,
      source: input.source ?? null,
      metadata,
      charCount: chunked.text.length,
      chunkCount: chunked.chunks.length,
      embeddingStatus: embedded.status,
      embeddingError: embedded.error,
      createdAt: now,
      content: input.content,
      text: chunked.text,
    };
    await this.store(knowledgeBase, document, chunked.chunks, embedded.vectors);
    const { content: _content, text: _text, ...stored } = document;
    return stored;
  }

  /**
   * Stores the document with its chunks' vectors; when another upload fixed the knowledge base's
   * vector length first, with a different model, stores it again without vectors, as `failed`.
   */
  private async store(
    knowledgeBase: KnowledgeBase,
    document: NewKnowledgeDocument,
    chunks: readonly TextChunk[],
    vectors: (Float32Array | null)[] | null,
  ): Promise<void> {
    const { documents } = this.options;
    const now = document.createdAt;
    let outcome = await documents.insert(document, chunkRecords(document, chunks, vectors), now);
    if (outcome.kind === 'dimensions-differ') {
      document.embeddingStatus = 'failed';
      document.embeddingError = dimensionsMessage(knowledgeBase, vectors, outcome.dimensions);
      outcome = await documents.insert(document, chunkRecords(document, chunks, null), now);
    }
    if (outcome.kind !== 'stored') throw new NotFoundError('Knowledge base', knowledgeBase.id);
  }
}

/** The rows of the document's chunks, each with its vector when it has one. */
function chunkRecords(
  document: NewKnowledgeDocument,
  chunks: readonly TextChunk[],
  vectors: (Float32Array | null)[] | null,
): ChunkRecord[] {
  return chunks.map((chunk, index) => ({
    id: newId('chunk'),
    documentId: document.id,
    kbId: document.kbId,
    accountId: document.accountId,
    position: chunk.position,
    title: document.title,
    heading: chunk.heading,
    text: chunk.text,
    embedding: vectors?.[index] ?? null,
    createdAt: document.createdAt,
  }));
}
