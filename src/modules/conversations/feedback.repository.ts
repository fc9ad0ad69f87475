// Feedback on messages: one entry per message and user, a later one replacing the earlier.
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { Feedback } from './feedback.js';

function toFeedback(row: DatabaseSchema['feedback']): Feedback {
  return {
    id: row.id,
    accountId: row.account_id,
    conversationId: row.conversation_id,
    messageId: row.message_id,
    userId: row.user_id,
    feedbackType: row.feedback_type,
    feedbackValue: Number(row.feedback_value),
    comment: row.comment,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export class FeedbackRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /**
   * Stores the feedback, or replaces the same user's earlier feedback on the message (which keeps
   * its id and creation time). Returns the stored entry's id.
   */
  async upsert(feedback: Feedback): Promise<string> {
    const row = await this.db
      .insertInto('feedback')
      .values({
        id: feedback.id,
        account_id: feedback.accountId,
        conversation_id: feedback.conversationId,
        message_id: feedback.messageId,
        user_id: feedback.userId,
        feedback_type: feedback.feedbackType,
        feedback_value: feedback.feedbackValue,
        comment: feedback.comment,
        created_at: feedback.createdAt,
        updated_at: feedback.updatedAt,
      })
      .onConflict((conflict) =>
        conflict.columns(['message_id', 'user_id']).doUpdateSet({
          feedback_type: feedback.feedbackType,
          feedback_value: feedback.feedbackValue,
          comment: feedback.comment,
          updated_at: feedback.updatedAt,
        }),
      )
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async listForConversation(accountId: string, conversationId: string): Promise<Feedback[]> {
    const rows = await this.db
      .selectFrom('feedback')
      .selectAll()
      .where('conversation_id', '=', conversationId)
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
    return rows.map(toFeedback);
  }
}
