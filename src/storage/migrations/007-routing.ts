// Routing: classified intents, route feedback (the examples that teach each account's router), a
// per-account version row that tells every instance when its cached router is stale, and policies.
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function routing(types: ColumnTypes): Migration {
  const timestamp = sql.raw(types.timestamp);
  const json = sql.raw(types.json);
  const real = sql.raw(types.real);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('routing_intents')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('conversation_id', 'text')
        .addColumn('text', 'text', (column) => column.notNull())
        .addColumn('category', 'text', (column) => column.notNull())
        .addColumn('confidence', real, (column) => column.notNull())
        .addColumn('complexity', 'text', (column) => column.notNull())
        // {detected_entities, entities, signals, method, …}: what the classification saw.
        .addColumn('metadata', json, (column) => column.notNull())
        // Set when the intent was made by a route call: where the message was sent.
        .addColumn('route_type', 'text')
        .addColumn('route_ref', 'text')
        .addColumn('route_name', 'text')
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .execute();
      await db.schema
        .createIndex('routing_intents_by_conversation')
        .on('routing_intents')
        .columns(['account_id', 'conversation_id', 'created_at'])
        .execute();

      // One row per account that has taught its router or written a policy. `version` grows with
      // every change; `example_seq` numbers the account's examples so instances can load only the
      // ones they have not seen.
      await db.schema
        .createTable('routing_state')
        .addColumn('account_id', 'text', (column) =>
          column.primaryKey().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('version', 'integer', (column) => column.notNull())
        .addColumn('example_seq', 'integer', (column) => column.notNull())
        .addColumn('updated_at', timestamp, (column) => column.notNull())
        .execute();

      await db.schema
        .createTable('route_examples')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('message', 'text', (column) => column.notNull())
        // Normalised message digest: a newer feedback on the same message replaces the older.
        .addColumn('message_key', 'text', (column) => column.notNull())
        .addColumn('route_type', 'text', (column) => column.notNull())
        // Agent or pipeline id, or model name: what the route points at (names can change).
        .addColumn('route_ref', 'text', (column) => column.notNull())
        .addColumn('route_name', 'text', (column) => column.notNull())
        .addColumn('conversation_id', 'text')
        // Base64 float32 vector of the message by `embedding_model`, when one was configured.
        .addColumn('embedding', 'text')
        .addColumn('embedding_model', 'text')
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .addUniqueConstraint('route_examples_seq', ['account_id', 'seq'])
        .execute();
      await db.schema
        .createIndex('route_examples_by_key')
        .on('route_examples')
        .columns(['account_id', 'message_key'])
        .execute();

      await db.schema
        .createTable('routing_policies')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('description', 'text', (column) => column.notNull())
        .addColumn('priority', 'integer', (column) => column.notNull())
        .addColumn('enabled', sql.raw(types.boolean), (column) => column.notNull())
        .addColumn('conditions', json, (column) => column.notNull())
        .addColumn('actions', json, (column) => column.notNull())
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .addColumn('updated_at', timestamp, (column) => column.notNull())
        .execute();
      await db.schema
        .createIndex('routing_policies_by_account')
        .on('routing_policies')
        .columns(['account_id', 'priority'])
        .execute();
    },
  };
}
