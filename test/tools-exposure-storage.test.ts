// Migration 015 on a database that already holds agents and pipelines: they read back as not
// exposed as tools and without an input schema, and the new fields are stored and read back.
import { Migrator, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { DatabaseConfig } from '../src/config/config.js';
import { newId } from '../src/ids.js';
import { AgentsRepository } from '../src/modules/agents/agents.repository.js';
import { PipelinesRepository } from '../src/modules/pipelines/pipelines.repository.js';
import { createDialectAdapter, migrateToLatest } from '../src/storage/database.js';
import { migrationProvider } from '../src/storage/migrations/index.js';
import { allDialects } from './support/dialects.js';

function databaseConfig(url: string): DatabaseConfig {
  return url.startsWith('sqlite:')
    ? { kind: 'sqlite', path: url.slice(7) }
    : { kind: 'postgres', url };
}

const createdAt = '2026-01-02T03:04:05.000Z';

describe.each(allDialects)('migration 015 (tools exposure) on $name', (dialect) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  it('reads earlier agents and pipelines as not exposed, and stores the new fields', async () => {
    const database = await dialect.create();
    const adapter = await createDialectAdapter(databaseConfig(database.url));
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
    expect((await migrator.migrateTo('014-responses')).error).toBeUndefined();
    const accountId = newId('acct');
    const agentId = newId('agent');
    const pipelineId = newId('pipe');
    // Rows as written before 015, through untyped queries (the typed schema has the columns).
    const yes = adapter.kind === 'postgres' ? sql`true` : sql`1`;
    await sql`insert into accounts (id, name, kind, created_at, tier)
      values (${accountId}, 'a', 'member', ${createdAt}, null)`.execute(adapter.db);
    await sql`insert into agents (id, account_id, name, description, agent_type, model_id, is_public, configuration, created_at, updated_at)
      values (${agentId}, ${accountId}, 'old', '', 'GenerationAgent', null, ${yes}, '{}', ${createdAt}, ${createdAt})`.execute(
      adapter.db,
    );
    await sql`insert into pipelines (id, account_id, name, description, stages, visual_layout, created_at, updated_at)
      values (${pipelineId}, ${accountId}, 'old', '', '[]', null, ${createdAt}, ${createdAt})`.execute(
      adapter.db,
    );

    expect(await migrateToLatest(adapter)).toContain('015-tools-exposure');

    const agents = new AgentsRepository(adapter.db);
    const pipelines = new PipelinesRepository(adapter.db);
    expect(await agents.findVisible(accountId, agentId)).toMatchObject({
      isPublic: true,
      exposeAsTool: false,
    });
    expect(await pipelines.find(accountId, pipelineId)).toMatchObject({
      exposeAsTool: false,
      inputSchema: null,
    });
    expect(await agents.listExposed(accountId, 10)).toEqual([]);

    await agents.update(accountId, agentId, { exposeAsTool: true }, createdAt);
    const pipeline = (await pipelines.find(accountId, pipelineId))!;
    const inputSchema = { type: 'object', properties: { b: {}, a: {} } };
    await pipelines.update({ ...pipeline, exposeAsTool: true, inputSchema });
    expect((await agents.listExposed(accountId, 10)).map((agent) => agent.id)).toEqual([agentId]);
    const [exposed] = await pipelines.listExposed(accountId, 10);
    expect(exposed).toMatchObject({ id: pipelineId, exposeAsTool: true });
    // Kept as written, key order included.
    expect(JSON.stringify(exposed!.inputSchema)).toBe(JSON.stringify(inputSchema));
  });
});
