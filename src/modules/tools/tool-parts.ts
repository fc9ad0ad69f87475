// What the tool registry offers that other modules own, in the registry's own terms: the account's
// agents and pipelines run as tools, the WebAgent's search and page reading, the knowledge bases'
// search. The agents and pipelines modules, built above this one, give their parts to the registry
// once they exist (ToolRegistry.provide); the knowledge service, built below it, is given when the
// registry is made. Here too: how an agent or a pipeline is shown as a tool, the same to a
// ToolAgent's model and to a client of /mcp.
import type { ExecutionError } from '../../errors/execution-error.js';
import type { KnowledgeService } from '../knowledge/knowledge-service.js';

/** The knowledge bases' search, and which of them an account has. */
export type KnowledgeTools = Pick<
  KnowledgeService,
  'search' | 'missingKnowledgeBases' | 'listKnowledgeBases'
>;

/** The WebAgent's search and page reading (`web_search`, `read_page`), from the agents module. */
export interface WebTools {
  /** Runs the WebAgent's search and page reading with this configuration and input. */
  run(
    configuration: Record<string, unknown>,
    input: { query?: string; urls?: string[] },
    signal: AbortSignal,
  ): Promise<Record<string, unknown>>;
}

/** An agent as a client of /mcp sees it. */
export interface OfferedAgent {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly agentType: string;
  /** `query`, the type's `parameters`, and what else the type reads (`data`, `urls`). */
  readonly inputSchema: Record<string, unknown>;
}

/** One recorded run of an agent (as POST /v1/agents/{id}/execute answers it). */
export interface AgentToolRun {
  readonly executionId: string;
  readonly success: boolean;
  readonly result: Record<string, unknown> | null;
  readonly error: ExecutionError | null;
  readonly executionTimeMs: number;
  readonly tokensUsed: number;
}

/** The account's agents as tools, from the agents module. */
export interface AgentsAsTools {
  /** Whether `agentId` names an agent `accountId` owns (what an `agent` entry may name). */
  owns(accountId: string, agentId: string): Promise<boolean>;
  /**
   * Asks the agent inside a ToolAgent's run, one level deeper: its result, or an AppError worded
   * for the model. Not recorded on its own (its steps are the asking run's).
   */
  ask(
    accountId: string,
    agentId: string,
    query: string,
    options: { signal: AbortSignal; depth: number; callerAccountId: string },
  ): Promise<Record<string, unknown>>;
  /** The account's agents marked `expose_as_tool`, oldest first, at most `limit`. */
  exposed(accountId: string, limit: number): Promise<OfferedAgent[]>;
  /** Runs the agent as a recorded execution of the calling key. */
  execute(
    accountId: string,
    agentId: string,
    input: Record<string, unknown>,
    options: { signal: AbortSignal; apiKeyId: string | null },
  ): Promise<AgentToolRun>;
}

/** A pipeline as a tool shows it. */
export interface OfferedPipeline {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  /** Its `input_schema`: the JSON Schema of its inputs, or null for any object. */
  readonly inputSchema: Record<string, unknown> | null;
  readonly stageCount: number;
}

/** One run of a pipeline to its end (or its pause), as POST /v1/pipelines/{id}/execute has it. */
export interface PipelineToolRun {
  readonly executionId: string;
  readonly status: 'running' | 'waiting_for_approval' | 'completed' | 'failed';
  readonly output: Record<string, unknown> | null;
  readonly error: ExecutionError | null;
  readonly executionTimeMs: number | null;
  readonly tokensUsed: number;
  readonly stagesCompleted: number;
}

/** The account's pipelines as tools, from the pipelines module. */
export interface PipelinesAsTools {
  /** The account's pipeline `pipelineId`, or null when it has none of that id. */
  find(accountId: string, pipelineId: string): Promise<OfferedPipeline | null>;
  /** The account's pipelines marked `expose_as_tool`, oldest first, at most `limit`. */
  exposed(accountId: string, limit: number): Promise<OfferedPipeline[]>;
  /**
   * Runs the pipeline with `inputs` to its end, recorded as its own execution (of the calling
   * key, when there is one); a refusal before it starts is an AppError.
   */
  run(
    accountId: string,
    pipelineId: string,
    inputs: Record<string, unknown>,
    options: { signal: AbortSignal; apiKeyId: string | null },
  ): Promise<PipelineToolRun>;
}

/** What other modules give the registry, once each. */
export interface ToolParts {
  readonly agents: AgentsAsTools;
  readonly web: WebTools;
  readonly pipelines: PipelinesAsTools;
}

/** A pipeline's arguments without an input_schema: any object (one object, found again). */
export const anyObjectSchema: Record<string, unknown> = {
  type: 'object',
  additionalProperties: true,
};

/**
 * A pipeline as a tool, wherever it is offered: its description (its own, or what it does), and
 * its arguments, which are the run's inputs (`$.input.<name>`) as its `input_schema` describes them.
 */
export function pipelineAsTool(pipeline: OfferedPipeline): {
  description: string;
  parameters: Record<string, unknown>;
} {
  return {
    description:
      pipeline.description.trim() === ''
        ? `Runs the pipeline '${pipeline.name}' (${pipeline.stageCount} stages).`
        : pipeline.description,
    parameters: pipeline.inputSchema ?? anyObjectSchema,
  };
}

/** An agent's description as a client of /mcp reads it: its own, or what it is. */
export function agentDescription(agent: OfferedAgent): string {
  return agent.description.trim() === ''
    ? `Runs the ${agent.agentType} '${agent.name}'.`
    : agent.description;
}
