// The bounds of knowledge bases: document and query sizes, result counts, and the constants of
// ingestion and ranking. The routes publish them in the OpenAPI document, the service enforces them.

export const knowledgeLimits = {
  /** Largest document content, in UTF-8 bytes. */
  maxDocumentBytes: 5 * 1024 * 1024,
  /**
   * Chunks one document may make (5 MiB of prose at the default chunk size makes about 5,000;
   * every section under a heading makes one at least): each is a row, an index entry and a vector.
   */
  maxChunksPerDocument: 20_000,
  maxMetadataBytes: 16 * 1024,
  maxTopK: 50,
  defaultTopK: 5,
  maxQueryLength: 2000,
  maxKnowledgeBasesPerSearch: 20,
  /** Candidates taken from each ranking before fusion. */
  candidatesPerRanking: 50,
  /** Texts per embedding request. */
  embeddingBatchSize: 64,
  /** Embedding requests in flight for one document. */
  embeddingConcurrency: 4,
  /**
   * How old a document left pending (its chunks being stored) must be before a starting service
   * deletes it: older than any store in progress in another process sharing the database.
   */
  pendingDocumentGraceMs: 10 * 60 * 1000,
  /** The k of reciprocal rank fusion. */
  fusionK: 60,
} as const;

/** The signal of a caller that never goes away. */
export const neverAborted = new AbortController().signal;
