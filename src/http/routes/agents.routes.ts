// Agent types, agents (create, list, read, change, delete) and their execution.
import Type from 'typebox';
import { reservedKeysNote } from '../../validation/safe-keys.js';
import type { Agent } from '../../agents/agent.js';
import type { AgentExecutionResponse } from '../../agents/agent-executor.js';
import type { AgentView } from '../../agents/agent-service.js';
import { access } from '../../auth/scopes.js';
import type { Services } from '../../services.js';
import {
  commonParameters,
  ModelNameSchema,
  ObjectIdSchema,
  PageQuerySchema,
  PageSchema,
  Timestamp,
  UserIdSchema,
} from '../schemas/common.js';
import { clientGoneSignal } from '../streaming.js';
import { ExecutionErrorSchema } from '../../modules/pipelines/executions/executions.schemas.js';
import { principalOf, type App } from '../types.js';

const AgentIdParams = Type.Object({ agent_id: Type.String({ maxLength: 100 }) });

/** What `model_id` means, on the agent and in the bodies that set it. */
const modelIdNote =
  "The chat model it runs on; null (or left out): the catalog's default model at the time of each run (`default_model`), so a changed default applies from the next run.";

const AgentFields = {
  id: Type.String({ description: 'agent_…' }),
  name: Type.String(),
  description: Type.String(),
  agent_type: Type.String({ description: 'An agent type id, e.g. RetrievalAgent.' }),
  model_id: Type.Union([Type.String(), Type.Null()], {
    description: modelIdNote,
  }),
  is_public: Type.Boolean({ description: 'Other accounts may read and execute it.' }),
  owned: Type.Boolean({ description: "Whether it belongs to the caller's account." }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
};

const AgentSchema = Type.Object({
  ...AgentFields,
  configuration: Type.Record(Type.String(), Type.Unknown(), {
    description:
      "Keys depend on the type: see GET /v1/agent-types (configuration_schema). Another account's public agent is shown without its owner's private keys (see hidden_configuration_keys).",
  }),
  hidden_configuration_keys: Type.Optional(
    Type.Array(Type.String(), {
      description:
        "On another account's public agent: the configuration keys left out as the owner's private business — RetrievalAgent's knowledge_base_ids, every type's instructions, and any key naming a secret (token, password, api_key, …).",
    }),
  ),
});

const AgentListEntrySchema = Type.Object(AgentFields);

function agentToJson(agent: Agent, owned: boolean) {
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description,
    agent_type: agent.agentType,
    model_id: agent.modelId,
    is_public: agent.isPublic,
    owned,
    created_at: agent.createdAt,
    updated_at: agent.updatedAt,
  };
}

/** An agent with the configuration its caller may see. */
function agentDetail(view: AgentView) {
  return {
    ...agentToJson(view.agent, view.owned),
    configuration: view.configuration,
    ...(view.hiddenKeys.length === 0 ? {} : { hidden_configuration_keys: view.hiddenKeys }),
  };
}

const commonOnAgents =
  'The spec’s common parameters `user_id`, `conversation_id` and `model` are accepted and not used here (`model_id` is the agent’s model; `model` on execute replaces it for one run).';

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
      config: { access: access.scopes('agents:read'), feature: 'agent_orchestration' },
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
      config: { access: access.scopes('agents:read'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'listAgents',
        tags: ['Agents'],
        summary: 'List agents',
        description:
          "The account's agents and every public agent, newest first, without their configuration.",
        querystring: PageQuerySchema,
        response: {
          200: PageSchema('agents', AgentListEntrySchema),
        },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const { limit, offset } = request.query;
      const page = await services.agents.list(accountId, { limit, offset });
      return {
        agents: page.agents.map((agent) => agentToJson(agent, agent.accountId === accountId)),
        total: page.total,
        limit,
        offset,
      };
    },
  );

  app.post(
    '/v1/agents',
    {
      config: { access: access.scopes('agents:write'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'createAgent',
        tags: ['Agents'],
        summary: 'Create an agent',
        description:
          "`configuration` is validated against the type's schema (components `<Type>Configuration`): an unknown key or a wrong type is a 400 naming `configuration.<key>`; defaults are filled in. `model_id` must name a chat model of the catalog; without it (or null) the agent runs on the catalog's default model at the time of each run. RetrievalAgent's `knowledge_base_ids` must be knowledge bases of the account: another account's (or an unknown one) is a 404 naming `configuration.knowledge_base_ids[i]`. " +
          commonOnAgents,
        body: Type.Object(
          {
            ...commonParameters(),
            name: Type.String({ minLength: 1, maxLength: 200 }),
            agent_type: Type.String({ maxLength: 64 }),
            configuration: Type.Record(Type.String(), Type.Unknown(), {
              description: `Keys of the type's configuration_schema. At any depth, ${reservedKeysNote}`,
            }),
            description: Type.Optional(Type.String({ maxLength: 5000 })),
            model_id: Type.Optional(
              Type.Union([Type.String({ maxLength: 256 }), Type.Null()], {
                description: modelIdNote,
              }),
            ),
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
      return reply.code(201).send(agentDetail(services.agents.view(agent, accountId)));
    },
  );

  app.get(
    '/v1/agents/:agent_id',
    {
      config: { access: access.scopes('agents:read'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'getAgent',
        tags: ['Agents'],
        summary: 'Get an agent',
        description:
          "The account's own agent with its whole configuration; another account's public agent without its owner's private configuration keys (`hidden_configuration_keys` lists them).",
        params: AgentIdParams,
        response: { 200: AgentSchema },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const agent = await services.agents.get(accountId, request.params.agent_id);
      return agentDetail(services.agents.view(agent, accountId));
    },
  );

  const UpdateBody = Type.Object(
    {
      ...commonParameters(),
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      description: Type.Optional(Type.String({ maxLength: 5000 })),
      configuration: Type.Optional(
        Type.Record(Type.String(), Type.Unknown(), {
          description: `Replaces the configuration whole (validated; defaults filled in). At any depth, ${reservedKeysNote}`,
        }),
      ),
      model_id: Type.Optional(
        Type.Union([Type.String({ maxLength: 256 }), Type.Null()], { description: modelIdNote }),
      ),
      is_public: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  );
  for (const method of ['patch', 'put'] as const) {
    app[method](
      '/v1/agents/:agent_id',
      {
        config: { access: access.scopes('agents:write'), feature: 'agent_orchestration' },
        schema: {
          operationId: method === 'patch' ? 'updateAgent' : 'replaceAgentFields',
          tags: ['Agents'],
          summary: method === 'patch' ? 'Change an agent' : 'Change an agent (PUT, same as PATCH)',
          description:
            "Only the given fields change. Another account's public agent answers 403: it can be read and executed, not changed. A `configuration` naming another account's knowledge base answers 404. " +
            commonOnAgents,
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
        return agentDetail(services.agents.view(agent, accountId));
      },
    );
  }

  app.delete(
    '/v1/agents/:agent_id',
    {
      config: { access: access.scopes('agents:write'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'deleteAgent',
        tags: ['Agents'],
        summary: 'Delete an agent',
        description:
          'Its execution records stay readable. While pipelines have a stage running it, the answer is 409 `conflict` naming them (`pipelines`: the account’s own, by id and name; `other_accounts_pipelines`: how many of other accounts use it, when it is public) and nothing is deleted. With `?force=true` it is deleted anyway: those pipelines are kept unchanged, and their runs fail at that stage with `not_found` ("agent … no longer exists") until the stage is changed.',
        params: AgentIdParams,
        querystring: Type.Object({
          force: Type.Boolean({
            default: false,
            description:
              'Delete even while pipelines use the agent (their runs then fail at its stage).',
          }),
        }),
        response: {
          200: Type.Object({ success: Type.Boolean(), message: Type.String(), id: Type.String() }),
        },
      },
    },
    async (request) => {
      const id = request.params.agent_id;
      await services.agents.delete(principalOf(request).accountId, id, {
        force: request.query.force,
      });
      return { success: true, message: `Agent '${id}' deleted.`, id };
    },
  );

  app.post(
    '/v1/agents/:agent_id/execute',
    {
      config: { access: access.scopes('agents:write'), feature: 'agent_orchestration' },
      schema: {
        operationId: 'executeAgent',
        tags: ['Agents'],
        summary: 'Execute an agent',
        description:
          "The body is free-form, as the spec has it. `query` is the main input; `parameters` are per-run options (validated against the type's parameters_schema: an unknown parameter is a 400); StructureAgent also takes `data` (an array of objects or a CSV string) and WebAgent `urls`. `model` replaces the agent's model for this run (a chat model of the catalog, else 400 `unknown_model`); `user_id` and `conversation_id` (a conversation of the account — and of that user, when given — else 404) are recorded on the execution. Any other key is kept in the execution's recorded `input`. A key of the body, or of `parameters` at any depth, named `__proto__`, `constructor` or `prototype` is a 400 `invalid_parameter` naming it. Bad input is a 400 and nothing is recorded; every run is recorded (GET /v1/executions/{execution_id}); a run that fails answers 200 with `success: false` and the error.",
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
            conversation_id: Type.Optional(
              ObjectIdSchema('A conversation of the account the run belongs to; recorded.'),
            ),
            user_id: Type.Optional(UserIdSchema('The user the run is for; recorded.')),
            model: Type.Optional(ModelNameSchema("Replaces the agent's model for this run.")),
          },
          {
            additionalProperties: true,
            maxProperties: 100,
            description: 'Keys besides these are kept in the recorded input.',
          },
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
          principalOf(request).keyId,
        ),
      ),
  );
}
