// Execution records as the domain sees them: a run of an agent or a pipeline, its stages, how it
// ended, and the events a follower receives as the records change.
import type { ExecutionError } from '../../../errors/execution-error.js';

export type { ExecutionError };
export { executionError, executionErrorFrom } from '../../../errors/execution-error.js';

export type ExecutionKind = 'agent' | 'pipeline';
export type ExecutionStatus = 'running' | 'completed' | 'failed';
export type StageStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped';

export interface Execution {
  id: string;
  accountId: string;
  kind: ExecutionKind;
  agentId: string | null;
  pipelineId: string | null;
  conversationId: string | null;
  /** The `user_id` the run was made for, when the client gave one. */
  userId: string | null;
  status: ExecutionStatus;
  input: Record<string, unknown>;
  output: Record<string, unknown> | null;
  error: ExecutionError | null;
  tokensUsed: number;
  executionTimeMs: number | null;
  createdAt: string;
  completedAt: string | null;
  /** The key whose request started the run (usage by key); null when unknown. */
  apiKeyId: string | null;
}

/** What a caller says about a run it is starting; the service adds id, status and times. */
export interface NewExecution {
  accountId: string;
  kind: ExecutionKind;
  agentId?: string | null;
  pipelineId?: string | null;
  conversationId?: string | null;
  userId?: string | null;
  apiKeyId?: string | null;
  input: Record<string, unknown>;
}

export interface ExecutionOutcome {
  status: 'completed' | 'failed';
  output: Record<string, unknown> | null;
  error: ExecutionError | null;
  tokensUsed: number;
  executionTimeMs: number;
}

/** One stage of a pipeline run, planned when the run starts. */
export interface StagePlan {
  /** The pipeline stage's id (`stage_…`). */
  stageId: string;
  name: string;
  agentId: string;
}

export interface StageRecord {
  id: string;
  executionId: string;
  position: number;
  stageId: string;
  name: string;
  agentId: string;
  status: StageStatus;
  attempts: number;
  input: Record<string, unknown> | null;
  output: Record<string, unknown> | null;
  error: ExecutionError | null;
  tokensUsed: number;
  executionTimeMs: number | null;
  startedAt: string | null;
  completedAt: string | null;
}

export interface StageUpdate {
  status: StageStatus;
  attempts?: number;
  input?: Record<string, unknown> | null;
  output?: Record<string, unknown> | null;
  error?: ExecutionError | null;
  tokensUsed?: number;
  executionTimeMs?: number | null;
  startedAt?: string | null;
  completedAt?: string | null;
}

/** A run with its stage records (none for an agent run). */
export interface ExecutionDetail {
  execution: Execution;
  stages: StageRecord[];
}

/** What a follower of an execution sees, in order: stages starting and ending, then the end. */
export type ExecutionEvent =
  | { type: 'stage-start'; execution: Execution; stage: StageRecord }
  | { type: 'stage-end'; execution: Execution; stage: StageRecord }
  | { type: 'execution-end'; execution: Execution; stagesCompleted: number };
