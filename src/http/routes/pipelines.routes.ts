// Pipelines: create, list, read, change, delete; execute (synchronously or in the background);
// their executions, with stage records and a live event stream.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import type { Services } from '../../services.js';
import type { Execution } from '../../storage/repositories/executions.repository.js';
import type { Pipeline } from '../../storage/repositories/pipelines.repository.js';
import { NullableTimestamp, PageQuerySchema, Timestamp } from '../schemas/common.js';
import { clientGoneSignal, sendEventStream, serverSentEvents } from '../streaming.js';
import { principalOf, type App } from '../types.js';
import { stageRecordToJson } from './execution-json.js';

const PipelineIdParams = Type.Object({ pipeline_id: Type.String({ maxLength: 100 }) });

const pathDescription =
  'A path expression: `$.input.<name>` (an input of the run), `$.stages.<earlier stage>.<key>` (an earlier stage’s output) or, in output_mapping, `$.output.<key>` (the stage agent’s result). Keys may go deeper (`.a.b`, `[0]`); a stage name that is not a plain key is written `$.stages["my stage"].key`.';

const StageInputSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'Unique within the pipeline.' }),
    agent_id: Type.String({
      maxLength: 100,
      description: 'An agent of the account, or a public one.',
    }),
    input_mapping: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
        description: `Agent input → ${pathDescription} Input names: query, data, urls, conversation_id, or parameters.<name> (e.g. "parameters.result_count").`,
      }),
    ),
    output_mapping: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
        description:
          'Output name → `$.output.<key>`: names later stages (and the pipeline output) can use besides the result’s own keys.',
      }),
    ),
    timeout_ms: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: 600_000,
        description: 'Per attempt; default: none beyond the models’ own.',
      }),
    ),
    retries: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 5,
        description: 'Extra attempts after a failed run of the agent (not after bad input).',
      }),
    ),
  },
  { additionalProperties: false },
);

const StageSchema = Type.Object({
  id: Type.String({
    description: 'stage_…, assigned by the service (kept when a stage keeps its name).',
  }),
  name: Type.String(),
  agent_id: Type.String(),
  input_mapping: Type.Record(Type.String(), Type.String()),
  output_mapping: Type.Record(Type.String(), Type.String()),
  timeout_ms: Type.Optional(Type.Integer()),
  retries: Type.Optional(Type.Integer()),
});

const VisualLayoutSchema = Type.Object(
  {
    nodes: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          position: Type.Object(
            { x: Type.Number(), y: Type.Number() },
            { additionalProperties: true },
          ),
          data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        },
        { additionalProperties: true },
      ),
      { maxItems: 1000 },
    ),
    edges: Type.Array(
      Type.Object(
        { id: Type.String(), source: Type.String(), target: Type.String() },
        { additionalProperties: true },
      ),
      { maxItems: 5000 },
    ),
  },
  {
    additionalProperties: true,
    description:
      'React Flow’s shape. Stored as given; without one, a left-to-right layout of the stages is generated.',
  },
);

const PipelineFields = {
  name: Type.String(),
  description: Type.String(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
};

function executionEntry(execution: Execution) {
  return {
    id: execution.id,
    pipeline_id: execution.pipelineId ?? '',
    status: execution.status,
    created_at: execution.createdAt,
    completed_at: execution.completedAt,
    execution_time_ms: execution.executionTimeMs,
    tokens_used: execution.tokensUsed,
    ...(execution.error === null ? {} : { error: execution.error.message }),
  };
}

export function pipelineRoutes(app: App, services: Services): void {
  const stageList = (pipeline: Pipeline) => pipeline.stages.map((stage) => ({ ...stage }));
  const updateResponse = (pipeline: Pipeline) => ({
    id: pipeline.id,
    name: pipeline.name,
    description: pipeline.description,
    created_at: pipeline.createdAt,
    updated_at: pipeline.updatedAt,
    stages: stageList(pipeline),
    visual_layout: services.pipelines.layoutOf(pipeline),
  });

  app.post(
    '/v1/pipelines',
    {
      config: { access: access.scopes('agents:write') },
      schema: {
        operationId: 'createPipeline',
        tags: ['Pipelines'],
        summary: 'Create a pipeline',
        description:
          'Every stage is checked now, each failure a 400 naming the stage and the field: the agent exists and is usable, names are unique, input_mapping paths are `$.input…` or refer to an earlier stage, output_mapping paths are `$.output…`.',
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            description: Type.Optional(Type.String({ maxLength: 5000 })),
            stages: Type.Optional(Type.Array(StageInputSchema, { maxItems: 50 })),
            visual_layout: Type.Optional(VisualLayoutSchema),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({
            pipeline_id: Type.String({ description: 'pipe_…' }),
            id: Type.String(),
            ...PipelineFields,
            stages: Type.Array(StageSchema),
            visual_layout: VisualLayoutSchema,
          }),
        },
      },
    },
    async (request, reply) => {
      const pipeline = await services.pipelines.create(
        principalOf(request).accountId,
        request.body,
      );
      const { id, ...rest } = updateResponse(pipeline);
      return reply.code(201).send({ pipeline_id: id, id, ...rest });
    },
  );

  app.get(
    '/v1/pipelines',
    {
      config: { access: access.scopes('agents:read') },
      schema: {
        operationId: 'listPipelines',
        tags: ['Pipelines'],
        summary: 'List pipelines',
        querystring: PageQuerySchema,
        response: {
          200: Type.Object({
            pipelines: Type.Array(
              Type.Object({ id: Type.String(), ...PipelineFields, stage_count: Type.Integer() }),
            ),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const page = await services.pipelines.list(principalOf(request).accountId, { limit, offset });
      return {
        pipelines: page.pipelines.map((pipeline) => ({
          id: pipeline.id,
          name: pipeline.name,
          description: pipeline.description,
          created_at: pipeline.createdAt,
          updated_at: pipeline.updatedAt,
          stage_count: pipeline.stages.length,
        })),
        total: page.total,
        limit,
        offset,
      };
    },
  );

  app.get(
    '/v1/pipelines/:pipeline_id',
    {
      config: { access: access.scopes('agents:read') },
      schema: {
        operationId: 'getPipeline',
        tags: ['Pipelines'],
        summary: 'Get a pipeline',
        description: 'The stages are inside `configuration.stages`, as the spec has it.',
        params: PipelineIdParams,
        response: {
          200: Type.Object({
            pipeline: Type.Object({
              id: Type.String(),
              ...PipelineFields,
              configuration: Type.Object({ stages: Type.Array(StageSchema) }),
              visual_layout: VisualLayoutSchema,
            }),
          }),
        },
      },
    },
    async (request) => {
      const pipeline = await services.pipelines.get(
        principalOf(request).accountId,
        request.params.pipeline_id,
      );
      return {
        pipeline: {
          id: pipeline.id,
          name: pipeline.name,
          description: pipeline.description,
          created_at: pipeline.createdAt,
          updated_at: pipeline.updatedAt,
          configuration: { stages: stageList(pipeline) },
          visual_layout: services.pipelines.layoutOf(pipeline),
        },
      };
    },
  );

  const UpdateBody = Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      description: Type.Optional(Type.String({ maxLength: 5000 })),
      stages: Type.Optional(
        Type.Array(StageInputSchema, {
          maxItems: 50,
          description:
            'The new ordered list of stages (replaces the old one; checked like on create).',
        }),
      ),
      visual_layout: Type.Optional(VisualLayoutSchema),
    },
    { additionalProperties: false },
  );
  for (const method of ['patch', 'put'] as const) {
    app[method](
      '/v1/pipelines/:pipeline_id',
      {
        config: { access: access.scopes('agents:write') },
        schema: {
          operationId: method === 'patch' ? 'updatePipeline' : 'replacePipelineFields',
          tags: ['Pipelines'],
          summary:
            method === 'patch' ? 'Change a pipeline' : 'Change a pipeline (PUT, same as PATCH)',
          description:
            'Only the given fields change. New stages without a visual_layout drop a stored layout (a generated one follows the stages).',
          params: PipelineIdParams,
          body: UpdateBody,
          response: {
            200: Type.Object({
              id: Type.String(),
              ...PipelineFields,
              stages: Type.Array(StageSchema),
              visual_layout: VisualLayoutSchema,
            }),
          },
        },
      },
      async (request) =>
        updateResponse(
          await services.pipelines.update(
            principalOf(request).accountId,
            request.params.pipeline_id,
            request.body,
          ),
        ),
    );
  }

  app.delete(
    '/v1/pipelines/:pipeline_id',
    {
      config: { access: access.scopes('agents:write') },
      schema: {
        operationId: 'deletePipeline',
        tags: ['Pipelines'],
        summary: 'Delete a pipeline',
        description: 'Its execution records stay readable at GET /v1/executions/{execution_id}.',
        params: PipelineIdParams,
        response: {
          200: Type.Object({ success: Type.Boolean(), message: Type.String(), id: Type.String() }),
        },
      },
    },
    async (request) => {
      const id = request.params.pipeline_id;
      await services.pipelines.delete(principalOf(request).accountId, id);
      return { success: true, message: `Pipeline '${id}' deleted.`, id };
    },
  );

  const RunResponse = Type.Object({
    execution_id: Type.String(),
    status: Type.String({ description: 'completed, failed, or running (async).' }),
    pipeline_id: Type.String(),
    output: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description: "The last stage's output: its agent's result plus its mapped output names.",
    }),
    error: Type.Optional(Type.String()),
    metrics: Type.Object({
      execution_time_ms: Type.Integer(),
      stages_completed: Type.Integer(),
      tokens_used: Type.Integer(),
    }),
  });

  app.post(
    '/v1/pipelines/:pipeline_id/execute',
    {
      config: { access: access.scopes('agents:write') },
      schema: {
        operationId: 'executePipeline',
        tags: ['Pipelines'],
        summary: 'Execute a pipeline',
        description:
          'The body holds the run’s inputs (`$.input.<name>`), plus optional `conversation_id` and `async`. Synchronous runs answer 200 when done (`status` completed or failed, `error` naming the stage and cause). With `"async": true` the answer is 202 at once with status `running`; follow GET /v1/executions/{execution_id} or its `/events` stream.',
        params: PipelineIdParams,
        body: Type.Object(
          {
            async: Type.Optional(Type.Boolean({ default: false })),
            conversation_id: Type.Optional(Type.String({ maxLength: 100 })),
          },
          { additionalProperties: true },
        ),
        response: { 200: RunResponse, 202: RunResponse },
      },
    },
    async (request, reply) => {
      const {
        async: detach,
        conversation_id: conversationId,
        ...inputs
      } = request.body as Record<string, unknown> & {
        async?: boolean;
        conversation_id?: string;
      };
      const result = await services.pipelineRunner.start(
        principalOf(request).accountId,
        request.params.pipeline_id,
        inputs,
        {
          conversationId: conversationId ?? null,
          detach: detach === true,
          signal: clientGoneSignal(reply),
        },
      );
      const { execution } = result;
      return reply.code(detach === true ? 202 : 200).send({
        execution_id: execution.id,
        status: execution.status,
        pipeline_id: execution.pipelineId ?? '',
        output: execution.output,
        ...(execution.error === null ? {} : { error: execution.error.message }),
        metrics: {
          execution_time_ms: execution.executionTimeMs ?? 0,
          stages_completed: result.stagesCompleted,
          tokens_used: execution.tokensUsed,
        },
      });
    },
  );

  app.get(
    '/v1/pipelines/:pipeline_id/executions',
    {
      config: { access: access.scopes('agents:read') },
      schema: {
        operationId: 'listPipelineExecutions',
        tags: ['Pipelines'],
        summary: 'List executions of a pipeline',
        description: 'Newest first.',
        params: PipelineIdParams,
        querystring: PageQuerySchema,
        response: {
          200: Type.Object({
            executions: Type.Array(
              Type.Object({
                id: Type.String(),
                pipeline_id: Type.String(),
                status: Type.String(),
                created_at: Timestamp(),
                completed_at: NullableTimestamp(),
                execution_time_ms: Type.Union([Type.Integer(), Type.Null()]),
                tokens_used: Type.Integer(),
                error: Type.Optional(Type.String()),
              }),
            ),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const { limit, offset } = request.query;
      // The pipeline may have been deleted: its executions stay listable by id only if it exists.
      await services.pipelines.get(accountId, request.params.pipeline_id);
      const page = await services.pipelineRepository.listExecutions(
        accountId,
        request.params.pipeline_id,
        {
          limit,
          offset,
        },
      );
      return { executions: page.executions.map(executionEntry), total: page.total, limit, offset };
    },
  );

  app.get(
    '/v1/executions/:execution_id/events',
    {
      config: { access: access.scopes('agents:read') },
      schema: {
        operationId: 'followExecution',
        tags: ['Pipelines'],
        summary: 'Follow an execution (Server-Sent Events)',
        description:
          '`data:` lines with `{"type":"stage-start",…}`, `{"type":"stage-end",…}` (a skipped stage has only its end) and finally `{"type":"execution-end",status,output,error,metrics}`; then the stream closes. A finished execution is replayed at once.',
        params: Type.Object({ execution_id: Type.String({ maxLength: 100 }) }),
        response: {
          200: {
            description: 'The event stream.',
            content: { 'text/event-stream': { schema: Type.String() } },
          },
        },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const first = await services.agentExecutor.getExecution(
        accountId,
        request.params.execution_id,
      );
      const signal = clientGoneSignal(reply);
      return sendEventStream(
        reply,
        serverSentEvents(followExecution(services, accountId, first, signal)),
      );
    },
  );
}

/** Events from the recorded state: wakes on this instance's changes, and polls for other instances'. */
async function* followExecution(
  services: Services,
  accountId: string,
  first: Execution,
  signal: AbortSignal,
): AsyncGenerator<Record<string, unknown>> {
  const started = new Set<string>();
  const ended = new Set<string>();
  let execution = first;
  while (!signal.aborted) {
    const stages = await services.pipelineRepository.stagesOf(execution.id);
    for (const stage of stages) {
      if (stage.status !== 'pending' && stage.status !== 'skipped' && !started.has(stage.id)) {
        started.add(stage.id);
        yield {
          type: 'stage-start',
          execution_id: execution.id,
          stage: stage.name,
          stage_id: stage.stageId,
          position: stage.position,
          started_at: stage.startedAt,
        };
      }
      if (
        (stage.status === 'completed' || stage.status === 'failed' || stage.status === 'skipped') &&
        !ended.has(stage.id)
      ) {
        ended.add(stage.id);
        yield {
          type: 'stage-end',
          execution_id: execution.id,
          ...stageRecordToJson(stage),
          stage: stage.name,
        };
      }
    }
    if (execution.status !== 'running') {
      yield {
        type: 'execution-end',
        execution_id: execution.id,
        status: execution.status,
        output: execution.output,
        ...(execution.error === null ? {} : { error: execution.error.message }),
        metrics: {
          execution_time_ms: execution.executionTimeMs,
          stages_completed: stages.filter((stage) => stage.status === 'completed').length,
          tokens_used: execution.tokensUsed,
        },
      };
      return;
    }
    await new Promise<void>((resolve) => {
      const event = `changed:${execution.id}`;
      const wake = () => {
        clearTimeout(timer);
        services.pipelineRunner.changes.off(event, wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      const timer = setTimeout(wake, 500);
      services.pipelineRunner.changes.on(event, wake);
      signal.addEventListener('abort', wake, { once: true });
    });
    execution = await services.agentExecutor.getExecution(accountId, execution.id);
  }
}
