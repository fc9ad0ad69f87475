// The knowledge module, wired: the dialect's search index (storage/dialects), the repository and
// service built from what the rest of the service lends it, and its HTTP plugin for app.ts.
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/config.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { DialectAdapter } from '../../storage/dialects/dialect.js';
import { createKnowledgeIndex } from '../../storage/dialects/knowledge-dialect.js';
import type { TextPool } from '../../text-pool/text-pool.js';
import { KnowledgeService } from './knowledge-service.js';
import { DocumentStore } from './document-store.repository.js';
import { KnowledgeRepository } from './knowledge.repository.js';
import { knowledgeLimits } from './limits.js';
import { knowledgePlugin, type KnowledgePlugin } from './knowledge.routes.js';

export interface KnowledgeModuleDependencies {
  readonly config: AppConfig;
  /** The database, and which dialect it speaks: keyword and vector search are the dialect's. */
  readonly storage: DialectAdapter;
  readonly models: ModelRegistry;
  /** The text threads: documents are extracted and chunked there, off the event loop. */
  readonly text: TextPool;
  readonly logger: Logger;
  readonly now: () => number;
}

export interface KnowledgeModule {
  readonly service: KnowledgeService;
  readonly plugin: KnowledgePlugin;
}

/** Builds the module once the dialect's index is ready (PostgreSQL: pgvector found or installed). */
export async function createKnowledgeModule(
  dependencies: KnowledgeModuleDependencies,
): Promise<KnowledgeModule> {
  const { config, storage, models, text, logger, now } = dependencies;
  const index = createKnowledgeIndex(storage);
  await index.prepare();
  logger.debug({ vector_search: index.vectorMethod }, 'knowledge-base vector search');
  const repository = new KnowledgeRepository(storage.db);
  const documents = new DocumentStore(storage.db, index);
  // Documents a stopped process was storing are deleted with what it had written of them.
  const discarded = await documents.discardPending(
    new Date(now() - knowledgeLimits.pendingDocumentGraceMs).toISOString(),
  );
  if (discarded > 0) {
    logger.warn(
      { documents: discarded },
      'deleted documents left half-stored by a stopped process',
    );
  }
  const service = new KnowledgeService({
    repository,
    documents,
    index,
    models,
    text,
    settings: config.knowledge,
    logger,
    now,
  });
  // Knowledge holds no connection, thread or timer of its own: the database and the text threads it
  // uses are closed by their owners.
  return {
    service,
    plugin: knowledgePlugin(service, { bodyLimitBytes: config.server.bodyLimitBytes }),
  };
}
