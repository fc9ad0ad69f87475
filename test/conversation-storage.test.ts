// Stored messages keep everything a turn held, on every dialect: migration 013 on a database that
// already has messages (they read back with none of the new fields), and turns with content parts,
// tool calls, tool results and names stored and read back as the very turns they were — key order,
// escapes and a large data URL included — as ChatService stores and replays them.
import { Migrator, sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { newId } from '../src/ids.js';
import type { ChatTurn } from '../src/models/spec.js';
import { turnOfStored } from '../src/models/openai-messages.js';
import { storedFieldsOf } from '../src/modules/chat/chat-messages.js';
import type { NewMessage } from '../src/modules/conversations/conversation.js';
import { ConversationsRepository } from '../src/modules/conversations/conversations.repository.js';
import type { DatabaseConfig } from '../src/config/config.js';
import {
  createDialectAdapter,
  migrateToLatest,
  openStorage,
  type Storage,
} from '../src/storage/database.js';
import type { DialectAdapter } from '../src/storage/dialects/dialect.js';
import { migrationProvider } from '../src/storage/migrations/index.js';
import type { DatabaseSchema } from '../src/storage/schema.js';
import { allDialects } from './support/dialects.js';

function databaseConfig(url: string): DatabaseConfig {
  return url.startsWith('sqlite:')
    ? { kind: 'sqlite', path: url.slice(7) }
    : { kind: 'postgres', url };
}

const createdAt = '2026-01-02T03:04:05.000Z';

/** An account and a conversation to append to, written as rows. */
async function seedConversation(db: Kysely<DatabaseSchema>): Promise<{
  accountId: string;
  conversationId: string;
}> {
  const accountId = newId('acct');
  const conversationId = newId('conv');
  await db
    .insertInto('accounts')
    .values({ id: accountId, name: 'a', kind: 'member', created_at: createdAt, tier: null })
    .execute();
  await db
    .insertInto('conversations')
    .values({
      id: conversationId,
      account_id: accountId,
      user_id: null,
      title: '',
      description: '',
      model: null,
      system_prompt: null,
      status: 'active',
      metadata: '{}',
      template_name: null,
      template_variables: null,
      message_count: 0,
      created_at: createdAt,
      updated_at: createdAt,
    })
    .execute();
  return { accountId, conversationId };
}

function newMessage(turn: ChatTurn): NewMessage {
  return {
    id: newId('msg'),
    ...storedFieldsOf(turn),
    model: null,
    promptTokens: null,
    completionTokens: null,
    latencyMs: null,
    finishReason: null,
    createdAt,
    apiKeyId: null,
  };
}

describe.each(allDialects)('stored messages on $name', (dialect) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  async function open(): Promise<Storage> {
    const database = await dialect.create();
    const storage = await openStorage(databaseConfig(database.url));
    cleanups.push(
      () => database.drop(),
      () => storage.close(),
    );
    return storage;
  }

  it('adds the columns to a database that already holds messages, which read back without them', async () => {
    const database = await dialect.create();
    const adapter: DialectAdapter = await createDialectAdapter(databaseConfig(database.url));
    cleanups.push(
      () => database.drop(),
      () => adapter.db.destroy(),
    );
    const schema =
      adapter.kind === 'postgres'
        ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(adapter.db))
            .rows[0]!.schema
        : undefined;
    const migrator = new Migrator({
      db: adapter.db,
      provider: migrationProvider(adapter.columnTypes),
      ...(schema === undefined ? {} : { migrationTableSchema: schema }),
    });
    const before = await migrator.migrateTo('012-conversations-by-account');
    expect(before.error).toBeUndefined();
    const { accountId, conversationId } = await seedConversation(adapter.db);
    // A message as stored before migration 013, through an untyped query: the typed schema has
    // the new columns already.
    await sql`insert into messages (id, conversation_id, account_id, seq, role, content, created_at)
      values ('msg_old', ${conversationId}, ${accountId}, 1, 'user', 'old text', ${createdAt})`.execute(
      adapter.db,
    );

    // Later migrations follow; these two are the ones this test is about.
    expect((await migrateToLatest(adapter)).slice(0, 2)).toEqual([
      '013-message-parts',
      '014-responses',
    ]);
    expect(await migrateToLatest(adapter)).toEqual([]);

    const [old] = await new ConversationsRepository(adapter.db).recentMessages(conversationId, 10);
    expect(old).toMatchObject({
      id: 'msg_old',
      role: 'user',
      content: 'old text',
      parts: null,
      toolCalls: null,
      toolCallId: null,
      name: null,
    });
    expect(turnOfStored(old!)).toEqual({ role: 'user', content: 'old text' });
  });

  it('stores turns with parts, tool calls, tool results and names, and reads back the same turns', async () => {
    const storage = await open();
    const { accountId, conversationId } = await seedConversation(storage.db);
    const repository = new ConversationsRepository(storage.db);
    const dataUrl = `data:image/png;base64,${'iVBORw0KGgo'.repeat(100_000)}`;
    const turns: ChatTurn[] = [
      {
        role: 'user',
        content: 'Compare ',
        name: 'zoë',
        parts: [
          { type: 'text', text: 'Compare ' },
          // Keys in an order of the client's own: kept as written.
          {
            type: 'image_url',
            image_url: { detail: 'high', url: 'https://img.example/a.png?x=1&y=é' },
          },
          { type: 'image_url', image_url: { url: dataUrl } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          {
            type: 'file',
            file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBE' },
          },
        ],
      },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          {
            id: 'call_1',
            type: 'function',
            // A model's arguments as written, kept as they are: JSON escapes, non-Latin text, and
            // even a raw NUL, which PostgreSQL's text cannot hold but JSON text escapes.
            function: { name: 'lookup', arguments: '{"q":"line\\nbreak \\u00e9 日本\u0000"}' },
          },
          { id: 'call_2', type: 'function', function: { name: 'lookup', arguments: '' } },
        ],
      },
      { role: 'tool', content: '{"found":true}', toolCallId: 'call_1' },
      { role: 'tool', content: 'nothing here', toolCallId: 'call_2' },
      { role: 'assistant', content: 'Done.' },
    ];
    const appended = await repository.appendMessages(
      accountId,
      conversationId,
      turns.map(newMessage),
      createdAt,
    );
    expect(appended).toHaveLength(turns.length);

    const stored = await repository.recentMessages(conversationId, 10);
    expect(stored.map(turnOfStored)).toEqual(turns);
    // Byte for byte: the JSON text keeps the client's key order (not a database's JSON type's).
    expect(JSON.stringify(stored[0]!.parts)).toBe(JSON.stringify(turns[0]!.parts));
    expect(stored.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
    ]);
    const page = await repository.listMessages(conversationId, {
      limit: 10,
      offset: 0,
      order: 'asc',
    });
    expect(page.messages).toEqual(stored);
    const found = await repository.findMessage(accountId, stored[1]!.id);
    expect(found?.toolCalls).toEqual(turns[1]!.toolCalls);
  });

  it('stores no empty tool call list: an answer without calls has none', async () => {
    const storage = await open();
    const { accountId, conversationId } = await seedConversation(storage.db);
    const repository = new ConversationsRepository(storage.db);
    await repository.appendMessages(
      accountId,
      conversationId,
      [newMessage({ role: 'assistant', content: 'Hi', toolCalls: [] })],
      createdAt,
    );
    const [message] = await repository.recentMessages(conversationId, 1);
    expect(message!.toolCalls).toBeNull();
    const row = await storage.db
      .selectFrom('messages')
      .select(['parts', 'tool_calls', 'tool_call_id', 'name'])
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ parts: null, tool_calls: null, tool_call_id: null, name: null });
  });
});
