// What an agent type is: its catalog entry, the JSON Schemas of its configuration and per-run
// parameters (published in the type listing and the OpenAPI document), and how it runs.
import { parseReasoningText, type ReasoningAnswer } from '../../text/reasoning-text.js';
import { summarize, type ExtractiveSummary, type SummarizeOptions } from '../../text/textrank.js';
import type { TObject } from 'typebox';
import type { Agent } from './agent.js';
import type { InputRule } from './agent-input.js';
import type { AgentModels } from '../../models/agent-models.js';
import type { NewStep, StepRecord, StepUpdate } from '../executions/execution.js';

export const agentTypeIds = [
  'RetrievalAgent',
  'SummarizationAgent',
  'ReasoningAgent',
  'GenerationAgent',
  'WebAgent',
  'StructureAgent',
  'ToolAgent',
] as const;

export type AgentTypeId = (typeof agentTypeIds)[number];

/** A passage found in a knowledge base. */
export interface FoundPassage {
  document_id: string;
  title: string;
  text: string;
  score: number;
  source: string | null;
}

/** The knowledge-base search RetrievalAgent needs (the knowledge service provides it). */
export interface KnowledgeSearcher {
  search(
    accountId: string,
    knowledgeBaseIds: readonly string[],
    query: string,
    /** `signal`: the run's, so that a stopped run stops embedding its query. */
    options: { topK: number; minScore: number; signal: AbortSignal },
  ): Promise<{ results: FoundPassage[]; mode: string; notice: string | null }>;
}

/** What one execution asks of an agent (`query`, `parameters`, and per type `data` or `urls`). */
export interface AgentInput {
  query?: string | undefined;
  parameters?: Record<string, unknown> | undefined;
  data?: unknown;
  urls?: string[] | undefined;
}

/**
 * Text work whose time grows with the shape of its input (Markdown lexing, TextRank): run in the
 * text worker threads by the service, so that no client text, nor model output a client shaped,
 * holds the event loop.
 */
export interface TextWork {
  reasoningText(text: string): Promise<ReasoningAnswer>;
  summarize(text: string, options: SummarizeOptions): Promise<ExtractiveSummary>;
}

/** The same work on the calling thread (tests, tools without threads). */
export const inlineTextWork: TextWork = {
  reasoningText: (text) => Promise.resolve(parseReasoningText(text)),
  summarize: (text, options) => Promise.resolve().then(() => summarize(text, options)),
};

/**
 * Where a tool-calling agent records its steps: the execution's records (so that a paused run is
 * continued from them, anywhere), or memory for a nested run, which cannot pause.
 */
export interface StepLog {
  /** The steps this agent took before (a continued run), in order. */
  readonly previous: readonly StepRecord[];
  /** Whether a call may wait for a person's approval (false: such calls are refused). */
  readonly canPause: boolean;
  /** How long a call waits for approval before the run fails. */
  readonly approvalTimeoutMs: number;
  add(step: Omit<NewStep, 'stageRecordId'>): Promise<StepRecord>;
  update(
    step: StepRecord,
    update: StepUpdate,
    from?: readonly StepRecord['status'][],
  ): Promise<boolean>;
}

/** The run stops here until a person decides on the calls waiting (they are recorded). */
export class AwaitingApproval extends Error {
  constructor(
    readonly waiting: readonly StepRecord[],
    readonly tokensUsed: number,
  ) {
    super('a tool call waits for approval');
    this.name = 'AwaitingApproval';
  }
}

export interface AgentRunContext {
  /** The agent being run; its knowledge bases are searched in its owner's account. */
  agent: Agent;
  /** The account that asked for the run (for public agents, not the owner). */
  callerAccountId: string;
  models: AgentModels;
  signal: AbortSignal;
  text: TextWork;
  /** Where tool-calling agents record their steps: the execution's, or memory for a nested run. */
  steps: StepLog;
  /** How deep in agents calling agents as tools this run is (0: called by a client). */
  depth?: number | undefined;
}

export interface AgentType<Configuration = Record<string, unknown>> {
  id: AgentTypeId;
  name: string;
  description: string;
  capabilities: readonly string[];
  /** The `configuration` of agents of this type; unknown keys are refused. */
  configurationSchema: TObject;
  /** The `parameters` a run may pass (per-run overrides); unknown keys are refused. */
  parametersSchema: TObject;
  /**
   * What the type reads from `data`, checked before `validateInput` like the common fields
   * (agent-input.ts); left out by the types that do not read `data`.
   */
  dataInput?: InputRule;
  /**
   * Checks the input before the run is recorded (a 400 for bad input): which of `query`, `data`,
   * `urls` it needs, and anything that can be checked without running.
   */
  validateInput(
    input: AgentInput,
    configuration: Configuration,
    parameters: Record<string, unknown>,
  ): void | Promise<void>;
  /**
   * Save-time checks that need the service (the objects a configuration names, addresses it
   * connects to) and what is stored in place of secrets; the configuration to store.
   */
  prepareConfiguration?(
    accountId: string,
    configuration: Configuration,
    previous: Configuration | null,
    options: { isPublic: boolean },
  ): Promise<Configuration>;
  /** The stored configuration as its owner sees it (no secret shown back). */
  showConfiguration?(configuration: Configuration): Record<string, unknown>;
  run(
    context: AgentRunContext,
    configuration: Configuration,
    input: AgentInput,
    parameters: Record<string, unknown>,
  ): Promise<Record<string, unknown>>;
}
