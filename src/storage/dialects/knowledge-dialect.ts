// Picks the knowledge-base search implementation and schema of the database in use.
import type { ColumnTypes, DialectAdapter } from './dialect.js';
import type { KnowledgeIndex, KnowledgeSchemaDialect } from './knowledge-index.js';
import { createPostgresKnowledgeIndex, postgresKnowledgeSchema } from './postgres-knowledge.js';
import { createSqliteKnowledgeIndex, sqliteKnowledgeSchema } from './sqlite-knowledge.js';

export function createKnowledgeIndex(storage: DialectAdapter): KnowledgeIndex {
  return storage.kind === 'sqlite'
    ? createSqliteKnowledgeIndex(storage.db)
    : createPostgresKnowledgeIndex(storage.db);
}

/**
 * Migrations are given the dialect's column types only; `timestamptz` is PostgreSQL's, so this is
 * the one place that tells the dialects apart by them.
 */
export function knowledgeSchemaFor(types: ColumnTypes): KnowledgeSchemaDialect {
  return types.timestamp === 'timestamptz' ? postgresKnowledgeSchema : sqliteKnowledgeSchema;
}
