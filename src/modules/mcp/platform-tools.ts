// The tools the platform's MCP server offers one account: each of its agents and pipelines marked
// `expose_as_tool`, and `knowledge_search` over its knowledge bases. Built afresh for every request
// from what is stored (the server keeps no session), in a stable order, so a name listed by one
// request names the same agent or pipeline in the next. A call runs through the same code paths as
// the REST API and is recorded as an execution of the calling key.
import type { Logger } from 'pino';
import { missingScope, type Scope } from '../../auth/scopes.js';
import { AppError } from '../../errors/app-error.js';
import { RequestAbortedError } from '../../models/spec.js';
import { checkAgainstSchema } from '../../validation/schema-validator.js';
import type { AgentExecutor } from '../agents/agent-executor.js';
import type { AgentCatalog } from '../agents/agent-catalog.js';
import type { AgentService } from '../agents/agent-service.js';
import type { Agent } from '../agents/agent.js';
import type { FeatureName } from '../health/feature-catalog.js';
import type { SearchHit } from '../knowledge/hybrid-search.js';
import type { KnowledgeService } from '../knowledge/knowledge-service.js';
import type { Pipeline } from '../pipelines/pipeline.js';
import type { PipelineRunner } from '../pipelines/pipeline-runner.js';
import type { PipelineService } from '../pipelines/pipeline-service.js';

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
export interface PlatformTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  /** The scope of the REST route that does the same. */
  readonly scope: Scope;
  call(args: Record<string, unknown>, caller: ToolCaller): Promise<ToolAnswer>;
}

export interface PlatformToolsOptions {
  readonly agents: Pick<AgentService, 'exposedAsTools'>;
  readonly catalog: Pick<AgentCatalog, 'list'>;
  readonly executor: Pick<AgentExecutor, 'execute'>;
  readonly pipelines: Pick<PipelineService, 'exposedAsTools'>;
  readonly runner: Pick<PipelineRunner, 'start'>;
  readonly knowledge: Pick<KnowledgeService, 'listKnowledgeBases' | 'search'>;
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
const maxNameLength = 64;

/** `name` as an MCP tool name: `[a-zA-Z0-9_-]`, at most 64 characters; '' when nothing is left. */
export function sanitiseToolName(name: string): string {
  return name
    .replace(/[^a-zA-Z0-9_-]+/g, '_')
    .replace(/_{2,}/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, maxNameLength);
}

/**
 * A name not yet `taken`: the sanitised name, or (empty, or already taken) the name with the end of
 * the object's id after it, or the whole id, which is unique.
 */
function uniqueName(name: string, id: string, taken: Set<string>): string {
  const base = sanitiseToolName(name);
  const suffix = `_${id.slice(-8)}`;
  const candidates = [
    base,
    base === '' ? '' : `${base.slice(0, maxNameLength - suffix.length)}${suffix}`,
    sanitiseToolName(id),
  ];
  const chosen = candidates.find((candidate) => candidate !== '' && !taken.has(candidate)) ?? id;
  taken.add(chosen);
  return chosen;
}

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

/** A pipeline tool's arguments without an input_schema: any object (one object, found again). */
const anyObject: Record<string, unknown> = { type: 'object', additionalProperties: true };

/** The types whose `query` may be left out (another input stands for it). */
const queryOptional = new Set(Object.keys(extraAgentInputs));

export class PlatformTools {
  /** Each agent type's input schema, built once (the validator finds it again by identity). */
  private readonly agentSchemas = new Map<string, Record<string, unknown>>();

  constructor(private readonly options: PlatformToolsOptions) {}

  /** The account's tools, in a stable order: agents, then pipelines (oldest first), then search. */
  async list(accountId: string): Promise<PlatformTool[]> {
    const { features } = this.options;
    const taken = new Set<string>([knowledgeSearchName]);
    const tools: PlatformTool[] = [];
    if (features.agent_orchestration) {
      const [agents, pipelines] = await Promise.all([
        this.options.agents.exposedAsTools(accountId, toolLimits.maxAgents),
        this.options.pipelines.exposedAsTools(accountId, toolLimits.maxPipelines),
      ]);
      for (const agent of agents) {
        const tool = this.agentTool(agent, uniqueName(agent.name, agent.id, taken));
        if (tool !== null) tools.push(tool);
      }
      for (const pipeline of pipelines) {
        tools.push(this.pipelineTool(pipeline, uniqueName(pipeline.name, pipeline.id, taken)));
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
  async call(tool: PlatformTool, args: unknown, caller: ToolCaller): Promise<ToolAnswer> {
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

  private agentTool(agent: Agent, name: string): PlatformTool | null {
    const inputSchema = this.agentInputSchema(agent.agentType);
    if (inputSchema === null) return null;
    const { executor } = this.options;
    return {
      name,
      description:
        agent.description.trim() === ''
          ? `Runs the ${agent.agentType} '${agent.name}'.`
          : agent.description,
      inputSchema,
      scope: 'agents:write',
      async call(args, caller) {
        const response = await executor.execute(
          caller.accountId,
          agent.id,
          args,
          caller.signal,
          caller.keyId,
        );
        return answer(
          {
            execution_id: response.executionId,
            success: response.success,
            result: response.result,
            ...(response.error === null ? {} : { error: response.error }),
            metrics: {
              execution_time_ms: response.executionTimeMs,
              tokens_used: response.tokensUsed,
            },
          },
          !response.success,
        );
      },
    };
  }

  /** `query`, the type's `parameters`, and `data` or `urls` where the type reads them. */
  private agentInputSchema(agentType: string): Record<string, unknown> | null {
    const known = this.agentSchemas.get(agentType);
    if (known !== undefined) return known;
    const type = this.options.catalog.list().find((candidate) => candidate.id === agentType);
    if (type === undefined) return null;
    const schema = {
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
    this.agentSchemas.set(agentType, schema);
    return schema;
  }

  private pipelineTool(pipeline: Pipeline, name: string): PlatformTool {
    const { runner } = this.options;
    return {
      name,
      description:
        pipeline.description.trim() === ''
          ? `Runs the pipeline '${pipeline.name}' (${pipeline.stages.length} stages).`
          : pipeline.description,
      inputSchema: pipeline.inputSchema ?? anyObject,
      scope: 'agents:write',
      async call(args, caller) {
        const { execution, stagesCompleted } = await runner.start(
          caller.accountId,
          pipeline.id,
          args,
          {
            conversationId: null,
            userId: null,
            apiKeyId: caller.keyId,
            detach: false,
            signal: caller.signal,
          },
        );
        return answer(
          {
            execution_id: execution.id,
            status: execution.status,
            pipeline_id: pipeline.id,
            output: execution.output,
            ...(execution.error === null ? {} : { error: execution.error.message }),
            metrics: {
              execution_time_ms: execution.executionTimeMs ?? 0,
              stages_completed: stagesCompleted,
              tokens_used: execution.tokensUsed,
            },
          },
          execution.status === 'failed',
        );
      },
    };
  }

  /** Offered when the account has a knowledge base; its description names the newest ones. */
  private async knowledgeSearchTool(accountId: string): Promise<PlatformTool | null> {
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
      inputSchema: {
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
      },
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
