// A tool call waiting for a person's decision keeps its tool's input schema (issue 29), so that
// arguments a person edits are checked against it on whichever instance the decision arrives,
// without reaching the tool's server. JSON text as in 015, null for every other step.
import type { Kysely, Migration } from 'kysely';

export function stepToolSchema(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('execution_steps').addColumn('tool_schema', 'text').execute();
    },
  };
}
