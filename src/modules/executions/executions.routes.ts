// Execution records of agent and pipeline runs: read one, or follow it as Server-Sent Events, as a
// Fastify plugin over the execution service.
import Type from 'typebox';
import type { CredentialWatch } from '../../auth/credential-watch.js';
import { access } from '../../auth/scopes.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import type { ExecutionEvent } from './execution.js';
import type { ExecutionService } from './execution-service.js';
import {
  commonParameters,
  ObjectIdSchema,
  PageQuerySchema,
  PageSchema,
} from '../../http/schemas/common.js';
import {
  guardAnswer,
  serverSentEvents,
  untilCredentialsEnd,
  writeEventStream,
} from '../../http/streaming.js';
import { principalOf, type App } from '../../http/types.js';
import {
  ExecutionSchema,
  executionDetailToJson,
  executionEventToJson,
  StepRecordSchema,
  stepRecordToJson,
} from './executions.schemas.js';
import type { ApprovalService } from './approvals.js';

const ExecutionIdParams = Type.Object({ execution_id: ObjectIdSchema('exec_…') });

async function* asJson(events: AsyncIterable<ExecutionEvent>) {
  for await (const event of events) yield executionEventToJson(event);
}

export interface ExecutionRoutesDependencies {
  readonly executions: ExecutionService;
  /** Ends a follower's stream when its key is revoked or expires. */
  readonly credentialWatch: CredentialWatch;
  /** Decisions on tool calls waiting for approval. */
  readonly approvals: ApprovalService;
}

/** The routes of execution records, registered by app.ts like any Fastify plugin. */
export function executionsPlugin(dependencies: ExecutionRoutesDependencies): FeaturePlugin {
  return featurePlugin('executions', (app) => {
    readRoute(app, dependencies.executions);
    stepRoutes(app, dependencies.executions);
    followRoute(app, dependencies);
    decisionRoutes(app, dependencies.approvals);
  });
}

function readRoute(app: App, executions: ExecutionService): void {
  app.get(
    '/v1/executions/:execution_id',
    {
      config: { access: access.scopes('agents:read'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'getExecution',
        tags: ['Executions'],
        summary: 'Get an execution',
        description:
          'An agent or pipeline execution with its input, output, error, the `user_id` and `conversation_id` it was run with, and (for a pipeline) its stages. Another account’s execution answers 404.',
        params: ExecutionIdParams,
        response: { 200: Type.Object({ execution: ExecutionSchema }) },
      },
    },
    async (request) => {
      const detail = await executions.get(
        principalOf(request).accountId,
        request.params.execution_id,
      );
      return { execution: executionDetailToJson(detail) };
    },
  );
}

const StepParams = Type.Object({
  execution_id: ObjectIdSchema('exec_…'),
  step_id: ObjectIdSchema('step_…'),
});

function stepRoutes(app: App, executions: ExecutionService): void {
  const config = { access: access.scopes('agents:read'), feature: 'agent_orchestration' } as const;
  app.get(
    '/v1/executions/:execution_id/steps',
    {
      config,
      schema: {
        operationId: 'listExecutionSteps',
        tags: ['Executions'],
        summary: 'List an execution’s steps',
        description:
          'The model turns and tool calls of the run in order, a page at a time (`limit`, `offset`), each field as in the execution’s answer (a large one as a preview). Another account’s execution answers 404.',
        params: ExecutionIdParams,
        querystring: PageQuerySchema,
        response: { 200: PageSchema('steps', StepRecordSchema) },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const page = await executions.stepsPage(
        principalOf(request).accountId,
        request.params.execution_id,
        { limit, offset },
      );
      return {
        steps: page.steps.map((step) => stepRecordToJson(step)),
        total: page.total,
        limit,
        offset,
      };
    },
  );
  app.get(
    '/v1/executions/:execution_id/steps/:step_id',
    {
      config,
      schema: {
        operationId: 'getExecutionStep',
        tags: ['Executions'],
        summary: 'Get one step of an execution, whole',
        description:
          'One model turn or tool call with its arguments and output whole (each bounded where it is recorded: tools.max_argument_bytes, the agent’s max_result_chars). 404 for another account’s execution or a step it does not have.',
        params: StepParams,
        response: { 200: Type.Object({ step: StepRecordSchema }) },
      },
    },
    async (request) => {
      const { execution_id: executionId, step_id: stepId } = request.params;
      const step = await executions.step(principalOf(request).accountId, executionId, stepId);
      return { step: stepRecordToJson(step, true) };
    },
  );
}

function followRoute(app: App, { executions, credentialWatch }: ExecutionRoutesDependencies): void {
  app.get(
    '/v1/executions/:execution_id/events',
    {
      config: { access: access.scopes('agents:read'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'followExecution',
        tags: ['Executions'],
        summary: 'Follow an execution (Server-Sent Events)',
        description: [
          'One `data:` line per event, as the execution’s records change: `{"type":"stage-start","execution_id","stage","stage_id","position","started_at"}`, `{"type":"stage-end",…the stage record…,"stage"}` (a skipped stage has only its end) and finally `{"type":"execution-end","execution_id","kind","status","output","error","error_detail","metrics":{"execution_time_ms","stages_completed","tokens_used"}}`; then the stream closes. An agent execution has only its end.',
          'What already happened is sent at once (a finished execution is replayed whole), then each change as it is made — by whichever instance runs it: changes reach every instance through PostgreSQL LISTEN/NOTIFY or, with REDIS_URL, Redis pub/sub.',
        ].join('\n\n'),
        params: ExecutionIdParams,
        response: {
          200: {
            description: 'The event stream.',
            content: { 'text/event-stream': { schema: Type.String() } },
          },
        },
      },
    },
    async (request, reply) => {
      // Following ends when the key is revoked or expires: an `error` event comes last.
      const guard = guardAnswer(reply, credentialWatch, principalOf(request));
      const events = await executions.follow(
        principalOf(request).accountId,
        request.params.execution_id,
        guard.cancel.signal,
      );
      void writeEventStream(
        reply,
        serverSentEvents(
          untilCredentialsEnd<unknown>(asJson(events), guard, (error) => ({
            type: 'error',
            error: error.toBody().error,
          })),
        ),
      );
    },
  );
}

const ApproveBody = Type.Object(
  {
    ...commonParameters(),
    step_id: Type.Optional(
      ObjectIdSchema('The waiting call to approve (`step_…`); default: the first waiting.'),
    ),
    arguments: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        maxProperties: 200,
        description: 'Replaces the proposed arguments: the call runs with these.',
      }),
    ),
  },
  { additionalProperties: false },
);

const RejectBody = Type.Object(
  {
    ...commonParameters(),
    step_id: Type.Optional(
      ObjectIdSchema('The waiting call to reject (`step_…`); default: the first waiting.'),
    ),
    reason: Type.Optional(
      Type.String({ maxLength: 2000, description: 'Recorded on the call and the run’s error.' }),
    ),
  },
  { additionalProperties: false },
);

function decisionRoutes(app: App, approvals: ApprovalService): void {
  const config = { access: access.scopes('agents:write'), feature: 'agent_orchestration' } as const;
  app.post(
    '/v1/executions/:execution_id/approve',
    {
      config,
      schema: {
        operationId: 'approveExecutionCall',
        tags: ['Executions'],
        summary: 'Approve a tool call waiting for approval',
        description:
          'The call runs — with `arguments` when given, else as proposed — and the run goes on in the background, on whichever instance takes it from the job queue (follow it with GET …/events). When several calls of one turn wait, the run goes on once each is decided. 409 when the execution is not `waiting_for_approval` or the call was already decided; 404 for another account’s execution.',
        params: ExecutionIdParams,
        body: ApproveBody,
        response: { 200: Type.Object({ execution: ExecutionSchema }) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { step_id: stepId, arguments: args } = request.body;
      const detail = await approvals.decide(
        principal.accountId,
        request.params.execution_id,
        { approve: true, stepId, arguments: args },
        principal.keyId,
      );
      return { execution: executionDetailToJson(detail) };
    },
  );
  app.post(
    '/v1/executions/:execution_id/reject',
    {
      config,
      schema: {
        operationId: 'rejectExecutionCall',
        tags: ['Executions'],
        summary: 'Reject a tool call waiting for approval',
        description:
          'The run ends `failed` with the error `approval_rejected`, the `reason` recorded on the call and in the error. 409 when the execution is not `waiting_for_approval` or the call was already decided; 404 for another account’s execution.',
        params: ExecutionIdParams,
        body: RejectBody,
        response: { 200: Type.Object({ execution: ExecutionSchema }) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { step_id: stepId, reason } = request.body;
      const detail = await approvals.decide(
        principal.accountId,
        request.params.execution_id,
        { approve: false, stepId, reason },
        principal.keyId,
      );
      return { execution: executionDetailToJson(detail) };
    },
  );
}
