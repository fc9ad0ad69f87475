// Conversations of an account: create, read, list, change, delete, template assignment, history.
import { NotFoundError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import { assertSafeKeys } from '../../validation/safe-keys.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { ConversationsRepository } from './conversations.repository.js';
import type {
  Conversation,
  ConversationQuery,
  ConversationStatus,
  NewMessage,
  StoredMessage,
} from './conversation.js';
import type { TemplateCatalog } from '../templates/template-catalog.js';

export interface CreateConversationInput {
  userId: string | null;
  title?: string | undefined;
  description?: string | undefined;
  model?: string | undefined;
  systemPrompt?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface UpdateConversationInput {
  title?: string | undefined;
  /** The chat model of the conversation's next turns. */
  model?: string | undefined;
  description?: string | undefined;
  status?: ConversationStatus | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface ConversationServiceOptions {
  conversations: ConversationsRepository;
  models: ModelRegistry;
  templates: TemplateCatalog;
  now?: () => number;
}

/** A title from the first user message: its first line, cut at a word near 80 characters. */
export function titleFrom(text: string): string {
  const line = text.trim().split('\n')[0]?.trim() ?? '';
  if (line.length <= 80) return line;
  const cut = line.slice(0, 80);
  const space = cut.lastIndexOf(' ');
  return `${(space > 40 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

export class ConversationService {
  private readonly now: () => number;

  constructor(private readonly options: ConversationServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  async create(accountId: string, input: CreateConversationInput): Promise<Conversation> {
    const conversation = this.draft(accountId, input);
    await this.options.conversations.insert(conversation);
    return conversation;
  }

  /**
   * A conversation with its id, not stored yet: a chat's first turn names it at once and stores
   * it with its messages, so a turn that fails or is abandoned leaves nothing behind.
   */
  draft(accountId: string, input: CreateConversationInput): Conversation {
    if (input.model !== undefined) this.options.models.resolveChatModelName(input.model);
    // Metadata keys are the client's own names, at any depth: none may be a reserved name.
    if (input.metadata !== undefined) assertSafeKeys(input.metadata, 'metadata');
    const now = new Date(this.now()).toISOString();
    return {
      id: newId('conv'),
      accountId,
      userId: input.userId,
      title: input.title ?? '',
      description: input.description ?? '',
      model: input.model ?? null,
      systemPrompt: input.systemPrompt ?? null,
      status: 'active',
      metadata: input.metadata ?? {},
      templateName: null,
      templateVariables: null,
      messageCount: 0,
      createdAt: now,
      updatedAt: now,
    };
  }

  /**
   * The conversation, when it is in the account and, if `userId` is given, that user's (another
   * user's conversation is as invisible as another account's). A conversation created without a
   * user belongs to none, so any `userId` reaches it.
   */
  async get(accountId: string, id: string, userId?: string | null): Promise<Conversation> {
    const conversation = await this.options.conversations.find(accountId, id);
    if (
      conversation === undefined ||
      (userId !== undefined &&
        userId !== null &&
        conversation.userId !== null &&
        conversation.userId !== userId)
    ) {
      throw new NotFoundError('Conversation', id);
    }
    return conversation;
  }

  list(accountId: string, query: ConversationQuery) {
    return this.options.conversations.list(accountId, query);
  }

  async update(
    accountId: string,
    id: string,
    input: UpdateConversationInput,
    userId?: string,
  ): Promise<Conversation> {
    if (userId !== undefined) await this.get(accountId, id, userId);
    if (input.model !== undefined) this.options.models.resolveChatModelName(input.model);
    if (input.metadata !== undefined) assertSafeKeys(input.metadata, 'metadata');
    const updated = await this.options.conversations.update(
      accountId,
      id,
      {
        ...(input.title === undefined ? {} : { title: input.title }),
        ...(input.description === undefined ? {} : { description: input.description }),
        ...(input.model === undefined ? {} : { model: input.model }),
        ...(input.status === undefined ? {} : { status: input.status }),
        ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
      },
      new Date(this.now()).toISOString(),
    );
    if (updated === undefined) throw new NotFoundError('Conversation', id);
    return updated;
  }

  /** Deletes it with its messages; a `userId` that is not its user's answers 404 as `get` does. */
  async delete(accountId: string, id: string, userId?: string): Promise<void> {
    if (userId !== undefined) await this.get(accountId, id, userId);
    if (!(await this.options.conversations.delete(accountId, id))) {
      throw new NotFoundError('Conversation', id);
    }
  }

  /** Validates the template and its variables, then makes it the conversation's system prompt. */
  async assignTemplate(
    accountId: string,
    id: string,
    templateName: string,
    variables: Record<string, string>,
    userId?: string,
  ): Promise<Conversation> {
    await this.get(accountId, id, userId);
    const template = this.options.templates.require(templateName);
    this.options.templates.validateVariables(template, variables);
    const updated = await this.options.conversations.update(
      accountId,
      id,
      { templateName: template.name, templateVariables: variables },
      new Date(this.now()).toISOString(),
    );
    if (updated === undefined) throw new NotFoundError('Conversation', id);
    return updated;
  }

  /** The assigned template, rendered, wins over the system prompt given at creation. */
  systemPromptOf(conversation: Conversation): string | null {
    if (conversation.templateName !== null) {
      const template = this.options.templates.find(conversation.templateName);
      if (template !== undefined) {
        return this.options.templates.render(template, conversation.templateVariables ?? {});
      }
    }
    return conversation.systemPrompt;
  }

  /** The last `limit` messages of a conversation, oldest first: the context of its next turn. */
  recentHistory(conversation: Conversation, limit: number): Promise<StoredMessage[]> {
    return this.options.conversations.recentMessages(conversation.id, limit);
  }

  /**
   * Stores a turn's messages in order, in one transaction; a drafted conversation (`isNew`) is
   * stored with them. The first user message titles an untitled conversation. Undefined when the
   * conversation was deleted meanwhile.
   */
  appendTurn(
    conversation: Conversation,
    messages: readonly NewMessage[],
    options: { isNew: boolean; firstUserText?: string | undefined },
  ): Promise<StoredMessage[] | undefined> {
    return this.options.conversations.appendMessages(
      conversation.accountId,
      conversation.id,
      messages,
      new Date(this.now()).toISOString(),
      options.firstUserText === undefined ? undefined : titleFrom(options.firstUserText),
      options.isNew ? conversation : undefined,
    );
  }

  /** A stored message of the account, wherever it is. */
  findMessage(accountId: string, messageId: string): Promise<StoredMessage | undefined> {
    return this.options.conversations.findMessage(accountId, messageId);
  }

  async messages(
    accountId: string,
    id: string,
    page: { limit: number; offset: number; order: 'asc' | 'desc' },
    userId?: string,
  ): Promise<{ messages: StoredMessage[]; total: number }> {
    await this.get(accountId, id, userId);
    return this.options.conversations.listMessages(id, page);
  }
}
