// Pipelines: create, list, read, change, delete; execute (synchronously or in the background);
// list their executions (each one is read and followed at /v1/executions/{id}).
import Type from 'typebox';
import { reservedKeysNote } from '../../validation/safe-keys.js';
import { access } from '../../auth/scopes.js';
import type { Pipeline } from './pipeline.js';
import type { Services } from '../../services.js';
import {
  commonParameters,
  ModelNameSchema,
  ObjectIdSchema,
  PageQuerySchema,
  PageSchema,
  Timestamp,
  UserIdSchema,
} from '../../http/schemas/common.js';
import { clientGoneSignal } from '../../http/streaming.js';
import { principalOf, type App } from '../../http/types.js';
import { ExecutionListEntrySchema, executionListEntry } from './executions/executions.schemas.js';

const PipelineIdParams = Type.Object({ pipeline_id: Type.String({ maxLength: 100 }) });

const pathDescription =
  'A path expression: `$.input.<name>` (an input of the run), `$.stages.<earlier stage>.<key>` (an earlier stage’s output) or, in output_mapping, `$.output.<key>` (the stage agent’s result). Keys may go deeper (`.a.b`, `[0]`); a stage name that is not a plain key is written `$.stages["my stage"].key`. No key or stage name of a path may be `__proto__`, `constructor` or `prototype` (400 `invalid_parameter`).';

const StageInputSchema = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: `Unique within the pipeline. ${reservedKeysNote}`,
    }),
    agent_id: Type.String({
      maxLength: 100,
      description: 'An agent of the account, or a public one.',
    }),
    input_mapping: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
        description: `Agent input → ${pathDescription} Input names: query, data, urls, conversation_id, model (replaces the stage agent’s model), or parameters.<name> (e.g. "parameters.result_count"). No name, nor any dotted part of one, may be \`__proto__\`, \`constructor\` or \`prototype\` (400 \`invalid_parameter\` naming it).`,
      }),
    ),
    output_mapping: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
        description: `Output name → \`$.output.<key>\`: names later stages (and the pipeline output) can use besides the result’s own keys. ${reservedKeysNote}`,
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

const coordinate = (description: string) =>
  Type.Number({ minimum: -1e9, maximum: 1e9, description });

const layoutNodeDescription =
  'A node of the editor’s canvas (React Flow’s shape). `id` is free (a generated layout uses the stage ids), `position` is its top-left corner in canvas pixels, `type` and `data` (e.g. `{label}`) are the editor’s own; other fields are kept as given.';

/** What a client may send: `{id, position: {x, y}}` or the short `{id, x, y}`. */
const LayoutNodeInputSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 100, description: 'Unique within the layout.' }),
    position: Type.Optional(
      Type.Object(
        { x: coordinate('Canvas x.'), y: coordinate('Canvas y.') },
        { additionalProperties: false },
      ),
    ),
    x: Type.Optional(coordinate('Short form of position.x (used when `position` is absent).')),
    y: Type.Optional(coordinate('Short form of position.y (used when `position` is absent).')),
    type: Type.Optional(Type.String({ maxLength: 100 })),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 50 })),
  },
  {
    additionalProperties: true,
    maxProperties: 50,
    description: `${layoutNodeDescription} Either \`position\` or both \`x\` and \`y\` are required; \`{id, x, y}\` is stored as \`{id, position: {x, y}}\`.`,
  },
);

const LayoutNodeSchema = Type.Object(
  {
    id: Type.String(),
    position: Type.Object({ x: Type.Number(), y: Type.Number() }),
    type: Type.Optional(Type.String()),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: true, description: layoutNodeDescription },
);

const LayoutEdgeInputSchema = Type.Object(
  {
    id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Default: `edge_<source>_<target>`.',
      }),
    ),
    source: Type.String({ maxLength: 100, description: 'The id of a node of the layout.' }),
    target: Type.String({ maxLength: 100, description: 'The id of a node of the layout.' }),
  },
  { additionalProperties: true, maxProperties: 50 },
);

const LayoutEdgeSchema = Type.Object(
  { id: Type.String(), source: Type.String(), target: Type.String() },
  { additionalProperties: true },
);

const layoutDescription = `The editor’s drawing of the pipeline: \`nodes\` and \`edges\` in React Flow’s shape; other fields (e.g. \`viewport\`) are kept. It does not change what runs (the stages do). Without one, a left-to-right layout of the stages is generated. At any depth, ${reservedKeysNote}`;

const VisualLayoutInputSchema = Type.Object(
  {
    nodes: Type.Array(LayoutNodeInputSchema, { maxItems: 1000 }),
    edges: Type.Optional(Type.Array(LayoutEdgeInputSchema, { maxItems: 5000 })),
  },
  { additionalProperties: true, maxProperties: 20, description: layoutDescription },
);

const VisualLayoutSchema = Type.Object(
  { nodes: Type.Array(LayoutNodeSchema), edges: Type.Array(LayoutEdgeSchema) },
  { additionalProperties: true, description: layoutDescription },
);

const PipelineFields = {
  name: Type.String(),
  description: Type.String(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
};

const commonOnPipelines =
  'The spec’s common parameters `user_id`, `conversation_id` and `model` are accepted and not used here.';

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
      config: { access: access.scopes('agents:write'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'createPipeline',
        tags: ['Pipelines'],
        summary: 'Create a pipeline',
        description:
          'Every stage is checked now, each failure a 400 naming the stage and the field: the agent exists and is usable, names are unique, input_mapping paths are `$.input…` or refer to an earlier stage, output_mapping paths are `$.output…`. `visual_layout` nodes take `{id, position: {x, y}}` or `{id, x, y}`; every edge’s `source` and `target` must be node ids. ' +
          commonOnPipelines,
        body: Type.Object(
          {
            ...commonParameters(),
            name: Type.String({ minLength: 1, maxLength: 200 }),
            description: Type.Optional(Type.String({ maxLength: 5000 })),
            stages: Type.Optional(Type.Array(StageInputSchema, { maxItems: 50 })),
            visual_layout: Type.Optional(VisualLayoutInputSchema),
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
      config: { access: access.scopes('agents:read'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'listPipelines',
        tags: ['Pipelines'],
        summary: 'List pipelines',
        querystring: PageQuerySchema,
        response: {
          200: PageSchema(
            'pipelines',
            Type.Object({ id: Type.String(), ...PipelineFields, stage_count: Type.Integer() }),
          ),
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
      config: { access: access.scopes('agents:read'), feature: 'agent_orchestration' },
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
      ...commonParameters(),
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      description: Type.Optional(Type.String({ maxLength: 5000 })),
      stages: Type.Optional(
        Type.Array(StageInputSchema, {
          maxItems: 50,
          description:
            'The new ordered list of stages (replaces the old one; checked like on create).',
        }),
      ),
      visual_layout: Type.Optional(VisualLayoutInputSchema),
    },
    { additionalProperties: false },
  );
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
      config: { access: access.scopes('agents:write'), feature: 'agent_orchestration' },
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
      config: { access: access.scopes('agents:write'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'executePipeline',
        tags: ['Pipelines'],
        summary: 'Execute a pipeline',
        description:
          'The body holds the run’s inputs (`$.input.<name>`), plus optional `async`, `conversation_id` and `user_id` (both recorded on the execution, not inputs; the conversation must be the account’s — and that user’s, when given — else 404). `model` is an ordinary input: a stage whose input_mapping maps `model` from `$.input.model` runs its agent with that model. Synchronous runs answer 200 when done (`status` completed or failed, `error` naming the stage and cause). With `"async": true` the answer is 202 at once with status `running`; follow GET /v1/executions/{execution_id} or its `/events` stream. An input named `__proto__`, `constructor` or `prototype` is a 400 `invalid_parameter`; a stored stage with such a name (saved before the rule) fails the run before any stage runs.',
        params: PipelineIdParams,
        body: Type.Object(
          {
            async: Type.Optional(Type.Boolean({ default: false })),
            conversation_id: Type.Optional(
              ObjectIdSchema('A conversation of the account the run belongs to; recorded.'),
            ),
            user_id: Type.Optional(UserIdSchema('The user the run is for; recorded.')),
            model: Type.Optional(
              ModelNameSchema('An input like any other (`$.input.model`); see the description.'),
            ),
          },
          { additionalProperties: true, maxProperties: 200 },
        ),
        response: { 200: RunResponse, 202: RunResponse },
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
      const result = await services.pipelineRunner.start(
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
      await services.pipelines.get(accountId, request.params.pipeline_id);
      const page = await services.executions.listForPipeline(
        accountId,
        request.params.pipeline_id,
        { limit, offset },
      );
      return {
        executions: page.executions.map(executionListEntry),
        total: page.total,
        limit,
        offset,
      };
    },
  );
}
