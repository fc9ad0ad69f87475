// Usage read from what is already stored: assistant turns (one per answered chat request) and
// agent and pipeline executions, aggregated by time bucket, key and model in SQL.
import type { Kysely } from 'kysely';
import { timeBucketExpression, type TimeBucket } from '../../storage/dialects/time-buckets.js';
import type { DialectAdapter } from '../../storage/dialects/dialect.js';
import type { DatabaseSchema } from '../../storage/schema.js';

export type UsageSource = 'chat' | 'agent' | 'pipeline';

/** One aggregated group: a bucket, a key, a model and a source. */
export interface UsageRow {
  bucket: string;
  keyId: string | null;
  model: string | null;
  source: UsageSource;
  requests: number;
  failed: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  latencySumMs: number;
  latencyCount: number;
  latencyMaxMs: number;
}

export interface UsageFilter {
  accountId: string;
  from: string;
  to: string;
  bucket: TimeBucket;
  keyId?: string | undefined;
  model?: string | undefined;
}

export interface ActivityRow {
  source: UsageSource;
  id: string;
  keyId: string | null;
  model: string | null;
  conversationId: string | null;
  agentId: string | null;
  pipelineId: string | null;
  status: string;
  totalTokens: number;
  latencyMs: number | null;
  createdAt: string;
}

const number = (value: unknown): number => (value === null ? 0 : Number(value));

export class UsageRepository {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly dialect: DialectAdapter['kind'],
  ) {}

  async aggregate(filter: UsageFilter): Promise<UsageRow[]> {
    const bucketOf = timeBucketExpression(this.dialect, filter.bucket);
    const [turns, runs] = [
      await this.chatTurns(filter, bucketOf),
      await this.runs(filter, bucketOf),
    ];
    return [...turns, ...runs];
  }

  /** Answered chat turns, by bucket, key and model. */
  private async chatTurns(
    filter: UsageFilter,
    bucketOf: ReturnType<typeof timeBucketExpression>,
  ): Promise<UsageRow[]> {
    let turns = this.db
      .selectFrom('messages')
      .where('messages.account_id', '=', filter.accountId)
      .where('messages.role', '=', 'assistant')
      .where('messages.created_at', '>=', filter.from)
      .where('messages.created_at', '<', filter.to);
    if (filter.keyId !== undefined) turns = turns.where('messages.api_key_id', '=', filter.keyId);
    if (filter.model !== undefined) turns = turns.where('messages.model', '=', filter.model);
    const turnRows = await turns
      .select((eb) => [
        bucketOf('messages.created_at').as('bucket'),
        'messages.api_key_id as key_id',
        'messages.model as model',
        eb.fn.countAll<number>().as('requests'),
        eb.fn.sum<number>('messages.prompt_tokens').as('prompt_tokens'),
        eb.fn.sum<number>('messages.completion_tokens').as('completion_tokens'),
        eb.fn.sum<number>('messages.latency_ms').as('latency_sum'),
        eb.fn.count<number>('messages.latency_ms').as('latency_count'),
        eb.fn.max<number>('messages.latency_ms').as('latency_max'),
      ])
      .groupBy(['bucket', 'messages.api_key_id', 'messages.model'])
      .execute();

    return turnRows.map((row) => {
      const promptTokens = number(row.prompt_tokens);
      const completionTokens = number(row.completion_tokens);
      return {
        bucket: row.bucket,
        keyId: row.key_id,
        model: row.model,
        source: 'chat' as const,
        requests: number(row.requests),
        failed: 0,
        promptTokens,
        completionTokens,
        totalTokens: promptTokens + completionTokens,
        latencySumMs: number(row.latency_sum),
        latencyCount: number(row.latency_count),
        latencyMaxMs: number(row.latency_max),
      };
    });
  }

  /** Agent and pipeline runs, by bucket, key, the agent's model and kind. */
  private async runs(
    filter: UsageFilter,
    bucketOf: ReturnType<typeof timeBucketExpression>,
  ): Promise<UsageRow[]> {
    let runs = this.db
      .selectFrom('executions')
      .leftJoin('agents', 'agents.id', 'executions.agent_id')
      .where('executions.account_id', '=', filter.accountId)
      .where('executions.created_at', '>=', filter.from)
      .where('executions.created_at', '<', filter.to);
    if (filter.keyId !== undefined) runs = runs.where('executions.api_key_id', '=', filter.keyId);
    if (filter.model !== undefined) runs = runs.where('agents.model_id', '=', filter.model);
    const runRows = await runs
      .select((eb) => [
        bucketOf('executions.created_at').as('bucket'),
        'executions.api_key_id as key_id',
        'agents.model_id as model',
        'executions.kind as kind',
        eb.fn.countAll<number>().as('requests'),
        eb.fn
          .sum<number>(eb.case().when('executions.status', '=', 'failed').then(1).else(0).end())
          .as('failed'),
        eb.fn.sum<number>('executions.tokens_used').as('tokens'),
        eb.fn.sum<number>('executions.execution_time_ms').as('latency_sum'),
        eb.fn.count<number>('executions.execution_time_ms').as('latency_count'),
        eb.fn.max<number>('executions.execution_time_ms').as('latency_max'),
      ])
      .groupBy(['bucket', 'executions.api_key_id', 'agents.model_id', 'executions.kind'])
      .execute();

    return runRows.map((row) => ({
      bucket: row.bucket,
      keyId: row.key_id,
      model: row.model,
      source: row.kind,
      requests: number(row.requests),
      failed: number(row.failed),
      promptTokens: 0,
      completionTokens: 0,
      totalTokens: number(row.tokens),
      latencySumMs: number(row.latency_sum),
      latencyCount: number(row.latency_count),
      latencyMaxMs: number(row.latency_max),
    }));
  }

  /** The latest answered turns and runs of the account, newest first. */
  async recent(accountId: string, limit: number): Promise<ActivityRow[]> {
    const turns = await this.db
      .selectFrom('messages')
      .select([
        'id',
        'api_key_id',
        'model',
        'conversation_id',
        'prompt_tokens',
        'completion_tokens',
        'latency_ms',
        'finish_reason',
        'created_at',
      ])
      .where('account_id', '=', accountId)
      .where('role', '=', 'assistant')
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
    const runs = await this.db
      .selectFrom('executions')
      .select([
        'id',
        'api_key_id',
        'kind',
        'agent_id',
        'pipeline_id',
        'conversation_id',
        'status',
        'tokens_used',
        'execution_time_ms',
        'created_at',
      ])
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
    const merged: ActivityRow[] = [
      ...turns.map((row) => ({
        source: 'chat' as const,
        id: row.id,
        keyId: row.api_key_id,
        model: row.model,
        conversationId: row.conversation_id,
        agentId: null,
        pipelineId: null,
        status: row.finish_reason ?? 'stop',
        totalTokens: number(row.prompt_tokens) + number(row.completion_tokens),
        latencyMs: row.latency_ms === null ? null : Number(row.latency_ms),
        createdAt: row.created_at,
      })),
      ...runs.map((row) => ({
        source: row.kind,
        id: row.id,
        keyId: row.api_key_id,
        model: null,
        conversationId: row.conversation_id,
        agentId: row.agent_id,
        pipelineId: row.pipeline_id,
        status: row.status,
        totalTokens: number(row.tokens_used),
        latencyMs: row.execution_time_ms === null ? null : Number(row.execution_time_ms),
        createdAt: row.created_at,
      })),
    ];
    merged.sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
    return merged.slice(0, limit);
  }
}
