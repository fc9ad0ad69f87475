// The tools the platform's MCP server offers one account: each of its agents and pipelines marked
// `expose_as_tool`, and `knowledge_search` over its knowledge bases. Built afresh for every request
// from what is stored (the server keeps no session), in a stable order and named by the one rule
// (tool-names.ts), so a name listed by one request names the same agent or pipeline in the next. A
// call runs through the same code paths as the REST API and is recorded as an execution of the
// calling key.
import type { Logger } from 'pino';
import { missingScope, type Scope } from '../../auth/scopes.js';
import { AppError } from '../../errors/app-error.js';
import { RequestAbortedError } from '../../models/spec.js';
import { checkAgainstSchema } from '../../validation/schema-validator.js';
import type { FeatureName } from '../health/feature-catalog.js';
import type { SearchHit } from '../knowledge/hybrid-search.js';
import { ToolNames } from './tool-names.js';
import {
  agentDescription,
  pipelineAsTool,
  type AgentsAsTools,
  type KnowledgeTools,
  type OfferedAgent,
  type OfferedPipeline,
  type PipelinesAsTools,
} from './tool-parts.js';

/** Who calls: the key's account and scopes, and the request's end. */
export interface ToolCaller {
  readonly accountId: string;
  readonly keyId: string;
  readonly scopes: readonly Scope[];
  /** Aborted when the client goes away: a run in progress stops. */
  readonly signal: AbortSignal;
}

/** What a tool call answers, in MCP's shape (CallToolResult). */
export interface ToolAnswer {
  content: Array<{ type: 'text'; text: string }>;
  isError?: boolean;
  [key: string]: unknown;
}

/** One tool as listed, with what calling it needs and does. */
export interface OfferedTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  /** The scope of the REST route that does the same. */
  readonly scope: Scope;
  call(args: Record<string, unknown>, caller: ToolCaller): Promise<ToolAnswer>;
}

export interface OfferedToolsOptions {
  readonly knowledge: KnowledgeTools;
  /** The account's agents and pipelines: the parts their modules gave the registry. */
  agents(): AgentsAsTools;
  pipelines(): PipelinesAsTools;
  /** The feature switches: a switched-off feature's tools are not offered. */
  readonly features: Readonly<Record<FeatureName, boolean>>;
  readonly logger: Logger;
}

/** How many agents, and how many pipelines, one account offers at most (oldest first). */
export const toolLimits = {
  maxAgents: 200,
  maxPipelines: 200,
  /** Knowledge bases named in knowledge_search's description (and searched when none is named). */
  maxKnowledgeBases: 20,
  maxQueryLength: 2000,
  maxTopK: 50,
  defaultTopK: 5,
} as const;

export const knowledgeSearchName = 'knowledge_search';

/** The JSON text of a tool's answer (`isError` when the run failed). */
function answer(value: unknown, isError = false): ToolAnswer {
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    ...(isError ? { isError: true } : {}),
  };
}

/** A tool error in words (a refusal, bad arguments): what the model or the person reads. */
export function toolError(message: string): ToolAnswer {
  return { content: [{ type: 'text', text: message }], isError: true };
}

export class OfferedTools {
  constructor(private readonly options: OfferedToolsOptions) {}

  /** The account's tools, in a stable order: agents, then pipelines (oldest first), then search. */
  async list(accountId: string): Promise<OfferedTool[]> {
    const { features } = this.options;
    const names = new ToolNames([knowledgeSearchName]);
    const tools: OfferedTool[] = [];
    if (features.agent_orchestration) {
      const [agents, pipelines] = await Promise.all([
        this.options.agents().exposed(accountId, toolLimits.maxAgents),
        this.options.pipelines().exposed(accountId, toolLimits.maxPipelines),
      ]);
      for (const agent of agents)
        tools.push(this.agentTool(agent, names.take(agent.name, agent.id)));
      for (const pipeline of pipelines) {
        tools.push(this.pipelineTool(pipeline, names.take(pipeline.name, pipeline.id)));
      }
    }
    if (features.semantic_search) {
      const search = await this.knowledgeSearchTool(accountId);
      if (search !== null) tools.push(search);
    }
    return tools;
  }

  /**
   * Calls a listed tool: the key's scope for it is checked, then its arguments against its input
   * schema; either failing, or the run failing, answers a tool error (`isError`). A refusal of the
   * service (an AppError: a missing model, a deleted agent) is told; anything else is logged and
   * told only as an internal error.
   */
  async call(tool: OfferedTool, args: unknown, caller: ToolCaller): Promise<ToolAnswer> {
    const missing = missingScope(caller.scopes, [tool.scope]);
    if (missing !== null) {
      return toolError(
        `This API key lacks the '${missing}' scope, which calling '${tool.name}' needs.`,
      );
    }
    const checked = checkAgainstSchema<Record<string, unknown>>(
      tool.inputSchema,
      args ?? {},
      `arguments of tool '${tool.name}'`,
      '',
    );
    if (!checked.ok) return toolError(`Invalid arguments: ${checked.error.message}`);
    try {
      return await tool.call(checked.value, caller);
    } catch (error) {
      if (error instanceof RequestAbortedError) throw error;
      if (error instanceof AppError) {
        return toolError(
          error.param === null ? error.message : `${error.message} (argument '${error.param}')`,
        );
      }
      this.options.logger.error({ err: error, tool: tool.name }, 'MCP tool call failed');
      return toolError(`'${tool.name}' failed unexpectedly; the failure was logged.`);
    }
  }

  private agentTool(agent: OfferedAgent, name: string): OfferedTool {
    const agents = this.options.agents();
    return {
      name,
      description: agentDescription(agent),
      inputSchema: agent.inputSchema,
      scope: 'agents:write',
      async call(args, caller) {
        const run = await agents.execute(caller.accountId, agent.id, args, {
          signal: caller.signal,
          apiKeyId: caller.keyId,
        });
        return answer(
          {
            execution_id: run.executionId,
            success: run.success,
            result: run.result,
            ...(run.error === null ? {} : { error: run.error }),
            metrics: { execution_time_ms: run.executionTimeMs, tokens_used: run.tokensUsed },
          },
          !run.success,
        );
      },
    };
  }

  private pipelineTool(pipeline: OfferedPipeline, name: string): OfferedTool {
    const pipelines = this.options.pipelines();
    const { description, parameters } = pipelineAsTool(pipeline);
    return {
      name,
      description,
      inputSchema: parameters,
      scope: 'agents:write',
      async call(args, caller) {
        const run = await pipelines.run(caller.accountId, pipeline.id, args, {
          signal: caller.signal,
          apiKeyId: caller.keyId,
        });
        return answer(
          {
            execution_id: run.executionId,
            status: run.status,
            pipeline_id: pipeline.id,
            output: run.output,
            ...(run.error === null ? {} : { error: run.error.message }),
            metrics: {
              execution_time_ms: run.executionTimeMs ?? 0,
              stages_completed: run.stagesCompleted,
              tokens_used: run.tokensUsed,
            },
          },
          run.status === 'failed',
        );
      },
    };
  }

  /** Offered when the account has a knowledge base; its description names the newest ones. */
  private async knowledgeSearchTool(accountId: string): Promise<OfferedTool | null> {
    const { knowledge } = this.options;
    const { knowledgeBases, total } = await knowledge.listKnowledgeBases(accountId, {
      limit: toolLimits.maxKnowledgeBases,
      offset: 0,
    });
    if (knowledgeBases.length === 0) return null;
    const named = knowledgeBases
      .map((kb) => `${kb.id} (${kb.name.slice(0, 100)})`)
      .join(', ')
      .slice(0, 4000);
    const newest = knowledgeBases.map((kb) => kb.id);
    return {
      name: knowledgeSearchName,
      description:
        `Searches the account's knowledge bases (keywords and meaning) and answers the best passages. Knowledge bases: ${named}` +
        (total > knowledgeBases.length
          ? `, and ${total - knowledgeBases.length} more (name them in knowledge_base_ids; without it the ${knowledgeBases.length} newest are searched).`
          : '.'),
      inputSchema: knowledgeSearchSchema,
      scope: 'agents:read',
      async call(args, caller) {
        const query = args.query as string;
        const ids = (args.knowledge_base_ids as string[] | undefined) ?? newest;
        const topK = (args.top_k as number | undefined) ?? toolLimits.defaultTopK;
        const found = await knowledge.search(caller.accountId, ids, query, {
          topK,
          signal: caller.signal,
        });
        return answer({
          results: found.results.map(hitJson),
          mode: found.mode,
          notice: found.notice,
          query,
          top_k: topK,
        });
      },
    };
  }
}

/** knowledge_search's arguments (one object, so its validator is compiled once). */
const knowledgeSearchSchema: Record<string, unknown> = {
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1, maxLength: toolLimits.maxQueryLength },
    knowledge_base_ids: {
      type: 'array',
      description: 'The knowledge bases to search; default: all (the newest 20).',
      minItems: 1,
      maxItems: toolLimits.maxKnowledgeBases,
      items: { type: 'string', minLength: 1, maxLength: 100 },
    },
    top_k: {
      type: 'integer',
      minimum: 1,
      maximum: toolLimits.maxTopK,
      default: toolLimits.defaultTopK,
    },
  },
  required: ['query'],
  additionalProperties: false,
};

function hitJson(hit: SearchHit) {
  return {
    knowledge_base_id: hit.knowledgeBaseId,
    document_id: hit.documentId,
    title: hit.title,
    heading: hit.heading,
    text: hit.text,
    score: hit.score,
    source: hit.source,
    metadata: hit.metadata,
  };
}
