// Agent types, agents (create, list, read, change, delete), their execution, and execution records.
import Type from 'typebox';
import type { AgentExecutionResponse } from '../../agents/agent-executor.js';
import { access } from '../../auth/scopes.js';
import type { Services } from '../../services.js';
import type { Agent } from '../../storage/repositories/agents.repository.js';
import { NullableTimestamp, PageQuerySchema, Timestamp } from '../schemas/common.js';
import { clientGoneSignal } from '../streaming.js';
import { StageRecordSchema, executionToJson } from './execution-json.js';
import { principalOf, type App } from '../types.js';

const AgentIdParams = Type.Object({ agent_id: Type.String({ maxLength: 100 }) });

const AgentFields = {
  id: Type.String({ description: 'agent_…' }),
  name: Type.String(),
  description: Type.String(),
  agent_type: Type.String({ description: 'An agent type id, e.g. RetrievalAgent.' }),
  model_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The chat model it uses; null: the default model.',
  }),
  is_public: Type.Boolean({ description: 'Other accounts may read and execute it.' }),
  owned: Type.Boolean({ description: "Whether it belongs to the caller's account." }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
};

const AgentSchema = Type.Object({
  ...AgentFields,
  configuration: Type.Record(Type.String(), Type.Unknown(), {
    description: 'Keys depend on the type: see GET /v1/agent-types (configuration_schema).',
  }),
});

const AgentListEntrySchema = Type.Object(AgentFields);

const ExecutionErrorSchema = Type.Object(
  { message: Type.String(), type: Type.String(), code: Type.String() },
  { additionalProperties: true },
);

const ExecutionSchema = Type.Object({
  id: Type.String({ description: 'exec_…' }),
  kind: Type.Union([Type.Literal('agent'), Type.Literal('pipeline')]),
  agent_id: Type.Union([Type.String(), Type.Null()]),
  pipeline_id: Type.Union([Type.String(), Type.Null()]),
  conversation_id: Type.Union([Type.String(), Type.Null()]),
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

export function agentToJson(agent: Agent, callerAccountId: string) {
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description,
    agent_type: agent.agentType,
    model_id: agent.modelId,
    is_public: agent.isPublic,
    owned: agent.accountId === callerAccountId,
    created_at: agent.createdAt,
    updated_at: agent.updatedAt,
  };
}

function executionResponse(response: AgentExecutionResponse) {
  return {
    success: response.success,
    execution_id: response.executionId,
    result: response.result,
    metrics: {
      execution_time_ms: response.executionTimeMs,
      tokens_used: response.tokensUsed,
    },
    ...(response.error === null ? {} : { error: response.error }),
  };
}

export function agentRoutes(app: App, services: Services): void {
  // Each type's configuration schema as a named component of the OpenAPI document.
  for (const type of services.agentCatalog.list()) {
    app.addSchema({
      ...type.configurationSchema,
      $id: `${type.id}Configuration`,
      title: `${type.id}Configuration`,
    });
  }

  app.get(
    '/v1/agent-types',
    {
      config: { access: access.scopes('agents:read') },
      schema: {
        operationId: 'listAgentTypes',
        tags: ['Agents'],
        summary: 'List agent types',
        description:
          'The six agent types with their capabilities and the JSON Schemas of their `configuration` and of the per-run `parameters` (enough to build a form).',
        response: {
          200: Type.Object({
            agent_types: Type.Array(
              Type.Object({
                id: Type.String(),
                name: Type.String(),
                description: Type.String(),
                capabilities: Type.Array(Type.String()),
                configuration_schema: Type.Record(Type.String(), Type.Unknown()),
                parameters_schema: Type.Record(Type.String(), Type.Unknown()),
              }),
            ),
          }),
        },
      },
    },
    () => ({
      agent_types: services.agentCatalog.list().map((type) => ({
        id: type.id,
        name: type.name,
        description: type.description,
        capabilities: [...type.capabilities],
        configuration_schema: type.configurationSchema as unknown as Record<string, unknown>,
        parameters_schema: type.parametersSchema as unknown as Record<string, unknown>,
      })),
    }),
  );

  app.get(
    '/v1/agents',
    {
      config: { access: access.scopes('agents:read') },
      schema: {
        operationId: 'listAgents',
        tags: ['Agents'],
        summary: 'List agents',
        description:
          "The account's agents and every public agent, newest first, without their configuration.",
        querystring: PageQuerySchema,
        response: {
          200: Type.Object({
            agents: Type.Array(AgentListEntrySchema),
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
      const page = await services.agents.list(accountId, { limit, offset });
      return {
        agents: page.agents.map((agent) => agentToJson(agent, accountId)),
        total: page.total,
        limit,
        offset,
      };
    },
  );

  app.post(
    '/v1/agents',
    {
      config: { access: access.scopes('agents:write') },
      schema: {
        operationId: 'createAgent',
        tags: ['Agents'],
        summary: 'Create an agent',
        description:
          "`configuration` is validated against the type's schema (components `<Type>Configuration`): an unknown key or a wrong type is a 400 naming `configuration.<key>`; defaults are filled in. `model_id` must name a chat model of the catalog.",
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            agent_type: Type.String({ maxLength: 64 }),
            configuration: Type.Record(Type.String(), Type.Unknown()),
            description: Type.Optional(Type.String({ maxLength: 5000 })),
            model_id: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
            is_public: Type.Optional(Type.Boolean({ default: false })),
          },
          { additionalProperties: false },
        ),
        response: { 201: AgentSchema },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const body = request.body;
      const agent = await services.agents.create(accountId, {
        name: body.name,
        agentType: body.agent_type,
        configuration: body.configuration,
        description: body.description,
        modelId: body.model_id,
        isPublic: body.is_public,
      });
      return reply
        .code(201)
        .send({ ...agentToJson(agent, accountId), configuration: agent.configuration });
    },
  );

  app.get(
    '/v1/agents/:agent_id',
    {
      config: { access: access.scopes('agents:read') },
      schema: {
        operationId: 'getAgent',
        tags: ['Agents'],
        summary: 'Get an agent',
        params: AgentIdParams,
        response: { 200: AgentSchema },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const agent = await services.agents.get(accountId, request.params.agent_id);
      return { ...agentToJson(agent, accountId), configuration: agent.configuration };
    },
  );

  const UpdateBody = Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      description: Type.Optional(Type.String({ maxLength: 5000 })),
      configuration: Type.Optional(
        Type.Record(Type.String(), Type.Unknown(), {
          description: 'Replaces the configuration whole (validated; defaults filled in).',
        }),
      ),
      model_id: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
      is_public: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  );
  for (const method of ['patch', 'put'] as const) {
    app[method](
      '/v1/agents/:agent_id',
      {
        config: { access: access.scopes('agents:write') },
        schema: {
          operationId: method === 'patch' ? 'updateAgent' : 'replaceAgentFields',
          tags: ['Agents'],
          summary: method === 'patch' ? 'Change an agent' : 'Change an agent (PUT, same as PATCH)',
          description:
            "Only the given fields change. Another account's public agent answers 403: it can be read and executed, not changed.",
          params: AgentIdParams,
          body: UpdateBody,
          response: { 200: AgentSchema },
        },
      },
      async (request) => {
        const { accountId } = principalOf(request);
        const body = request.body;
        const agent = await services.agents.update(accountId, request.params.agent_id, {
          name: body.name,
          description: body.description,
          configuration: body.configuration,
          modelId: body.model_id,
          isPublic: body.is_public,
        });
        return { ...agentToJson(agent, accountId), configuration: agent.configuration };
      },
    );
  }

  app.delete(
    '/v1/agents/:agent_id',
    {
      config: { access: access.scopes('agents:write') },
      schema: {
        operationId: 'deleteAgent',
        tags: ['Agents'],
        summary: 'Delete an agent',
        description: 'Its execution records stay readable.',
        params: AgentIdParams,
        response: {
          200: Type.Object({ success: Type.Boolean(), message: Type.String(), id: Type.String() }),
        },
      },
    },
    async (request) => {
      const id = request.params.agent_id;
      await services.agents.delete(principalOf(request).accountId, id);
      return { success: true, message: `Agent '${id}' deleted.`, id };
    },
  );

  app.post(
    '/v1/agents/:agent_id/execute',
    {
      config: { access: access.scopes('agents:write') },
      schema: {
        operationId: 'executeAgent',
        tags: ['Agents'],
        summary: 'Execute an agent',
        description:
          "`query` is the main input; `parameters` are per-run options (validated against the type's parameters_schema); StructureAgent also takes `data` (an array of objects or a CSV string) and WebAgent `urls`. Bad input is a 400 and nothing is recorded. Every run is recorded (GET /v1/executions/{execution_id}); a run that fails answers 200 with `success: false` and the error.",
        params: AgentIdParams,
        body: Type.Object(
          {
            query: Type.Optional(Type.String({ maxLength: 1_000_000 })),
            parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
            data: Type.Optional(
              Type.Union([
                Type.String({ maxLength: 10_000_000 }),
                Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 100_000 }),
              ]),
            ),
            urls: Type.Optional(
              Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 20 }),
            ),
            conversation_id: Type.Optional(Type.String({ maxLength: 100 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            success: Type.Boolean(),
            execution_id: Type.String(),
            result: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
            metrics: Type.Object({
              execution_time_ms: Type.Integer(),
              tokens_used: Type.Integer(),
            }),
            error: Type.Optional(ExecutionErrorSchema),
          }),
        },
      },
    },
    async (request, reply) =>
      executionResponse(
        await services.agentExecutor.execute(
          principalOf(request).accountId,
          request.params.agent_id,
          request.body,
          clientGoneSignal(reply),
        ),
      ),
  );

  app.get(
    '/v1/executions/:execution_id',
    {
      config: { access: access.scopes('agents:read') },
      schema: {
        operationId: 'getExecution',
        tags: ['Agents', 'Pipelines'],
        summary: 'Get an execution',
        description: 'An agent or pipeline execution with its input, output, error and stages.',
        params: Type.Object({ execution_id: Type.String({ maxLength: 100 }) }),
        response: { 200: Type.Object({ execution: ExecutionSchema }) },
      },
    },
    async (request) => {
      const execution = await services.agentExecutor.getExecution(
        principalOf(request).accountId,
        request.params.execution_id,
      );
      const stages =
        execution.kind === 'pipeline'
          ? await services.pipelineRepository.stagesOf(execution.id)
          : [];
      return { execution: executionToJson(execution, stages) };
    },
  );
}
