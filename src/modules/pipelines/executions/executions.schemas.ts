// The JSON of execution records, their stages and their events, with the schemas that describe
// them; shared by the executions, agents and pipelines routes.
import Type from 'typebox';
import type { Execution, ExecutionError, ExecutionEvent, StageRecord } from './execution.js';
import {
  ExecutionErrorSchema,
  NullableTimestamp,
  Timestamp,
} from '../../../http/schemas/common.js';

export const StageRecordSchema = Type.Object({
  id: Type.String(),
  stage_id: Type.String(),
  position: Type.Integer(),
  name: Type.String(),
  agent_id: Type.String(),
  status: Type.String({ description: 'pending, running, completed, failed or skipped.' }),
  attempts: Type.Integer(),
  started_at: NullableTimestamp(),
  completed_at: NullableTimestamp(),
  execution_time_ms: Type.Union([Type.Integer(), Type.Null()]),
  tokens_used: Type.Integer(),
  input: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  output: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  error: Type.Optional(Type.String()),
  error_detail: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

export const ExecutionSchema = Type.Object({
  id: Type.String({ description: 'exec_…' }),
  kind: Type.Union([Type.Literal('agent'), Type.Literal('pipeline')]),
  agent_id: Type.Union([Type.String(), Type.Null()]),
  pipeline_id: Type.Union([Type.String(), Type.Null()]),
  conversation_id: Type.Union([Type.String(), Type.Null()]),
  user_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The `user_id` the run was made for, when one was given.',
  }),
  status: Type.Union([Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]),
  created_at: Timestamp(),
  completed_at: NullableTimestamp(),
  execution_time_ms: Type.Union([Type.Integer(), Type.Null()]),
  tokens_used: Type.Integer(),
  error: Type.Optional(Type.String({ description: 'Present when the execution failed.' })),
  error_detail: Type.Optional(ExecutionErrorSchema),
  input: Type.Record(Type.String(), Type.Unknown()),
  output: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  stages: Type.Array(StageRecordSchema, {
    description: 'The stages of a pipeline execution, in order; empty for an agent execution.',
  }),
});

/** An entry of a pipeline's execution list. */
export const ExecutionListEntrySchema = Type.Object({
  id: Type.String(),
  pipeline_id: Type.String(),
  status: Type.String(),
  user_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp(),
  completed_at: NullableTimestamp(),
  execution_time_ms: Type.Union([Type.Integer(), Type.Null()]),
  tokens_used: Type.Integer(),
  error: Type.Optional(Type.String()),
});

/** A failure as `error` (its message) beside `error_detail` (the whole error object); none when null. */
function errorFields(error: ExecutionError | null) {
  return error === null ? {} : { error: error.message, error_detail: error };
}

export function stageRecordToJson(stage: StageRecord) {
  return {
    id: stage.id,
    stage_id: stage.stageId,
    position: stage.position,
    name: stage.name,
    agent_id: stage.agentId,
    status: stage.status,
    attempts: stage.attempts,
    started_at: stage.startedAt,
    completed_at: stage.completedAt,
    execution_time_ms: stage.executionTimeMs,
    tokens_used: stage.tokensUsed,
    input: stage.input,
    output: stage.output,
    ...errorFields(stage.error),
  };
}

export function executionToJson(execution: Execution, stages: readonly StageRecord[] = []) {
  return {
    id: execution.id,
    kind: execution.kind,
    agent_id: execution.agentId,
    pipeline_id: execution.pipelineId,
    conversation_id: execution.conversationId,
    user_id: execution.userId,
    status: execution.status,
    created_at: execution.createdAt,
    completed_at: execution.completedAt,
    execution_time_ms: execution.executionTimeMs,
    tokens_used: execution.tokensUsed,
    ...errorFields(execution.error),
    input: execution.input,
    output: execution.output,
    stages: stages.map(stageRecordToJson),
  };
}

export function executionListEntry(execution: Execution) {
  return {
    id: execution.id,
    pipeline_id: execution.pipelineId ?? '',
    status: execution.status,
    user_id: execution.userId,
    created_at: execution.createdAt,
    completed_at: execution.completedAt,
    execution_time_ms: execution.executionTimeMs,
    tokens_used: execution.tokensUsed,
    ...(execution.error === null ? {} : { error: execution.error.message }),
  };
}

/** An event of `GET /v1/executions/{id}/events`, as sent in one `data:` line. */
export function executionEventToJson(event: ExecutionEvent): Record<string, unknown> {
  const executionId = event.execution.id;
  switch (event.type) {
    case 'stage-start':
      return {
        type: 'stage-start',
        execution_id: executionId,
        stage: event.stage.name,
        stage_id: event.stage.stageId,
        position: event.stage.position,
        started_at: event.stage.startedAt,
      };
    case 'stage-end':
      return {
        type: 'stage-end',
        execution_id: executionId,
        ...stageRecordToJson(event.stage),
        stage: event.stage.name,
      };
    case 'execution-end': {
      const { execution } = event;
      return {
        type: 'execution-end',
        execution_id: executionId,
        kind: execution.kind,
        status: execution.status,
        output: execution.output,
        ...errorFields(execution.error),
        metrics: {
          execution_time_ms: execution.executionTimeMs,
          stages_completed: event.stagesCompleted,
          tokens_used: execution.tokensUsed,
        },
      };
    }
  }
}
