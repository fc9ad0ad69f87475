// Execution records: created when a run starts, finished once as completed or failed.
import type { Insertable, Kysely } from 'kysely';
import type { DatabaseSchema } from '../schema.js';

export type ExecutionStatus = 'running' | 'completed' | 'failed';

export interface ExecutionError {
  message: string;
  type: string;
  code: string;
  [detail: string]: unknown;
}

export interface Execution {
  id: string;
  accountId: string;
  kind: 'agent' | 'pipeline';
  agentId: string | null;
  pipelineId: string | null;
  conversationId: string | null;
  status: ExecutionStatus;
  input: Record<string, unknown>;
  output: Record<string, unknown> | null;
  error: ExecutionError | null;
  tokensUsed: number;
  executionTimeMs: number | null;
  createdAt: string;
  completedAt: string | null;
}

export interface ExecutionOutcome {
  status: 'completed' | 'failed';
  output: Record<string, unknown> | null;
  error: ExecutionError | null;
  tokensUsed: number;
  executionTimeMs: number;
  completedAt: string;
}

function parseJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

export function toExecution(row: DatabaseSchema['executions']): Execution {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    agentId: row.agent_id,
    pipelineId: row.pipeline_id,
    conversationId: row.conversation_id,
    status: row.status,
    input: JSON.parse(row.input) as Record<string, unknown>,
    output: parseJson<Record<string, unknown>>(row.output),
    error: parseJson<ExecutionError>(row.error),
    tokensUsed: Number(row.tokens_used),
    executionTimeMs: row.execution_time_ms === null ? null : Number(row.execution_time_ms),
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}

/** The row of a run that has just started on instance `instanceId`. */
export function runningExecutionRow(
  execution: Execution,
  instanceId: string,
): Insertable<DatabaseSchema['executions']> {
  return {
    id: execution.id,
    account_id: execution.accountId,
    kind: execution.kind,
    agent_id: execution.agentId,
    pipeline_id: execution.pipelineId,
    conversation_id: execution.conversationId,
    status: 'running',
    input: JSON.stringify(execution.input),
    output: null,
    error: null,
    tokens_used: 0,
    execution_time_ms: null,
    created_at: execution.createdAt,
    completed_at: null,
    instance_id: instanceId,
  };
}

export class ExecutionsRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insertRunning(execution: Execution, instanceId: string): Promise<void> {
    await this.db
      .insertInto('executions')
      .values(runningExecutionRow(execution, instanceId))
      .execute();
  }

  /** Records how a run ended; a run already finished is left as it was. */
  async finish(id: string, outcome: ExecutionOutcome): Promise<void> {
    await this.db
      .updateTable('executions')
      .set({
        status: outcome.status,
        output: outcome.output === null ? null : JSON.stringify(outcome.output),
        error: outcome.error === null ? null : JSON.stringify(outcome.error),
        tokens_used: outcome.tokensUsed,
        execution_time_ms: outcome.executionTimeMs,
        completed_at: outcome.completedAt,
      })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .execute();
  }

  async find(accountId: string, id: string): Promise<Execution | undefined> {
    const row = await this.db
      .selectFrom('executions')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toExecution(row);
  }
}
