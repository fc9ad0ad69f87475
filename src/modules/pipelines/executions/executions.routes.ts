// Execution records of agent and pipeline runs: read one, or follow it as Server-Sent Events, as a
// Fastify plugin over the execution service.
import Type from 'typebox';
import type { CredentialWatch } from '../../../auth/credential-watch.js';
import { access } from '../../../auth/scopes.js';
import { featurePlugin, type FeaturePlugin } from '../../../http/feature-plugin.js';
import type { ExecutionEvent } from './execution.js';
import type { ExecutionService } from './execution-service.js';
import { ObjectIdSchema } from '../../../http/schemas/common.js';
import {
  guardAnswer,
  sendEventStream,
  serverSentEvents,
  untilCredentialsEnd,
} from '../../../http/streaming.js';
import { principalOf, type App } from '../../../http/types.js';
import { ExecutionSchema, executionEventToJson, executionToJson } from './executions.schemas.js';

const ExecutionIdParams = Type.Object({ execution_id: ObjectIdSchema('exec_…') });

async function* asJson(events: AsyncIterable<ExecutionEvent>) {
  for await (const event of events) yield executionEventToJson(event);
}

export interface ExecutionRoutesDependencies {
  readonly executions: ExecutionService;
  /** Ends a follower's stream when its key is revoked or expires. */
  readonly credentialWatch: CredentialWatch;
}

/** The routes of execution records, registered by app.ts like any Fastify plugin. */
export function executionsPlugin(dependencies: ExecutionRoutesDependencies): FeaturePlugin {
  return featurePlugin('executions', (app) => {
    readRoute(app, dependencies.executions);
    followRoute(app, dependencies);
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
      const { execution, stages } = await executions.get(
        principalOf(request).accountId,
        request.params.execution_id,
      );
      return { execution: executionToJson(execution, stages) };
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
        guard.signal,
      );
      return sendEventStream(
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
