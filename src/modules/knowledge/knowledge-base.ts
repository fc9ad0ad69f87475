// Knowledge bases, their documents and chunks as the domain sees them.

export interface KnowledgeBase {
  id: string;
  accountId: string;
  name: string;
  description: string;
  embeddingModel: string | null;
  embeddingDimensions: number | null;
  documentCount: number;
  chunkCount: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * `complete`: every chunk has a vector; `none`: the knowledge base has no embedding model;
 * `unavailable`: its model could not be used at upload; `failed`: the model call failed.
 */
export type EmbeddingStatus = 'complete' | 'none' | 'unavailable' | 'failed';

export interface KnowledgeDocument {
  id: string;
  kbId: string;
  accountId: string;
  title: string;
  contentType: string;
  source: string | null;
  metadata: Record<string, unknown>;
  charCount: number;
  chunkCount: number;
  embeddingStatus: EmbeddingStatus;
  embeddingError: string | null;
  createdAt: string;
}

export interface NewKnowledgeDocument extends KnowledgeDocument {
  content: string;
  text: string;
}

/** A chunk with what a search result shows of its document. */
export interface ChunkWithDocument {
  id: string;
  documentId: string;
  kbId: string;
  position: number;
  title: string;
  heading: string;
  text: string;
  source: string | null;
  metadata: Record<string, unknown>;
}
