// One run of a ToolAgent's loop: model turn, the calls it asks for (in parallel), their results fed
// back, until an answer or a limit. Every model turn and call is a step of the execution, recorded
// before a call starts (`running`) and when it ends, so that a run is continued from its records
// anywhere and a call is made at most once: a later sitting that finds a call still `running` (its
// instance was stopped) does not make it again by itself — the call waits, `interrupted`, for a
// person, unless its tool is idempotent. Work per turn is bounded: at most `maxCallsPerTurn` calls
// run (the model is told of the rest), and arguments past tools.max_argument_bytes are neither
// parsed nor stored.
import { AppError } from '../../../errors/app-error.js';
import { executionError } from '../../../errors/execution-error.js';
import type { ChatTurn, FunctionTool, ToolCall } from '../../../models/spec.js';
import type { StepRecord } from '../../executions/execution.js';
import type { ToolArguments } from '../../tools/tool-arguments.js';
import type { ToolBox, ToolOutcome, ToolSpec } from '../../tools/tool.js';
import { AwaitingApproval, type AgentRunContext, type StepLog } from '../agent-type.js';
import { refusedCallsNote, replaySteps, workedMs, type PendingCall } from './tool-replay.js';
import { traceToolCall } from '../../../telemetry/operation-spans.js';

/** What the loop may spend, and how many calls one turn may have made. */
export interface ToolLoopSettings {
  instructions?: string | undefined;
  max_steps: number;
  time_budget_ms: number;
  token_budget: number;
  max_result_chars: number;
  maxCallsPerTurn: number;
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

export class ToolLoop {
  private readonly messages: ChatTurn[];
  private readonly spent = { modelTurns: 0, tokens: 0 };
  /** Working time of earlier sittings (a continued run): parallel calls counted once. */
  private earlierMs = 0;
  private readonly started = Date.now();
  private readonly log: StepLog;

  constructor(
    private readonly context: AgentRunContext,
    private readonly settings: ToolLoopSettings,
    private readonly box: ToolBox,
    /** The checks of the model's arguments (`tools.max_argument_bytes`, the tool's schema). */
    private readonly checks: Pick<ToolArguments, 'bounded' | 'parse' | 'problem'>,
    query: string,
  ) {
    // Where the run's steps are recorded: the execution's, or memory for a nested run.
    this.log = context.steps;
    const system = [
      settings.instructions ?? 'You are a helpful assistant.',
      'Use the tools when they help; call several at once when they do not depend on each other. When you have what you need, answer the user directly.',
    ].join('\n\n');
    this.messages = [
      { role: 'system', content: system },
      { role: 'user', content: query },
    ];
  }

  /**
   * Working time: wall time since this sitting began, plus the earlier sittings' (a wait for a
   * person's decision is not working time; calls made at once count once).
   */
  private elapsed(): number {
    return this.earlierMs + (Date.now() - this.started);
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

  async run(): Promise<Record<string, unknown>> {
    const previous = this.log.previous;
    const replayed = replaySteps(previous, this.settings.maxCallsPerTurn);
    this.messages.push(...replayed.messages);
    this.spent.modelTurns = replayed.modelTurns;
    this.spent.tokens = replayed.tokens;
    this.earlierMs = workedMs(previous);
    if (replayed.answer !== null) return this.result(replayed.answer);
    let pending = replayed.toRun;
    let refused = replayed.refused;
    for (;;) {
      if (pending.length > 0) await this.runCalls(pending, refused);
      const limit = this.limitError();
      if (limit !== null) throw limit;
      const turn = await this.modelTurn();
      if (turn.calls.length === 0) return this.result(turn.text);
      pending = turn.calls.map((call) => ({ call }));
      refused = turn.refused;
    }
  }

  private result(answer: string): Record<string, unknown> {
    const toolCalls = this.messages.filter((turn) => turn.role === 'tool').length;
    return { answer, model_turns: this.spent.modelTurns, tool_calls: toolCalls };
  }

  /**
   * One model turn, recorded. The calls it asks for past the per-turn limit are left out of the
   * record and of the conversation (counted in `calls_refused`), and arguments too large to keep
   * are replaced by a placeholder, so that neither is parsed, stored or sent again.
   */
  private async modelTurn(): Promise<{ text: string; calls: ToolCall[]; refused: number }> {
    const started = Date.now();
    const startedAt = new Date(started).toISOString();
    const budget = this.budgetSignal();
    const models = this.context.models;
    const tokensBefore = models.tokensUsed;
    let result;
    try {
      result = await models.turn(this.messages, {
        tools: this.box.tools.map(asTool),
        tool_choice: 'auto',
        parallel_tool_calls: true,
      });
    } catch (error) {
      const failed =
        budget.timedOut() && !(error instanceof AppError) ? this.timeBudgetError() : error;
      await this.log.add({
        kind: 'model',
        name: models.name ?? 'model',
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
    const tokens = models.tokensUsed - tokensBefore;
    const proposed = result.toolCalls ?? [];
    const calls = proposed.slice(0, this.settings.maxCallsPerTurn).map((call) => ({
      ...call,
      function: {
        name: call.function.name,
        arguments: this.checks.bounded(call.function.arguments),
      },
    }));
    const refused = proposed.length - calls.length;
    await this.log.add({
      kind: 'model',
      name: models.name ?? 'model',
      status: 'completed',
      output: {
        content: result.text,
        tool_calls: calls,
        ...(refused > 0 ? { calls_refused: refused } : {}),
      },
      tokensUsed: tokens,
      durationMs: Date.now() - started,
      startedAt,
      completedAt: new Date().toISOString(),
    });
    this.spent.modelTurns += 1;
    this.spent.tokens += tokens;
    this.messages.push({
      role: 'assistant',
      content: result.text,
      ...(calls.length > 0 ? { toolCalls: calls } : {}),
    });
    return { text: result.text, calls, refused };
  }

  /**
   * Runs a model turn's calls: those that need no decision (or have one) at once, in parallel;
   * those that need one are recorded waiting, and the run pauses once the others are done. The
   * results are fed back in the order the model asked; the last tells of calls not made.
   */
  private async runCalls(pending: readonly PendingCall[], refused: number): Promise<void> {
    const waiting: StepRecord[] = [];
    const outcomes = await Promise.all(
      pending.map(async (entry) => {
        const next = await this.nextFor(entry);
        if (next.kind === 'wait') {
          waiting.push(next.step);
          return null;
        }
        if (next.kind === 'done') return next.turn;
        return this.call(next.spec, entry.call, next.args, entry.step);
      }),
    );
    if (waiting.length > 0) {
      throw new AwaitingApproval(waiting, this.context.models.tokensUsed);
    }
    const turns = outcomes.filter((turn): turn is ChatTurn => turn !== null);
    const last = turns.at(-1);
    if (refused > 0 && last !== undefined) {
      turns[turns.length - 1] = {
        ...last,
        content: `${last.content}\n\n${refusedCallsNote(refused, this.settings.maxCallsPerTurn)}`,
      };
    }
    this.messages.push(...turns);
  }

  /** What to do with one call: refuse it (recorded), wait for a person, or make it. */
  private async nextFor({
    call,
    step,
  }: PendingCall): Promise<
    | { kind: 'done'; turn: ChatTurn }
    | { kind: 'wait'; step: StepRecord }
    | { kind: 'call'; spec: ToolSpec; args: Record<string, unknown> }
  > {
    const spec = this.box.tools.find((tool) => tool.name === call.function.name);
    if (spec === undefined) {
      const names = this.box.tools.map((tool) => tool.name).join(', ');
      const content = `There is no tool named '${call.function.name.slice(0, 100)}'. Tools: ${names}.`;
      return { kind: 'done', turn: await this.refuse(call, null, content) };
    }
    const parsed = this.checks.parse(call.function.arguments);
    if (!parsed.ok) {
      return {
        kind: 'done',
        turn: await this.refuse(call, null, `Not called: ${parsed.problem}.`),
      };
    }
    if (step?.status === 'approved') {
      // An approved call runs with the arguments the person approved (checked when approved).
      return { kind: 'call', spec, args: step.arguments ?? parsed.value };
    }
    if (step?.status === 'waiting_for_approval') return { kind: 'wait', step };
    if (step?.status === 'running' || step?.status === 'interrupted') {
      if (spec.idempotent) return { kind: 'call', spec, args: step.arguments ?? parsed.value };
      return { kind: 'wait', step: await this.interrupted(step, spec) };
    }
    const problem = this.checks.problem(spec.parameters, parsed.value);
    if (problem !== null) {
      const content = `Not called: ${problem.message}`;
      return { kind: 'done', turn: await this.refuse(call, parsed.value, content) };
    }
    if (!spec.requiresApproval) return { kind: 'call', spec, args: parsed.value };
    if (!this.log.canPause) {
      const content = `The tool '${spec.name}' needs a person's approval, which a run inside another agent cannot wait for.`;
      return { kind: 'done', turn: await this.refuse(call, parsed.value, content) };
    }
    const waitingStep = await this.log.add({
      kind: 'tool',
      name: spec.name,
      callId: call.id,
      arguments: parsed.value,
      status: 'waiting_for_approval',
      startedAt: new Date().toISOString(),
      expiresAt: this.deadline(),
      toolSchema: spec.parameters,
    });
    return { kind: 'wait', step: waitingStep };
  }

  private deadline(): string {
    return new Date(Date.now() + this.log.approvalTimeoutMs).toISOString();
  }

  /**
   * A call an earlier sitting started and did not see end (its instance stopped): it may or may
   * not have taken effect, so it is not made again by itself — it waits for a person's decision.
   */
  private async interrupted(step: StepRecord, spec: ToolSpec): Promise<StepRecord> {
    const update = {
      status: 'interrupted' as const,
      error: executionError(
        'interrupted',
        'The call was running when its instance stopped; it may or may not have taken effect. Approve to make it again, or reject.',
      ),
      expiresAt: this.deadline(),
      toolSchema: spec.parameters,
    };
    await this.log.update(step, update, ['running', 'interrupted']);
    return { ...step, ...update };
  }

  /** Makes one call: recorded `running` first, then with its outcome. */
  private async call(
    spec: ToolSpec,
    call: ToolCall,
    args: Record<string, unknown>,
    recorded: StepRecord | undefined,
  ): Promise<ChatTurn> {
    const started = Date.now();
    const startedAt = new Date(started).toISOString();
    let step: StepRecord;
    if (recorded === undefined) {
      step = await this.log.add({
        kind: 'tool',
        name: spec.name,
        callId: call.id,
        arguments: args,
        status: 'running',
        startedAt,
      });
    } else {
      // Approved, or an idempotent call made again: one sitting takes it.
      await this.log.update(recorded, { status: 'running', arguments: args, expiresAt: null }, [
        recorded.status,
      ]);
      step = { ...recorded, status: 'running', arguments: args };
    }
    const budget = this.budgetSignal();
    let outcome: ToolOutcome;
    try {
      outcome = await traceToolCall(this.box, spec.name, call.id, args, budget.signal);
    } catch (error) {
      if (this.context.signal.aborted) {
        // Stopped mid-call (the client left, or this instance stops): the next sitting asks.
        await this.log.update(step, { status: 'interrupted' }, ['running']).catch(() => undefined);
        throw error;
      }
      outcome = {
        ok: false,
        content: budget.timedOut()
          ? `The call was stopped: the agent's time budget ran out.`
          : `The call failed: ${error instanceof Error ? error.message : 'unknown error'}.`,
      };
    }
    const content = cut(outcome.content, this.settings.max_result_chars);
    await this.log.update(
      step,
      {
        status: outcome.ok ? 'completed' : 'failed',
        output: { ok: outcome.ok, content },
        error: outcome.ok ? null : executionError('upstream_error', cut(outcome.content, 500)),
        durationMs: Date.now() - started,
        completedAt: new Date().toISOString(),
      },
      ['running'],
    );
    return { role: 'tool', toolCallId: call.id, content };
  }

  /** Records a call that is not made, and answers the tool turn that tells the model why. */
  private async refuse(
    call: ToolCall,
    args: Record<string, unknown> | null,
    message: string,
  ): Promise<ChatTurn> {
    const content = cut(message, this.settings.max_result_chars);
    const now = new Date().toISOString();
    await this.log.add({
      kind: 'tool',
      name: call.function.name.slice(0, 200),
      callId: call.id,
      arguments: args,
      status: 'failed',
      output: { ok: false, content },
      error: executionError('invalid_parameter', cut(message, 500)),
      durationMs: 0,
      startedAt: now,
      completedAt: now,
    });
    return { role: 'tool', toolCallId: call.id, content };
  }
}
