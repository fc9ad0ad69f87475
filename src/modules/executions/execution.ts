// Execution records as the domain sees them: a run of an agent or a pipeline, its stages, how it
// ended, and the events a follower receives as the records change.
import type { ExecutionError } from '../../errors/execution-error.js';

export type { ExecutionError };
export { executionError, executionErrorFrom } from '../../errors/execution-error.js';

export type ExecutionKind = 'agent' | 'pipeline';
/** `waiting_for_approval`: a tool call waits for a person's decision (the run is paused). */
export type ExecutionStatus = 'running' | 'waiting_for_approval' | 'completed' | 'failed';
export type StageStatus =
  | 'pending'
  | 'running'
  | 'waiting_for_approval'
  | 'completed'
  | 'failed'
  | 'skipped';

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

export type StepKind = 'model' | 'tool';
/**
 * `running`: recorded before a call starts, so that a call its instance was stopped in is never
 * made again on its own; found so by a later sitting, it is `interrupted` and waits for a person
 * like a call that needs approval (unless its source is idempotent).
 */
export type StepStatus =
  | 'running'
  | 'completed'
  | 'failed'
  | 'waiting_for_approval'
  | 'interrupted'
  | 'approved'
  | 'rejected';

/** The statuses of a call that waits for a person's decision. */
/**
 * Where a run's execution time counts from in this sitting: its creation, or — for a run that
 * was paused for a person's decision and goes on now — as far back from `now` as it had worked,
 * so that the wait is not counted.
 */
export function workStart(
  execution: Pick<Execution, 'createdAt' | 'executionTimeMs'>,
  now: number,
) {
  return execution.executionTimeMs === null
    ? Date.parse(execution.createdAt)
    : now - execution.executionTimeMs;
}

export const awaitingDecision: readonly StepStatus[] = ['waiting_for_approval', 'interrupted'];

/** A person's answer to a call that needed approval. */
export interface StepDecision {
  decision: 'approved' | 'rejected';
  /** The rejection's reason, when one was given. */
  reason: string | null;
  /** Whether the approval replaced the proposed arguments. */
  edited: boolean;
  /** The key that decided (`key_…`), when known. */
  apiKeyId: string | null;
  decidedAt: string;
}

/**
 * One step of a tool-calling agent: a model turn (`output` is the assistant turn, `name` the
 * model) or a tool call (`arguments` as proposed or approved, `output` the result fed back).
 */
export interface StepRecord {
  id: string;
  executionId: string;
  /** The stage record whose agent took the step; null for an agent execution's steps. */
  stageRecordId: string | null;
  position: number;
  kind: StepKind;
  name: string;
  callId: string | null;
  arguments: Record<string, unknown> | null;
  output: Record<string, unknown> | null;
  status: StepStatus;
  error: ExecutionError | null;
  decision: StepDecision | null;
  tokensUsed: number;
  durationMs: number | null;
  startedAt: string;
  completedAt: string | null;
  /** When a call waiting for approval times out. */
  expiresAt: string | null;
  /**
   * The input schema of the tool of a call waiting for a decision: edited arguments are checked
   * against it (the tool itself may be unreachable then). Not shown in answers.
   */
  toolSchema: Record<string, unknown> | null;
}

export interface NewStep {
  stageRecordId: string | null;
  kind: StepKind;
  name: string;
  callId?: string | null;
  arguments?: Record<string, unknown> | null;
  output?: Record<string, unknown> | null;
  status: StepStatus;
  error?: ExecutionError | null;
  tokensUsed?: number;
  durationMs?: number | null;
  startedAt: string;
  completedAt?: string | null;
  expiresAt?: string | null;
  toolSchema?: Record<string, unknown> | null;
}

/** The record of a new step: its fields as given, the rest empty (no decision yet). */
export function stepRecordOf(
  id: string,
  executionId: string,
  position: number,
  step: NewStep,
): StepRecord {
  return {
    id,
    executionId,
    stageRecordId: step.stageRecordId,
    position,
    kind: step.kind,
    name: step.name,
    callId: step.callId ?? null,
    arguments: step.arguments ?? null,
    output: step.output ?? null,
    status: step.status,
    error: step.error ?? null,
    decision: null,
    tokensUsed: step.tokensUsed ?? 0,
    durationMs: step.durationMs ?? null,
    startedAt: step.startedAt,
    completedAt: step.completedAt ?? null,
    expiresAt: step.expiresAt ?? null,
    toolSchema: step.toolSchema ?? null,
  };
}

export interface StepUpdate {
  status: StepStatus;
  arguments?: Record<string, unknown> | null;
  output?: Record<string, unknown> | null;
  error?: ExecutionError | null;
  decision?: StepDecision | null;
  durationMs?: number | null;
  completedAt?: string | null;
  expiresAt?: string | null;
  toolSchema?: Record<string, unknown> | null;
}

/** A run with its stage records (none for an agent run) and its agents' steps. */
export interface ExecutionDetail {
  execution: Execution;
  stages: StageRecord[];
  steps: StepRecord[];
}

/** What a follower of an execution sees, in order: stages starting and ending, then the end. */
export type ExecutionEvent =
  | { type: 'stage-start'; execution: Execution; stage: StageRecord }
  | { type: 'step'; execution: Execution; step: StepRecord }
  | { type: 'approval-required'; execution: Execution; step: StepRecord }
  | { type: 'stage-end'; execution: Execution; stage: StageRecord }
  | { type: 'execution-end'; execution: Execution; stagesCompleted: number };
