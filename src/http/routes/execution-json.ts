// The JSON of execution records and their stages, shared by the agents and pipelines routes.
import Type from 'typebox';
import { NullableTimestamp } from '../schemas/common.js';
import type { Execution } from '../../storage/repositories/executions.repository.js';
import type { StageRecord } from '../../storage/repositories/pipelines.repository.js';

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
    ...(stage.error === null ? {} : { error: stage.error.message, error_detail: stage.error }),
  };
}

export function executionToJson(execution: Execution, stages: StageRecord[] = []) {
  return {
    id: execution.id,
    kind: execution.kind,
    agent_id: execution.agentId,
    pipeline_id: execution.pipelineId,
    conversation_id: execution.conversationId,
    status: execution.status,
    created_at: execution.createdAt,
    completed_at: execution.completedAt,
    execution_time_ms: execution.executionTimeMs,
    tokens_used: execution.tokensUsed,
    ...(execution.error === null
      ? {}
      : { error: execution.error.message, error_detail: execution.error }),
    input: execution.input,
    output: execution.output,
    stages: stages.map(stageRecordToJson),
  };
}
