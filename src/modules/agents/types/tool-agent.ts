// ToolAgent: a model that decides which tools to call — an MCP server's, an OpenAPI-described HTTP
// API's, the platform's own (knowledge search, web search and page reading, other agents and
// pipelines) — runs them (in parallel when the model asks for several), feeds the results back and
// answers. The loop stops on an answer, a step limit, a time budget or a token budget. Every model
// turn and tool call is a step of the execution; a call marked `requires_approval` pauses the run
// until a person approves (with the arguments as proposed, or edited) or rejects it.
import Type from 'typebox';
import {
  AppError,
  InvalidParameterError,
  MissingParameterError,
} from '../../../errors/app-error.js';
import type { StepRecord } from '../../pipelines/executions/execution.js';
import { executionError } from '../../../errors/execution-error.js';
import type { ChatTurn, FunctionTool, GenerationResult, ToolCall } from '../../../models/spec.js';
import type { ToolBox, ToolSpec } from '../../tools/tool.js';
import {
  AwaitingApproval,
  type AgentRunContext,
  type AgentType,
  type StepLog,
  type ToolOpener,
} from '../agent-type.js';
import type { TSchema } from 'typebox';

export interface ToolConfiguration {
  instructions?: string;
  tools: Array<Record<string, unknown>>;
  max_steps: number;
  time_budget_ms: number;
  token_budget: number;
  max_result_chars: number;
}

const limits = {
  max_steps: Type.Integer({
    minimum: 1,
    maximum: 50,
    description: 'Model turns at most; a run that has not answered by then fails (limit_reached).',
  }),
  time_budget_ms: Type.Integer({
    minimum: 1000,
    maximum: 3_600_000,
    description:
      'Working time at most (model turns and tool calls; time waiting for approval not counted).',
  }),
  token_budget: Type.Integer({
    minimum: 100,
    maximum: 10_000_000,
    description: 'Prompt and completion tokens at most, over every model turn.',
  }),
};

/** The configuration's schema, with the schema of one `tools` entry (composed by the wiring). */
const configurationSchemaOf = (toolEntrySchema: TSchema) =>
  Type.Object(
    {
      instructions: Type.Optional(
        Type.String({ maxLength: 8000, description: 'The system prompt: what the agent is for.' }),
      ),
      tools: Type.Array(toolEntrySchema, {
        minItems: 1,
        maxItems: 20,
        description:
          'Where its tools come from: MCP servers, OpenAPI documents, and the built-ins (knowledge_search, web_search, read_page, agent, pipeline). See docs/tools.md.',
      }),
      max_steps: { ...limits.max_steps, default: 10 },
      time_budget_ms: { ...limits.time_budget_ms, default: 120_000 },
      token_budget: { ...limits.token_budget, default: 50_000 },
      max_result_chars: Type.Integer({
        minimum: 200,
        maximum: 100_000,
        default: 8000,
        description: 'A tool result is cut to this many characters before the model sees it.',
      }),
    },
    { additionalProperties: false },
  );

const parametersSchema = Type.Object(
  {
    max_steps: Type.Optional(limits.max_steps),
    time_budget_ms: Type.Optional(limits.time_budget_ms),
    token_budget: Type.Optional(limits.token_budget),
  },
  { additionalProperties: false },
);

/** What a run has spent so far (recorded steps included, when it is continued). */
interface Spent {
  modelTurns: number;
  tokens: number;
  ms: number;
}

function cut(text: string, max: number): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}\n…[cut: ${text.length - max} more characters]`;
}

function asTool(spec: ToolSpec): FunctionTool {
  return {
    type: 'function',
    function: { name: spec.name, description: spec.description, parameters: spec.parameters },
  };
}

/** The arguments of a call as an object, or why they are not one. */
function parseArguments(
  call: ToolCall,
): { ok: true; value: Record<string, unknown> } | { ok: false; problem: string } {
  const text = call.function.arguments.trim() === '' ? '{}' : call.function.arguments;
  try {
    const value = JSON.parse(text) as unknown;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      return { ok: true, value: value as Record<string, unknown> };
    }
    return { ok: false, problem: 'the arguments are not a JSON object' };
  } catch {
    return { ok: false, problem: 'the arguments are not valid JSON' };
  }
}

function modelTurnOf(step: StepRecord): ChatTurn {
  const output = step.output ?? {};
  const toolCalls = Array.isArray(output.tool_calls) ? (output.tool_calls as ToolCall[]) : [];
  return {
    role: 'assistant',
    content: typeof output.content === 'string' ? output.content : '',
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
  };
}

function toolTurnOf(step: StepRecord): ChatTurn {
  const output = step.output ?? {};
  const content = typeof output.content === 'string' ? output.content : '';
  return { role: 'tool', toolCallId: step.callId ?? '', content };
}

/** One run of the loop: its tools, its limits, its log and what it has spent. */
class ToolLoop {
  private readonly messages: ChatTurn[];
  private readonly spent: Spent = { modelTurns: 0, tokens: 0, ms: 0 };
  private readonly started: number;

  constructor(
    private readonly context: AgentRunContext,
    private readonly settings: ToolConfiguration,
    private readonly box: ToolBox,
    private readonly log: StepLog,
    query: string,
  ) {
    const system = [
      settings.instructions ?? 'You are a helpful assistant.',
      'Use the tools when they help; call several at once when they do not depend on each other. When you have what you need, answer the user directly.',
    ].join('\n\n');
    this.messages = [
      { role: 'system', content: system },
      { role: 'user', content: query },
    ];
    this.started = Date.now();
  }

  private get tools(): FunctionTool[] {
    return this.box.tools.map(asTool);
  }

  private spec(name: string): ToolSpec | undefined {
    return this.box.tools.find((tool) => tool.name === name);
  }

  /** Working time: the recorded steps' and this sitting's. */
  private elapsed(): number {
    return this.spent.ms + (Date.now() - this.started);
  }

  private limitError(): AppError | null {
    const { settings, spent } = this;
    if (spent.modelTurns >= settings.max_steps) {
      return new AppError(
        'limit_reached',
        `The agent made ${spent.modelTurns} model turns (max_steps) without a final answer.`,
        { details: { limit: 'max_steps' } },
      );
    }
    if (spent.tokens >= settings.token_budget) {
      return new AppError(
        'limit_reached',
        `The agent used ${spent.tokens} tokens (token_budget ${settings.token_budget}) without a final answer.`,
        { details: { limit: 'token_budget' } },
      );
    }
    if (this.elapsed() >= settings.time_budget_ms) return this.timeBudgetError();
    return null;
  }

  private timeBudgetError(): AppError {
    return new AppError(
      'limit_reached',
      `The agent worked for its whole time budget (${this.settings.time_budget_ms} ms) without a final answer.`,
      { details: { limit: 'time_budget_ms' } },
    );
  }

  /** The signal of one model turn or tool call: the run's, and the time budget's remainder. */
  private budgetSignal(): { signal: AbortSignal; timedOut: () => boolean } {
    const remaining = Math.max(1, this.settings.time_budget_ms - this.elapsed());
    const timeout = AbortSignal.timeout(remaining);
    return {
      signal: AbortSignal.any([this.context.signal, timeout]),
      timedOut: () => timeout.aborted && !this.context.signal.aborted,
    };
  }

  /**
   * Reads back the steps recorded before (a continued run): the conversation as it stood, what
   * was spent, and the calls still to run (approved ones, and any the run stopped before).
   */
  private replay(): { answer: string | null; toRun: Array<{ call: ToolCall; step?: StepRecord }> } {
    const steps = this.log.previous;
    let answer: string | null = null;
    let toRun: Array<{ call: ToolCall; step?: StepRecord }> = [];
    for (const step of steps) {
      if (step.kind !== 'model') continue;
      this.spent.modelTurns += 1;
      this.spent.tokens += step.tokensUsed;
      this.spent.ms += step.durationMs ?? 0;
      const turn = modelTurnOf(step);
      this.messages.push(turn);
      toRun = [];
      answer = (turn.toolCalls?.length ?? 0) === 0 ? turn.content : null;
      for (const call of turn.toolCalls ?? []) {
        const recorded = steps.find((other) => other.kind === 'tool' && other.callId === call.id);
        if (recorded === undefined) {
          toRun.push({ call });
        } else if (recorded.status === 'completed' || recorded.status === 'failed') {
          this.spent.ms += recorded.durationMs ?? 0;
          this.messages.push(toolTurnOf(recorded));
        } else if (recorded.status === 'rejected') {
          const reason = recorded.decision?.reason;
          throw new AppError(
            'approval_rejected',
            `The call of '${recorded.name}' was rejected${reason ? `: ${reason}` : ''}.`,
          );
        } else {
          toRun.push({ call, step: recorded });
        }
      }
    }
    return { answer, toRun };
  }

  async run(): Promise<Record<string, unknown>> {
    const replayed = this.replay();
    if (replayed.answer !== null) return this.result(replayed.answer);
    let pending = replayed.toRun;
    for (;;) {
      if (pending.length > 0) await this.runCalls(pending);
      const limit = this.limitError();
      if (limit !== null) throw limit;
      const turn = await this.modelTurn();
      const calls = turn.toolCalls ?? [];
      if (calls.length === 0) return this.result(turn.text);
      pending = calls.map((call) => ({ call }));
    }
  }

  private result(answer: string): Record<string, unknown> {
    const toolCalls = this.messages.filter((turn) => turn.role === 'tool').length;
    return { answer, model_turns: this.spent.modelTurns, tool_calls: toolCalls };
  }

  private async modelTurn(): Promise<GenerationResult> {
    const started = Date.now();
    const startedAt = new Date(started).toISOString();
    const budget = this.budgetSignal();
    const tokensBefore = this.context.models.tokensUsed;
    let result: GenerationResult;
    try {
      result = await this.context.models.turn(this.messages, {
        tools: this.tools,
        tool_choice: 'auto',
        parallel_tool_calls: true,
      });
    } catch (error) {
      const failed =
        budget.timedOut() && !(error instanceof AppError) ? this.timeBudgetError() : error;
      await this.log.add({
        kind: 'model',
        name: this.context.models.name ?? 'model',
        status: 'failed',
        error: executionError(
          failed instanceof AppError ? failed.code : 'upstream_error',
          failed instanceof Error ? failed.message : 'the model call failed',
        ),
        durationMs: Date.now() - started,
        startedAt,
        completedAt: new Date().toISOString(),
      });
      throw failed;
    }
    const tokens = this.context.models.tokensUsed - tokensBefore;
    const durationMs = Date.now() - started;
    const toolCalls = result.toolCalls ?? [];
    await this.log.add({
      kind: 'model',
      name: this.context.models.name ?? 'model',
      status: 'completed',
      output: { content: result.text, tool_calls: toolCalls },
      tokensUsed: tokens,
      durationMs,
      startedAt,
      completedAt: new Date().toISOString(),
    });
    this.spent.modelTurns += 1;
    this.spent.tokens += tokens;
    this.spent.ms += durationMs;
    this.messages.push({
      role: 'assistant',
      content: result.text,
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
    });
    return result;
  }

  /**
   * Runs a model turn's calls: those that need no approval (or have it) at once, in parallel;
   * those that need it are recorded waiting, and the run pauses once the others are done. The
   * results are fed back in the order the model asked.
   */
  private async runCalls(pending: Array<{ call: ToolCall; step?: StepRecord }>): Promise<void> {
    const waiting: StepRecord[] = [];
    const outcomes = await Promise.all(
      pending.map(async ({ call, step }) => {
        const spec = this.spec(call.function.name);
        const parsed = parseArguments(call);
        const decided = step?.status === 'approved';
        if (spec?.requiresApproval === true && parsed.ok && !decided) {
          if (step?.status === 'waiting_for_approval') {
            waiting.push(step);
            return null;
          }
          if (this.log.canPause) {
            waiting.push(
              await this.log.add({
                kind: 'tool',
                name: spec.name,
                callId: call.id,
                arguments: parsed.value,
                status: 'waiting_for_approval',
                startedAt: new Date().toISOString(),
                expiresAt: new Date(Date.now() + this.log.approvalTimeoutMs).toISOString(),
              }),
            );
            return null;
          }
          return this.record(call, parsed.value, {
            ok: false,
            content: `The tool '${spec.name}' needs a person's approval, which a run inside another agent cannot wait for.`,
          });
        }
        if (spec === undefined) {
          return this.record(call, null, {
            ok: false,
            content: `There is no tool named '${call.function.name}'. Tools: ${this.box.tools.map((tool) => tool.name).join(', ')}.`,
          });
        }
        if (!parsed.ok) {
          return this.record(call, null, { ok: false, content: `Not called: ${parsed.problem}.` });
        }
        // An approved call runs with the arguments the person approved (perhaps edited).
        const args = decided ? (step.arguments ?? parsed.value) : parsed.value;
        return this.call(spec, call, args, step);
      }),
    );
    if (waiting.length > 0) {
      throw new AwaitingApproval(waiting, this.context.models.tokensUsed);
    }
    for (const outcome of outcomes) {
      if (outcome !== null) this.messages.push(outcome);
    }
  }

  private async call(
    spec: ToolSpec,
    call: ToolCall,
    args: Record<string, unknown>,
    approved: StepRecord | undefined,
  ): Promise<ChatTurn> {
    const started = Date.now();
    const budget = this.budgetSignal();
    let outcome;
    try {
      outcome = await this.box.call(spec.name, args, budget.signal);
    } catch (error) {
      if (this.context.signal.aborted) throw error;
      outcome = {
        ok: false,
        content: budget.timedOut()
          ? `The call was stopped: the agent's time budget ran out.`
          : `The call failed: ${error instanceof Error ? error.message : 'unknown error'}.`,
      };
    }
    return this.record(call, args, outcome, started, approved);
  }

  /** Records a call's result (as its step) and answers the tool turn fed back. */
  private async record(
    call: ToolCall,
    args: Record<string, unknown> | null,
    outcome: { ok: boolean; content: string },
    started = Date.now(),
    approved?: StepRecord,
  ): Promise<ChatTurn> {
    const content = cut(outcome.content, this.settings.max_result_chars);
    const durationMs = Date.now() - started;
    const fields = {
      status: outcome.ok ? ('completed' as const) : ('failed' as const),
      output: { ok: outcome.ok, content },
      error: outcome.ok ? null : executionError('upstream_error', cut(outcome.content, 500)),
      durationMs,
      completedAt: new Date().toISOString(),
    };
    if (approved === undefined) {
      await this.log.add({
        kind: 'tool',
        name: call.function.name,
        callId: call.id,
        arguments: args,
        startedAt: new Date(started).toISOString(),
        ...fields,
      });
    } else {
      await this.log.update(approved, fields);
    }
    this.spent.ms += durationMs;
    return { role: 'tool', toolCallId: call.id, content };
  }
}

/** Save-time checks of the `tools` entries, and their stored form as the owner sees it. */
export interface ToolChecks {
  prepare(
    accountId: string,
    entries: Array<Record<string, unknown>>,
    previous: Array<Record<string, unknown>> | null,
  ): Promise<Array<Record<string, unknown>>>;
  shown(entries: Array<Record<string, unknown>>): Array<Record<string, unknown>>;
}

export function createToolAgent(
  opener: ToolOpener,
  checks: ToolChecks,
  toolEntrySchema: TSchema,
): AgentType<ToolConfiguration> {
  const configurationSchema = configurationSchemaOf(toolEntrySchema);
  return {
    id: 'ToolAgent',
    name: 'Tool agent',
    description:
      'Decides which tools to call — MCP servers, OpenAPI-described HTTP APIs, knowledge-base search, web search and page reading, other agents and pipelines — runs them, and answers. Calls can wait for a person’s approval. Needs a model with tool calling.',
    capabilities: ['tool_calling', 'mcp', 'human_approval'],
    configurationSchema,
    parametersSchema,
    validateInput(input) {
      if (input.query === undefined || input.query.trim() === '') {
        throw new MissingParameterError('query', "'query' (the task) is required.");
      }
    },
    async prepareConfiguration(accountId, configuration, previous, { isPublic }) {
      if (isPublic) {
        throw new InvalidParameterError(
          'is_public',
          'A ToolAgent acts with its owner’s credentials and objects, so it cannot be public.',
        );
      }
      const tools = await checks.prepare(accountId, configuration.tools, previous?.tools ?? null);
      return { ...configuration, tools };
    },
    showConfiguration(configuration) {
      return { ...configuration, tools: checks.shown(configuration.tools) };
    },
    async run(context, configuration, input, parameters) {
      if (!context.models.available()) throw context.models.unavailableError('ToolAgent');
      const settings: ToolConfiguration = { ...configuration, ...parameters };
      const box = await opener.open(context.agent, configuration.tools, {
        signal: context.signal,
        depth: context.depth ?? 0,
        callerAccountId: context.callerAccountId,
      });
      try {
        return await new ToolLoop(context, settings, box, context.steps, input.query ?? '').run();
      } finally {
        await box.close();
      }
    },
  };
}
