// Stored responses of the Responses API: each scoped by account, written once when its answer is
// complete, read by id, deleted by id. The Response object and the input items are JSON text the
// service wrote; they are handed back as text, parsed by the caller.
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../../storage/schema.js';

export interface StoredResponse {
  id: string;
  accountId: string;
  conversationId: string;
  /** The stored assistant message that is the response's answer. */
  messageId: string;
  previousResponseId: string | null;
  model: string;
  status: string;
  createdAt: string;
  /** JSON text of the Response object. */
  body: string;
  /** JSON text of the input items. */
  inputItems: string;
}

function toStored(row: DatabaseSchema['responses']): StoredResponse {
  return {
    id: row.id,
    accountId: row.account_id,
    conversationId: row.conversation_id,
    messageId: row.message_id,
    previousResponseId: row.previous_response_id,
    model: row.model,
    status: row.status,
    createdAt: row.created_at,
    body: row.body,
    inputItems: row.input_items,
  };
}

export class ResponsesRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insert(response: StoredResponse): Promise<void> {
    await this.db
      .insertInto('responses')
      .values({
        id: response.id,
        account_id: response.accountId,
        conversation_id: response.conversationId,
        message_id: response.messageId,
        previous_response_id: response.previousResponseId,
        model: response.model,
        status: response.status,
        created_at: response.createdAt,
        body: response.body,
        input_items: response.inputItems,
      })
      .execute();
  }

  /** The account's response; undefined for an unknown id or another account's. */
  async find(accountId: string, id: string): Promise<StoredResponse | undefined> {
    const row = await this.db
      .selectFrom('responses')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toStored(row);
  }

  /** false when the account has no such response. */
  async delete(accountId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('responses')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
