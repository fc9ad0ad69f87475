// Pipelines: create, list, read, change, delete; execute (synchronously or in the background);
// list their executions (each one is read and followed at /v1/executions/{id}), as a Fastify
// plugin over the pipeline service, the runner and the execution records.
import { access } from '../../auth/scopes.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import { PageQuerySchema, PageSchema } from '../../http/schemas/common.js';
import { clientGoneSignal } from '../../http/streaming.js';
import { principalOf, type App } from '../../http/types.js';
import type { ExecutionService } from '../executions/execution-service.js';
import type { Pipeline } from './pipeline.js';
import type { PipelineRunner } from './pipeline-runner.js';
import type { PipelineService } from './pipeline-service.js';
import {
  commonOnPipelines,
  CreatedPipelineSchema,
  CreatePipelineBody,
  DeletedPipelineSchema,
  ExecutionListEntrySchema,
  executionListEntry,
  ExecutePipelineBody,
  PipelineDetailSchema,
  PipelineEntrySchema,
  PipelineIdParams,
  RunResponseSchema,
  UpdatedPipelineSchema,
  UpdatePipelineBody,
} from './pipelines.schemas.js';

export interface PipelineRoutesDependencies {
  readonly pipelines: PipelineService;
  readonly runner: PipelineRunner;
  /** A pipeline's runs, newest first. */
  readonly executions: Pick<ExecutionService, 'listForPipeline'>;
}

/** The routes of pipelines, registered by app.ts like any Fastify plugin. */
export function pipelinesPlugin(dependencies: PipelineRoutesDependencies): FeaturePlugin {
  const { pipelines } = dependencies;
  return featurePlugin('pipelines', (app) => {
    createRoute(app, pipelines);
    listRoute(app, pipelines);
    readRoute(app, pipelines);
    updateRoutes(app, pipelines);
    deleteRoute(app, pipelines);
    executeRoute(app, dependencies.runner);
    executionListRoute(app, dependencies);
  });
}

const stageList = (pipeline: Pipeline) => pipeline.stages.map((stage) => ({ ...stage }));

/** A pipeline as create and change answer it: its stages at the top, and its layout. */
function pipelineJson(pipeline: Pipeline, pipelines: PipelineService) {
  return {
    id: pipeline.id,
    name: pipeline.name,
    description: pipeline.description,
    created_at: pipeline.createdAt,
    updated_at: pipeline.updatedAt,
    expose_as_tool: pipeline.exposeAsTool,
    input_schema: pipeline.inputSchema,
    stages: stageList(pipeline),
    visual_layout: pipelines.layoutOf(pipeline),
  };
}

function createRoute(app: App, pipelines: PipelineService): void {
  app.post(
    '/v1/pipelines',
    {
      config: { access: access.scopes('agents:write'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'createPipeline',
        tags: ['Pipelines'],
        summary: 'Create a pipeline',
        description:
          'Every stage is checked now, each failure a 400 naming the stage and the field: the agent exists and is usable, names are unique, input_mapping paths are `$.input…` or refer to an earlier stage, output_mapping paths are `$.output…`. `visual_layout` nodes take `{id, position: {x, y}}` or `{id, x, y}`; every edge’s `source` and `target` must be node ids. ' +
          commonOnPipelines,
        body: CreatePipelineBody,
        response: { 201: CreatedPipelineSchema },
      },
    },
    async (request, reply) => {
      const pipeline = await pipelines.create(principalOf(request).accountId, request.body);
      const { id, ...rest } = pipelineJson(pipeline, pipelines);
      return reply.code(201).send({ pipeline_id: id, id, ...rest });
    },
  );
}

function listRoute(app: App, pipelines: PipelineService): void {
  app.get(
    '/v1/pipelines',
    {
      config: { access: access.scopes('agents:read'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'listPipelines',
        tags: ['Pipelines'],
        summary: 'List pipelines',
        querystring: PageQuerySchema,
        response: { 200: PageSchema('pipelines', PipelineEntrySchema) },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const page = await pipelines.list(principalOf(request).accountId, { limit, offset });
      return {
        pipelines: page.pipelines.map((pipeline) => ({
          id: pipeline.id,
          name: pipeline.name,
          description: pipeline.description,
          created_at: pipeline.createdAt,
          updated_at: pipeline.updatedAt,
          expose_as_tool: pipeline.exposeAsTool,
          stage_count: pipeline.stages.length,
        })),
        total: page.total,
        limit,
        offset,
      };
    },
  );
}

function readRoute(app: App, pipelines: PipelineService): void {
  app.get(
    '/v1/pipelines/:pipeline_id',
    {
      config: { access: access.scopes('agents:read'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'getPipeline',
        tags: ['Pipelines'],
        summary: 'Get a pipeline',
        description: 'The stages are inside `configuration.stages`, as the spec has it.',
        params: PipelineIdParams,
        response: { 200: PipelineDetailSchema },
      },
    },
    async (request) => {
      const pipeline = await pipelines.get(
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
          expose_as_tool: pipeline.exposeAsTool,
          input_schema: pipeline.inputSchema,
          configuration: { stages: stageList(pipeline) },
          visual_layout: pipelines.layoutOf(pipeline),
        },
      };
    },
  );
}

/** PATCH and PUT, the same change under two methods. */
function updateRoutes(app: App, pipelines: PipelineService): void {
  for (const method of ['patch', 'put'] as const) {
    app[method](
      '/v1/pipelines/:pipeline_id',
      {
        config: { access: access.scopes('agents:write'), feature: 'agent_orchestration' },
        schema: {
          operationId: method === 'patch' ? 'updatePipeline' : 'replacePipelineFields',
          tags: ['Pipelines'],
          summary:
            method === 'patch' ? 'Change a pipeline' : 'Change a pipeline (PUT, same as PATCH)',
          description:
            'Only the given fields change. New stages without a visual_layout drop a stored layout (a generated one follows the stages). ' +
            commonOnPipelines,
          params: PipelineIdParams,
          body: UpdatePipelineBody,
          response: { 200: UpdatedPipelineSchema },
        },
      },
      async (request) =>
        pipelineJson(
          await pipelines.update(
            principalOf(request).accountId,
            request.params.pipeline_id,
            request.body,
          ),
          pipelines,
        ),
    );
  }
}

function deleteRoute(app: App, pipelines: PipelineService): void {
  app.delete(
    '/v1/pipelines/:pipeline_id',
    {
      config: { access: access.scopes('agents:write'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'deletePipeline',
        tags: ['Pipelines'],
        summary: 'Delete a pipeline',
        description: 'Its execution records stay readable at GET /v1/executions/{execution_id}.',
        params: PipelineIdParams,
        response: { 200: DeletedPipelineSchema },
      },
    },
    async (request) => {
      const id = request.params.pipeline_id;
      await pipelines.delete(principalOf(request).accountId, id);
      return { success: true, message: `Pipeline '${id}' deleted.`, id };
    },
  );
}

function executeRoute(app: App, runner: PipelineRunner): void {
  app.post(
    '/v1/pipelines/:pipeline_id/execute',
    {
      config: { access: access.scopes('agents:write'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'executePipeline',
        tags: ['Pipelines'],
        summary: 'Execute a pipeline',
        description:
          'The body holds the run’s inputs (`$.input.<name>`), plus optional `async`, `conversation_id` and `user_id` (both recorded on the execution, not inputs; the conversation must be the account’s — and that user’s, when given — else 404). `model` is an ordinary input: a stage whose input_mapping maps `model` from `$.input.model` runs its agent with that model. Synchronous runs answer 200 when done (`status` completed or failed, `error` naming the stage and cause). With `"async": true` the answer is 202 at once with status `running`; follow GET /v1/executions/{execution_id} or its `/events` stream. An input a stage maps straight into its agent’s `query`, `urls`, `parameters` or `data` must be of the kind the agent takes there (text, a list of texts, an object, the type’s data): otherwise a 400 `invalid_parameter` naming the input and the mapping, nothing recorded (such a value from an earlier stage’s output fails that stage the same way). An input named `__proto__`, `constructor` or `prototype` is a 400 `invalid_parameter`; a stored stage with such a name (saved before the rule) fails the run before any stage runs.',
        params: PipelineIdParams,
        body: ExecutePipelineBody,
        response: { 200: RunResponseSchema, 202: RunResponseSchema },
      },
    },
    async (request, reply) => {
      const {
        async: detach,
        conversation_id: conversationId,
        user_id: userId,
        ...inputs
      } = request.body as Record<string, unknown> & {
        async?: boolean;
        conversation_id?: string;
        user_id?: string;
      };
      const result = await runner.start(
        principalOf(request).accountId,
        request.params.pipeline_id,
        inputs,
        {
          conversationId: conversationId ?? null,
          userId: userId ?? null,
          detach: detach === true,
          signal: clientGoneSignal(reply),
          apiKeyId: principalOf(request).keyId,
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
}

function executionListRoute(app: App, { pipelines, executions }: PipelineRoutesDependencies): void {
  app.get(
    '/v1/pipelines/:pipeline_id/executions',
    {
      config: { access: access.scopes('agents:read'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'listPipelineExecutions',
        tags: ['Pipelines'],
        summary: 'List executions of a pipeline',
        description: 'Newest first.',
        params: PipelineIdParams,
        querystring: PageQuerySchema,
        response: {
          200: PageSchema('executions', ExecutionListEntrySchema),
        },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const { limit, offset } = request.query;
      // The pipeline may have been deleted: its executions stay listable by id only if it exists.
      await pipelines.get(accountId, request.params.pipeline_id);
      const page = await executions.listForPipeline(accountId, request.params.pipeline_id, {
        limit,
        offset,
      });
      return {
        executions: page.executions.map(executionListEntry),
        total: page.total,
        limit,
        offset,
      };
    },
  );
}
