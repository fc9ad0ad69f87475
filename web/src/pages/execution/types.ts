// The execution record as GET /v1/executions/{id} answers it (from the generated API types).
import type { paths } from '../../api/client';

export type ExecutionAnswer =
  paths['/v1/executions/{execution_id}']['get']['responses'][200]['content']['application/json'];
export type ExecutionRecord = ExecutionAnswer['execution'];
export type StepRecord = ExecutionRecord['steps'][number];
export type StageRecord = ExecutionRecord['stages'][number];
