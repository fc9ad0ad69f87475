// Agent types, agents (create, list, read, change, delete) and their execution, as one Fastify
// plugin over the agent service, the type catalog and the executor.
import { access } from '../../auth/scopes.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import { PageQuerySchema, PageSchema } from '../../http/schemas/common.js';
import { clientGoneSignal } from '../../http/streaming.js';
import { principalOf, type App } from '../../http/types.js';
import type { Agent } from './agent.js';
import type { AgentCatalog } from './agent-catalog.js';
import type { AgentExecutionResponse, AgentExecutor } from './agent-executor.js';
import type { AgentService, AgentView } from './agent-service.js';
import {
  AgentExecutionResponseSchema,
  AgentIdParams,
  AgentListEntrySchema,
  AgentSchema,
  AgentTypesResponseSchema,
  commonOnAgents,
  CreateAgentBody,
  DeleteAgentQuery,
  DeletedAgentSchema,
  ExecuteAgentBody,
  UpdateAgentBody,
} from './agents.schemas.js';

export type AgentsPlugin = FeaturePlugin;

export interface AgentRoutesDependencies {
  readonly agents: AgentService;
  readonly catalog: AgentCatalog;
  readonly executor: AgentExecutor;
}

/** The routes of agent types and agents, registered by app.ts like any Fastify plugin. */
export function agentsPlugin(dependencies: AgentRoutesDependencies): AgentsPlugin {
  return featurePlugin('agents', (app) => {
    agentTypeRoutes(app, dependencies.catalog);
    agentCollectionRoutes(app, dependencies.agents);
    agentRoutes(app, dependencies.agents);
    executeRoute(app, dependencies.executor);
  });
}

function agentToJson(agent: Agent, owned: boolean) {
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description,
    agent_type: agent.agentType,
    model_id: agent.modelId,
    is_public: agent.isPublic,
    expose_as_tool: agent.exposeAsTool,
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

function executionResponse(response: AgentExecutionResponse) {
  return {
    success: response.success,
    status: response.status,
    execution_id: response.executionId,
    result: response.result,
    metrics: {
      execution_time_ms: response.executionTimeMs,
      tokens_used: response.tokensUsed,
    },
    ...(response.error === null ? {} : { error: response.error }),
  };
}

/** Each type's configuration schema as a named component of the OpenAPI document, and the list. */
function agentTypeRoutes(app: App, catalog: AgentCatalog): void {
  for (const type of catalog.list()) {
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
          'The agent types (the spec’s six, and ToolAgent) with their capabilities and the JSON Schemas of their `configuration` and of the per-run `parameters` (enough to build a form).',
        response: { 200: AgentTypesResponseSchema },
      },
    },
    () => ({
      agent_types: catalog.list().map((type) => ({
        id: type.id,
        name: type.name,
        description: type.description,
        capabilities: [...type.capabilities],
        configuration_schema: type.configurationSchema as unknown as Record<string, unknown>,
        parameters_schema: type.parametersSchema as unknown as Record<string, unknown>,
      })),
    }),
  );
}

function agentCollectionRoutes(app: App, agents: AgentService): void {
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
      const page = await agents.list(accountId, { limit, offset });
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
        body: CreateAgentBody,
        response: { 201: AgentSchema },
      },
    },
    async (request, reply) => {
      const { accountId } = principalOf(request);
      const body = request.body;
      const agent = await agents.create(accountId, {
        name: body.name,
        agentType: body.agent_type,
        configuration: body.configuration,
        description: body.description,
        modelId: body.model_id,
        isPublic: body.is_public,
        exposeAsTool: body.expose_as_tool,
      });
      return reply.code(201).send(agentDetail(agents.view(agent, accountId)));
    },
  );
}

/** One agent: read, change (PATCH and PUT alike), delete. */
function agentRoutes(app: App, agents: AgentService): void {
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
      const agent = await agents.get(accountId, request.params.agent_id);
      return agentDetail(agents.view(agent, accountId));
    },
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
          body: UpdateAgentBody,
          response: { 200: AgentSchema },
        },
      },
      async (request) => {
        const { accountId } = principalOf(request);
        const body = request.body;
        const agent = await agents.update(accountId, request.params.agent_id, {
          name: body.name,
          description: body.description,
          configuration: body.configuration,
          modelId: body.model_id,
          isPublic: body.is_public,
          exposeAsTool: body.expose_as_tool,
        });
        return agentDetail(agents.view(agent, accountId));
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
        querystring: DeleteAgentQuery,
        response: { 200: DeletedAgentSchema },
      },
    },
    async (request) => {
      const id = request.params.agent_id;
      await agents.delete(principalOf(request).accountId, id, {
        force: request.query.force,
      });
      return { success: true, message: `Agent '${id}' deleted.`, id };
    },
  );
}

function executeRoute(app: App, executor: AgentExecutor): void {
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
        body: ExecuteAgentBody,
        response: { 200: AgentExecutionResponseSchema },
      },
    },
    async (request, reply) =>
      executionResponse(
        await executor.execute(
          principalOf(request).accountId,
          request.params.agent_id,
          request.body,
          clientGoneSignal(reply),
          principalOf(request).keyId,
        ),
      ),
  );
}
