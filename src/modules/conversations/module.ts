// The conversations module, wired: conversations and their messages, feedback on them, their
// storage, and the HTTP plugin for app.ts to register.
import type { Kysely } from 'kysely';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { TemplateCatalog } from '../templates/template-catalog.js';
import { ConversationService } from './conversation-service.js';
import { ConversationsRepository } from './conversations.repository.js';
import { conversationsPlugin, type ConversationsPlugin } from './conversations.routes.js';
import { FeedbackService } from './feedback-service.js';
import { FeedbackRepository } from './feedback.repository.js';

export interface ConversationsModuleDependencies {
  readonly db: Kysely<DatabaseSchema>;
  readonly models: ModelRegistry;
  /** The prompt templates a conversation may be given (the templates module's catalog). */
  readonly templates: TemplateCatalog;
  readonly now: () => number;
}

export interface ConversationsModule {
  /** Conversations and their history: chat, voice, routing and executions store turns here. */
  readonly service: ConversationService;
  readonly feedback: FeedbackService;
  readonly plugin: ConversationsPlugin;
}

export function createConversationsModule(
  dependencies: ConversationsModuleDependencies,
): ConversationsModule {
  const { db, models, templates, now } = dependencies;
  const service = new ConversationService({
    conversations: new ConversationsRepository(db),
    models,
    templates,
    now,
  });
  const feedback = new FeedbackService({
    feedback: new FeedbackRepository(db),
    conversations: service,
    now,
  });
  // Conversations hold no connection, thread or timer of their own (nothing to close): storage is
  // the service's.
  return {
    service,
    feedback,
    plugin: conversationsPlugin({ conversations: service, feedback, models }),
  };
}
