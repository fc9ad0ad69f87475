// The JSON of execution records, their stages and their events, with the schemas that describe
// them.
import Type from 'typebox';
import {
  awaitingDecision,
  type Execution,
  type ExecutionError,
  type ExecutionDetail,
  type ExecutionEvent,
  type StageRecord,
  type StepRecord,
} from './execution.js';
import { ExecutionErrorSchema, NullableTimestamp, Timestamp } from '../../http/schemas/common.js';

export const StageRecordSchema = Type.Object({
  id: Type.String(),
  stage_id: Type.String(),
  position: Type.Integer(),
  name: Type.String(),
  agent_id: Type.String(),
  status: Type.String({
    description: 'pending, running, waiting_for_approval, completed, failed or skipped.',
  }),
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

/**
 * How much of a run's steps an execution answer shows: its first `detailSteps` steps, each field
 * (`arguments`, `output`) whose JSON is longer than `shownFieldChars` replaced by a preview.
 * A run's steps page by page and one step whole are at GET …/steps and …/steps/{step_id}.
 */
export const stepDisplay = { detailSteps: 100, shownFieldChars: 8192, previewChars: 2000 } as const;

const fieldNote = ` Past ${stepDisplay.shownFieldChars} characters of JSON (in an execution's answer, its events and its steps page) it is shown as \`{"truncated": true, "bytes", "preview"}\`; GET /v1/executions/{execution_id}/steps/{step_id} answers it whole.`;

export const StepRecordSchema = Type.Object({
  id: Type.String({ description: 'step_…' }),
  stage_record_id: Type.Union([Type.String(), Type.Null()], {
    description:
      'The stage record (in `stages`) whose agent took the step; null in an agent execution.',
  }),
  position: Type.Integer(),
  kind: Type.Union([Type.Literal('model'), Type.Literal('tool')], {
    description:
      '`model`: a turn of the model (its text and the calls it proposed); `tool`: one call.',
  }),
  name: Type.String({ description: 'The model, or the tool called.' }),
  call_id: Type.Union([Type.String(), Type.Null()]),
  arguments: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description: `A tool call’s arguments: as proposed, or as approved when a person edited them.${fieldNote}`,
  }),
  output: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description: `A model turn: \`{content, tool_calls}\` (and \`calls_refused\`: calls past tools.max_calls_per_turn, not made). A tool call: \`{ok, content}\` (the result as fed back, bounded).${fieldNote}`,
  }),
  status: Type.String({
    description:
      'running (recorded before a call starts), completed, failed, waiting_for_approval, interrupted (the call was running when its instance stopped: it waits for a person to approve it again or reject it), approved or rejected.',
  }),
  decision: Type.Union(
    [
      Type.Object({
        decision: Type.Union([Type.Literal('approved'), Type.Literal('rejected')]),
        reason: Type.Union([Type.String(), Type.Null()]),
        edited: Type.Boolean(),
        decided_at: Timestamp(),
      }),
      Type.Null(),
    ],
    { description: 'A person’s decision on a call that needed approval.' },
  ),
  tokens_used: Type.Integer(),
  duration_ms: Type.Union([Type.Integer(), Type.Null()]),
  started_at: Timestamp(),
  completed_at: NullableTimestamp(),
  expires_at: Type.Union([Timestamp(), Type.Null()], {
    description: 'When a call waiting for approval times out (the run then fails).',
  }),
  error: Type.Optional(Type.String()),
  error_detail: Type.Optional(ExecutionErrorSchema),
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
  status: Type.Union(
    [
      Type.Literal('running'),
      Type.Literal('waiting_for_approval'),
      Type.Literal('completed'),
      Type.Literal('failed'),
    ],
    {
      description:
        '`waiting_for_approval`: a tool call needs a person’s decision (see `pending_approvals`; POST …/approve or …/reject).',
    },
  ),
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
  steps: Type.Array(StepRecordSchema, {
    description: `The model turns and tool calls of tool-calling agents (ToolAgent), in order; empty for other agents. At most the first ${stepDisplay.detailSteps} (\`steps_total\` counts them all; GET /v1/executions/{execution_id}/steps pages through them).`,
  }),
  steps_total: Type.Integer({ description: 'How many steps the run has recorded.' }),
  pending_approvals: Type.Array(StepRecordSchema, {
    description:
      'The tool calls waiting for a person’s decision (while `waiting_for_approval`): `waiting_for_approval` and `interrupted` ones.',
  }),
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

/** A step's field as shown: whole, or past the display bound a preview of its JSON. */
function shownField(value: Record<string, unknown> | null): Record<string, unknown> | null {
  if (value === null) return null;
  const text = JSON.stringify(value);
  if (text.length <= stepDisplay.shownFieldChars) return value;
  return {
    truncated: true,
    bytes: Buffer.byteLength(text, 'utf8'),
    preview: text.slice(0, stepDisplay.previewChars),
  };
}

/** A step as answers show it: `whole`, or (lists, events) its large fields as previews. */
export function stepRecordToJson(step: StepRecord, whole = false) {
  return {
    id: step.id,
    stage_record_id: step.stageRecordId,
    position: step.position,
    kind: step.kind,
    name: step.name,
    call_id: step.callId,
    arguments: whole ? step.arguments : shownField(step.arguments),
    output: whole ? step.output : shownField(step.output),
    status: step.status,
    decision:
      step.decision === null
        ? null
        : {
            decision: step.decision.decision,
            reason: step.decision.reason,
            edited: step.decision.edited,
            decided_at: step.decision.decidedAt,
          },
    tokens_used: step.tokensUsed,
    duration_ms: step.durationMs,
    started_at: step.startedAt,
    completed_at: step.completedAt,
    expires_at: step.expiresAt,
    ...errorFields(step.error),
  };
}

export function executionToJson(
  execution: Execution,
  stages: readonly StageRecord[] = [],
  steps: readonly StepRecord[] = [],
) {
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
    steps: steps.slice(0, stepDisplay.detailSteps).map((step) => stepRecordToJson(step)),
    steps_total: steps.length,
    // Whole: a person decides on these arguments (bounded by tools.max_argument_bytes).
    pending_approvals: steps
      .filter((step) => awaitingDecision.includes(step.status))
      .map((step) => stepRecordToJson(step, true)),
  };
}

/** An execution read with its stages and steps, as GET /v1/executions/{id} answers it. */
export function executionDetailToJson(detail: ExecutionDetail) {
  return executionToJson(detail.execution, detail.stages, detail.steps);
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
    case 'step':
      return { type: 'step', execution_id: executionId, ...stepRecordToJson(event.step) };
    case 'approval-required':
      return {
        type: 'approval-required',
        execution_id: executionId,
        ...stepRecordToJson(event.step, true),
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
