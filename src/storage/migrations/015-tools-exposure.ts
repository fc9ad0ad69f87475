// The platform as an MCP server (issue 22): an agent or a pipeline marked `expose_as_tool` is a
// tool of POST /mcp for its account's keys, and a pipeline may describe its run inputs with a JSON
// Schema (`input_schema`, the tool's inputSchema). The flags are the dialect's boolean like
// `is_public` (004), false for every earlier row; the schema is JSON text as in 013 (kept as
// written), null when none was given.
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function toolsExposure(types: ColumnTypes): Migration {
  const boolean = sql.raw(types.boolean);
  // PostgreSQL's boolean takes no integer default; SQLite's integer column takes 0.
  const no = sql.raw(types.boolean === 'boolean' ? 'false' : '0');
  return {
    async up(db: Kysely<unknown>) {
      // One column per statement: SQLite's ALTER TABLE adds one at a time.
      await db.schema
        .alterTable('agents')
        .addColumn('expose_as_tool', boolean, (column) => column.notNull().defaultTo(no))
        .execute();
      await db.schema
        .alterTable('pipelines')
        .addColumn('expose_as_tool', boolean, (column) => column.notNull().defaultTo(no))
        .execute();
      await db.schema.alterTable('pipelines').addColumn('input_schema', 'text').execute();
    },
  };
}
