// The agents module's part of the tool registry: the account's agents run as tools — asked inside a
// ToolAgent's run (one level deeper, its steps the asking run's), or executed for a client of /mcp
// (a recorded execution of the calling key) — and the WebAgent's search and page reading, which
// `web_search` and `read_page` are.
import { AppError, NotFoundError } from '../../errors/app-error.js';
import { requireSchema } from '../../validation/schema-validator.js';
import type { AgentsAsTools, OfferedAgent, WebTools } from '../tools/tool-parts.js';
import type { AgentCatalog } from './agent-catalog.js';
import { AgentRunError, type AgentExecutor } from './agent-executor.js';
import type { AgentService } from './agent-service.js';
import type { AgentRunContext, AgentType } from './agent-type.js';
import type { Agent } from './agent.js';
import type { WebConfiguration } from './types/web-agent.js';

/** Agent inputs besides `query` and `parameters`, for the types that read them. */
const extraAgentInputs: Readonly<Record<string, Record<string, Record<string, unknown>>>> = {
  StructureAgent: {
    data: {
      description: 'The data to process: an array of objects, or CSV text.',
      anyOf: [
        { type: 'string', maxLength: 10_000_000 },
        { type: 'array', maxItems: 100_000, items: { type: 'object' } },
      ],
    },
  },
  WebAgent: {
    urls: {
      description: 'Pages to read (http or https), instead of searching.',
      type: 'array',
      maxItems: 20,
      items: { type: 'string', minLength: 1, maxLength: 2048 },
    },
  },
};

/** The types whose `query` may be left out (another input stands for it). */
const queryOptional = new Set(Object.keys(extraAgentInputs));

/** `query`, the type's `parameters`, and `data` or `urls` where the type reads them. */
function inputSchemaOf(type: AgentType): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      query: {
        type: 'string',
        maxLength: 1_000_000,
        description: 'The main input of the run (what to do, look for, or work on).',
      },
      parameters: {
        ...type.parametersSchema,
        description: `Per-run options of ${type.id}.`,
      },
      ...extraAgentInputs[type.id],
    },
    required: queryOptional.has(type.id) ? [] : ['query'],
    additionalProperties: false,
  };
}

export interface AgentToolsDependencies {
  readonly service: AgentService;
  readonly executor: AgentExecutor;
  readonly catalog: AgentCatalog;
}

export function agentsAsTools({
  service,
  executor,
  catalog,
}: AgentToolsDependencies): AgentsAsTools {
  // Each agent type's input schema, built once (the validator finds it again by identity).
  const inputSchemas = new Map<string, Record<string, unknown>>();
  const inputSchema = (agentType: string): Record<string, unknown> | null => {
    let schema = inputSchemas.get(agentType);
    if (schema === undefined) {
      const type = catalog.list().find((candidate) => candidate.id === agentType);
      if (type === undefined) return null;
      schema = inputSchemaOf(type);
      inputSchemas.set(agentType, schema);
    }
    return schema;
  };
  return {
    owns: async (accountId, agentId) =>
      (await service.get(accountId, agentId).catch(() => null))?.accountId === accountId,
    async ask(accountId, agentId, query, options) {
      let agent: Agent;
      try {
        agent = await service.get(accountId, agentId);
      } catch (error) {
        if (error instanceof NotFoundError) {
          throw new AppError('not_found', `The agent '${agentId}' no longer exists.`);
        }
        throw error;
      }
      const { parameters } = await executor.prepare(agent, { query });
      try {
        const run = await executor.run(agent, { query }, parameters, options);
        return run.result;
      } catch (error) {
        if (error instanceof AgentRunError) {
          if (error.aborted) throw error;
          throw new AppError(error.error.code, error.error.message);
        }
        throw error;
      }
    },
    async exposed(accountId, limit) {
      const agents = await service.exposedAsTools(accountId, limit);
      return agents.flatMap((agent): OfferedAgent[] => {
        const schema = inputSchema(agent.agentType);
        if (schema === null) return [];
        const { id, name, description, agentType } = agent;
        return [{ id, name, description, agentType, inputSchema: schema }];
      });
    },
    async execute(accountId, agentId, input, { signal, apiKeyId }) {
      const response = await executor.execute(accountId, agentId, input, signal, apiKeyId);
      return {
        executionId: response.executionId,
        success: response.success,
        result: response.result,
        error: response.error,
        executionTimeMs: response.executionTimeMs,
        tokensUsed: response.tokensUsed,
      };
    },
  };
}

/** The WebAgent's search and page reading, configured per call (as its configuration is). */
export function webTools(webAgent: AgentType<WebConfiguration>): WebTools {
  return {
    run(configuration, input, signal) {
      const settings = requireSchema<WebConfiguration>(
        webAgent.configurationSchema,
        configuration,
        'web tool configuration',
        'configuration',
      );
      const context = { signal } as AgentRunContext;
      return webAgent.run(context, settings, input, {});
    },
  };
}
