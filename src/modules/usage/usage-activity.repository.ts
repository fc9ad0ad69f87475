// The latest activity of an account, from the ledger: each model call a request made itself, and
// each agent or pipeline run with its name, the models its turns called and the sums of those
// turns (model time only: a wait for approval is not in it). Replayed history is not a call and
// never shows: only the ledger's records are read.
import { sql, type Kysely } from 'kysely';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { UsageFilter, UsageSource } from './usage.repository.js';

export interface ActivityRow {
  source: UsageSource;
  /** use_… (a call's record) or exec_… (a run). */
  id: string;
  keyId: string | null;
  /** The call's model; a run's first model, or its agent's configured one before any call. */
  model: string | null;
  /** Every model a run's calls used, in order of first use (a call: its own). */
  models: string[];
  route: string | null;
  endUser: string | null;
  conversationId: string | null;
  agentId: string | null;
  agentName: string | null;
  pipelineId: string | null;
  pipelineName: string | null;
  status: string;
  calls: number;
  totalTokens: number;
  latencyMs: number | null;
  costMicros: number | null;
  createdAt: string;
}

const number = (value: unknown): number => (value === null ? 0 : Number(value));
const timeOf = (value: unknown): string =>
  value instanceof Date ? value.toISOString() : String(value);

export class UsageActivityRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** The latest `limit` calls and runs of the filter's range, newest first. */
  async recent(filter: UsageFilter, limit: number): Promise<ActivityRow[]> {
    const [calls, runs] = [await this.calls(filter, limit), await this.runs(filter, limit)];
    return [...calls, ...runs]
      .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || (a.id < b.id ? 1 : -1))
      .slice(0, limit);
  }

  /** Calls made by requests themselves (not by a run). */
  private async calls(filter: UsageFilter, limit: number): Promise<ActivityRow[]> {
    let query = this.db
      .selectFrom('usage_records')
      .selectAll()
      .where('account_id', '=', filter.accountId)
      .where('execution_id', 'is', null)
      .where('created_at', '>=', filter.from)
      .where('created_at', '<', filter.to);
    if (filter.keyId !== undefined) query = query.where('api_key_id', '=', filter.keyId);
    if (filter.model !== undefined) query = query.where('model', '=', filter.model);
    if (filter.endUser !== undefined) query = query.where('end_user', '=', filter.endUser);
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      source: 'chat' as const,
      id: row.id,
      keyId: row.api_key_id,
      model: row.model,
      models: [row.model],
      route: row.route,
      endUser: row.end_user,
      conversationId: null,
      agentId: null,
      agentName: null,
      pipelineId: null,
      pipelineName: null,
      status: row.status === 'error' ? (row.error_code ?? 'error') : row.status,
      calls: 1,
      totalTokens: number(row.input_tokens) + number(row.output_tokens),
      latencyMs: Number(row.latency_ms),
      costMicros: row.cost_micros === null ? null : Number(row.cost_micros),
      createdAt: timeOf(row.created_at),
    }));
  }

  /** The runs of the filter (a run passes `model` or `user_id` when one of its calls did). */
  private runsQuery(filter: UsageFilter) {
    let query = this.db
      .selectFrom('executions')
      .leftJoin('agents', 'agents.id', 'executions.agent_id')
      .leftJoin('pipelines', 'pipelines.id', 'executions.pipeline_id')
      .select([
        'executions.id as id',
        'executions.kind as kind',
        'executions.api_key_id as key_id',
        'executions.agent_id as agent_id',
        'agents.name as agent_name',
        'agents.model_id as agent_model',
        'executions.pipeline_id as pipeline_id',
        'pipelines.name as pipeline_name',
        'executions.status as status',
        'executions.conversation_id as conversation_id',
        'executions.created_at as created_at',
      ])
      .where('executions.account_id', '=', filter.accountId)
      .where('executions.created_at', '>=', filter.from)
      .where('executions.created_at', '<', filter.to);
    if (filter.keyId !== undefined) query = query.where('executions.api_key_id', '=', filter.keyId);
    const { model, endUser } = filter;
    if (model !== undefined) {
      // A run that called the model, or (before any call) an agent configured with it.
      query = query.where((eb) =>
        eb.or([
          eb.exists(
            eb
              .selectFrom('usage_records')
              .select('usage_records.id')
              .whereRef('usage_records.execution_id', '=', 'executions.id')
              .where('usage_records.model', '=', model),
          ),
          eb('agents.model_id', '=', model),
        ]),
      );
    }
    if (endUser !== undefined) {
      query = query.where((eb) =>
        eb.exists(
          eb
            .selectFrom('usage_records')
            .select('usage_records.id')
            .whereRef('usage_records.execution_id', '=', 'executions.id')
            .where('usage_records.end_user', '=', endUser),
        ),
      );
    }
    return query;
  }

  /** Agent and pipeline runs, named, with the sums of their calls. */
  private async runs(filter: UsageFilter, limit: number): Promise<ActivityRow[]> {
    const query = this.runsQuery(filter);
    const runs = await query
      .orderBy('executions.created_at', 'desc')
      .orderBy('executions.id', 'desc')
      .limit(limit)
      .execute();
    const sums = await this.callsOfRuns(
      filter.accountId,
      runs.map((run) => run.id),
    );
    return runs.map((run) => {
      const ofRun = sums.get(run.id);
      const models = ofRun?.models ?? [];
      return {
        source: run.kind,
        id: run.id,
        keyId: run.key_id,
        model: models[0] ?? run.agent_model ?? null,
        models,
        route: null,
        endUser: ofRun?.endUser ?? null,
        conversationId: run.conversation_id,
        agentId: run.agent_id,
        agentName: run.agent_name,
        pipelineId: run.pipeline_id,
        pipelineName: run.pipeline_name,
        status: run.status,
        calls: ofRun?.calls ?? 0,
        totalTokens: ofRun?.tokens ?? 0,
        latencyMs: ofRun === undefined ? null : ofRun.latencyMs,
        costMicros: ofRun === undefined ? 0 : ofRun.unpriced > 0 ? null : ofRun.costMicros,
        createdAt: timeOf(run.created_at),
      };
    });
  }

  /** The sums of each run's calls, per model in order of first use. */
  private async callsOfRuns(accountId: string, executionIds: string[]) {
    const result = new Map<
      string,
      {
        models: string[];
        endUser: string | null;
        calls: number;
        tokens: number;
        latencyMs: number;
        costMicros: number;
        unpriced: number;
      }
    >();
    if (executionIds.length === 0) return result;
    const rows = await this.db
      .selectFrom('usage_records')
      .select((eb) => [
        'execution_id',
        'model',
        eb.fn.max('end_user').as('end_user'),
        eb.fn.min('created_at').as('first_at'),
        sql<number>`count(*)`.as('calls'),
        sql<number>`sum(input_tokens + output_tokens)`.as('tokens'),
        sql<number>`sum(latency_ms)`.as('latency'),
        sql<number | null>`sum(cost_micros)`.as('cost'),
        sql<number>`sum(case when cost_micros is null then 1 else 0 end)`.as('unpriced'),
      ])
      .where('account_id', '=', accountId)
      .where('execution_id', 'in', executionIds)
      .groupBy(['execution_id', 'model'])
      .orderBy(sql`min(created_at)`)
      .execute();
    for (const row of rows) {
      const id = row.execution_id!;
      const sums = result.get(id) ?? {
        models: [],
        endUser: null,
        calls: 0,
        tokens: 0,
        latencyMs: 0,
        costMicros: 0,
        unpriced: 0,
      };
      sums.models.push(row.model);
      sums.endUser ??= row.end_user;
      sums.calls += number(row.calls);
      sums.tokens += number(row.tokens);
      sums.latencyMs += number(row.latency);
      sums.costMicros += number(row.cost);
      sums.unpriced += number(row.unpriced);
      result.set(id, sums);
    }
    return result;
  }
}
