// Conversations and their messages. Every query is scoped by account; messages are appended in
// one transaction with the conversation's counter, which also hands out their order.
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../../storage/schema.js';
import { pageOf } from '../../storage/repositories/paging.js';
import type {
  ConversationStatus,
  Conversation,
  StoredMessage,
  NewMessage,
  ConversationQuery,
} from './conversation.js';

export interface ConversationPatch {
  title?: string;
  model?: string;
  description?: string;
  status?: ConversationStatus;
  metadata?: Record<string, unknown>;
  templateName?: string | null;
  templateVariables?: Record<string, string> | null;
}

function toConversation(row: DatabaseSchema['conversations']): Conversation {
  return {
    id: row.id,
    accountId: row.account_id,
    userId: row.user_id,
    title: row.title,
    description: row.description,
    model: row.model,
    systemPrompt: row.system_prompt,
    status: row.status,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    templateName: row.template_name,
    templateVariables:
      row.template_variables === null
        ? null
        : (JSON.parse(row.template_variables) as Record<string, string>),
    messageCount: Number(row.message_count),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** JSON text of a column, or null for none (an empty list is stored as none). */
function jsonOrNull(value: readonly unknown[] | null): string | null {
  return value === null || value.length === 0 ? null : JSON.stringify(value);
}

function toMessage(row: DatabaseSchema['messages']): StoredMessage {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    seq: Number(row.seq),
    role: row.role,
    content: row.content,
    // Written by this repository only (jsonOrNull), so read back as the shapes they were.
    parts: row.parts === null ? null : (JSON.parse(row.parts) as StoredMessage['parts']),
    toolCalls:
      row.tool_calls === null ? null : (JSON.parse(row.tool_calls) as StoredMessage['toolCalls']),
    toolCallId: row.tool_call_id,
    name: row.name,
    model: row.model,
    promptTokens: row.prompt_tokens,
    completionTokens: row.completion_tokens,
    latencyMs: row.latency_ms,
    finishReason: row.finish_reason,
    createdAt: row.created_at,
  };
}

export class ConversationsRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insert(conversation: Conversation, db: Kysely<DatabaseSchema> = this.db): Promise<void> {
    await db
      .insertInto('conversations')
      .values({
        id: conversation.id,
        account_id: conversation.accountId,
        user_id: conversation.userId,
        title: conversation.title,
        description: conversation.description,
        model: conversation.model,
        system_prompt: conversation.systemPrompt,
        status: conversation.status,
        metadata: JSON.stringify(conversation.metadata),
        template_name: conversation.templateName,
        template_variables:
          conversation.templateVariables === null
            ? null
            : JSON.stringify(conversation.templateVariables),
        message_count: 0,
        created_at: conversation.createdAt,
        updated_at: conversation.updatedAt,
      })
      .execute();
  }

  async find(accountId: string, id: string): Promise<Conversation | undefined> {
    const row = await this.db
      .selectFrom('conversations')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toConversation(row);
  }

  async list(
    accountId: string,
    query: ConversationQuery,
  ): Promise<{ conversations: Conversation[]; total: number }> {
    let filtered = this.db.selectFrom('conversations').where('account_id', '=', accountId);
    if (query.userId !== null) filtered = filtered.where('user_id', '=', query.userId);
    if (query.status !== 'all') filtered = filtered.where('status', '=', query.status);
    const { rows, total } = await pageOf(filtered, query, (selected) =>
      selected.selectAll().orderBy('updated_at', query.order).orderBy('id', query.order),
    );
    return { conversations: rows.map(toConversation), total };
  }

  async update(
    accountId: string,
    id: string,
    patch: ConversationPatch,
    updatedAt: string,
  ): Promise<Conversation | undefined> {
    await this.db
      .updateTable('conversations')
      .set({
        updated_at: updatedAt,
        ...(patch.title === undefined ? {} : { title: patch.title }),
        ...(patch.description === undefined ? {} : { description: patch.description }),
        ...(patch.model === undefined ? {} : { model: patch.model }),
        ...(patch.status === undefined ? {} : { status: patch.status }),
        ...(patch.metadata === undefined ? {} : { metadata: JSON.stringify(patch.metadata) }),
        ...(patch.templateName === undefined ? {} : { template_name: patch.templateName }),
        ...(patch.templateVariables === undefined
          ? {}
          : {
              template_variables:
                patch.templateVariables === null ? null : JSON.stringify(patch.templateVariables),
            }),
      })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .execute();
    return this.find(accountId, id);
  }

  /** Deletes the conversation with its messages and feedback; false when there was none. */
  async delete(accountId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('conversations')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /**
   * Appends messages in order, in one transaction: the conversation's counter is raised first
   * (which locks its row), so concurrent appends to one conversation never interleave or collide.
   * `titleIfEmpty` fills an empty title. `create` is a conversation to insert first, in the same
   * transaction (a first turn: nothing is stored unless its answer is). Returns the stored
   * messages, or undefined when the conversation is not in the account.
   */
  async appendMessages(
    accountId: string,
    conversationId: string,
    messages: readonly NewMessage[],
    updatedAt: string,
    titleIfEmpty?: string,
    create?: Conversation,
  ): Promise<StoredMessage[] | undefined> {
    return this.db.transaction().execute(async (transaction) => {
      if (create !== undefined) await this.insert(create, transaction);
      const counted = await transaction
        .updateTable('conversations')
        .set((eb) => ({
          message_count: eb('message_count', '+', messages.length),
          updated_at: updatedAt,
          ...(titleIfEmpty === undefined
            ? {}
            : {
                title: eb
                  .case()
                  .when('title', '=', '')
                  .then(titleIfEmpty)
                  .else(eb.ref('title'))
                  .end(),
              }),
        }))
        .where('id', '=', conversationId)
        .where('account_id', '=', accountId)
        .returning('message_count')
        .executeTakeFirst();
      if (counted === undefined) return undefined;
      const firstSeq = Number(counted.message_count) - messages.length + 1;
      const stored = messages.map((message, index) => ({
        ...message,
        conversationId,
        seq: firstSeq + index,
      }));
      if (stored.length > 0) {
        await transaction
          .insertInto('messages')
          .values(
            stored.map((message) => ({
              id: message.id,
              conversation_id: conversationId,
              account_id: accountId,
              seq: message.seq,
              role: message.role,
              content: message.content,
              parts: jsonOrNull(message.parts),
              tool_calls: jsonOrNull(message.toolCalls),
              tool_call_id: message.toolCallId,
              name: message.name,
              model: message.model,
              prompt_tokens: message.promptTokens,
              completion_tokens: message.completionTokens,
              latency_ms: message.latencyMs,
              finish_reason: message.finishReason,
              created_at: message.createdAt,
              api_key_id: message.apiKeyId ?? null,
            })),
          )
          .execute();
      }
      return stored;
    });
  }

  /** The last `limit` messages, oldest first (the context of the next turn). */
  async recentMessages(conversationId: string, limit: number): Promise<StoredMessage[]> {
    const rows = await this.db
      .selectFrom('messages')
      .selectAll()
      .where('conversation_id', '=', conversationId)
      .orderBy('seq', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toMessage).reverse();
  }

  async listMessages(
    conversationId: string,
    page: { limit: number; offset: number; order: 'asc' | 'desc' },
  ): Promise<{ messages: StoredMessage[]; total: number }> {
    const { rows, total } = await pageOf(
      this.db.selectFrom('messages').where('conversation_id', '=', conversationId),
      page,
      (query) => query.selectAll().orderBy('seq', page.order),
    );
    return { messages: rows.map(toMessage), total };
  }

  async findMessage(accountId: string, messageId: string): Promise<StoredMessage | undefined> {
    const row = await this.db
      .selectFrom('messages')
      .selectAll()
      .where('id', '=', messageId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toMessage(row);
  }
}
