// Reading a ToolAgent's recorded steps back (a continued run): the conversation as it stood, what
// was spent, and the calls of the last turn still to make — those approved, waiting, or found
// `running` (their instance stopped). Each model turn owns the tool steps recorded after it and
// before the next turn, so a model that reuses call ids from turn to turn is read right.
import { AppError } from '../../../errors/app-error.js';
import type { ChatTurn, ToolCall } from '../../../models/spec.js';
import type { StepRecord } from '../../executions/execution.js';

/** A call of a model turn still to be made, with its record when it has one (a continued run). */
export interface PendingCall {
  call: ToolCall;
  step?: StepRecord | undefined;
}

/** What the model is told of the calls of its turn past the per-turn limit. */
export function refusedCallsNote(refused: number, limit: number): string {
  return `[${refused} more call${refused === 1 ? ' was' : 's were'} not made: at most ${limit} call${limit === 1 ? '' : 's'} run per turn (tools.max_calls_per_turn). Ask again for any still needed.]`;
}

export interface ReplayedRun {
  /** The assistant and tool turns recorded, in order (after the system prompt and the query). */
  messages: ChatTurn[];
  modelTurns: number;
  tokens: number;
  /** The answer, when the last recorded turn gave one. */
  answer: string | null;
  /** The last turn's calls not yet ended. */
  toRun: PendingCall[];
  /** How many calls of the last turn were past the per-turn limit (not made). */
  refused: number;
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

/** The completed model turns, each with the tool steps recorded in its turn. */
function turnsOf(steps: readonly StepRecord[]): Array<{ model: StepRecord; tools: StepRecord[] }> {
  const turns: Array<{ model: StepRecord; tools: StepRecord[] }> = [];
  for (const step of steps) {
    // A failed model turn ended an earlier attempt: it said nothing to replay.
    if (step.kind === 'model') {
      if (step.status === 'completed') turns.push({ model: step, tools: [] });
    } else {
      turns.at(-1)?.tools.push(step);
    }
  }
  return turns;
}

export function replaySteps(steps: readonly StepRecord[], maxCallsPerTurn: number): ReplayedRun {
  const replayed: ReplayedRun = {
    messages: [],
    modelTurns: 0,
    tokens: 0,
    answer: null,
    toRun: [],
    refused: 0,
  };
  for (const { model, tools } of turnsOf(steps)) {
    replayed.modelTurns += 1;
    replayed.tokens += model.tokensUsed;
    const turn = modelTurnOf(model);
    replayed.messages.push(turn);
    const calls = turn.toolCalls ?? [];
    const refused = Number(model.output?.calls_refused ?? 0) || 0;
    replayed.answer = calls.length === 0 ? turn.content : null;
    replayed.toRun = [];
    replayed.refused = refused;
    const byCall = new Map(tools.map((step) => [step.callId, step]));
    let results = 0;
    for (const call of calls) {
      const recorded = byCall.get(call.id);
      if (recorded === undefined) {
        replayed.toRun.push({ call });
      } else if (recorded.status === 'completed' || recorded.status === 'failed') {
        replayed.messages.push(toolTurnOf(recorded));
        results += 1;
      } else if (recorded.status === 'rejected') {
        const reason = recorded.decision?.reason;
        throw new AppError(
          'approval_rejected',
          `The call of '${recorded.name}' was rejected${reason ? `: ${reason}` : ''}.`,
        );
      } else {
        replayed.toRun.push({ call, step: recorded });
      }
    }
    // Every result of the turn read back: the note on calls not made goes with the last.
    const last = replayed.messages.at(-1);
    if (refused > 0 && replayed.toRun.length === 0 && results > 0 && last?.role === 'tool') {
      replayed.messages[replayed.messages.length - 1] = {
        ...last,
        content: `${last.content}\n\n${refusedCallsNote(refused, maxCallsPerTurn)}`,
      };
    }
  }
  return replayed;
}

/**
 * The working time of recorded steps: the union of their spans (each ends at `completedAt` and
 * lasted `durationMs`), so calls made at once count once and waits between sittings not at all.
 */
export function workedMs(steps: readonly StepRecord[]): number {
  const spans = steps
    .filter((step) => step.completedAt !== null && step.durationMs !== null)
    .map((step) => {
      const end = Date.parse(step.completedAt!);
      return [end - step.durationMs!, end] as const;
    })
    .filter(([start, end]) => Number.isFinite(start) && end >= start)
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let open: [number, number] | null = null;
  for (const [start, end] of spans) {
    if (open !== null && start <= open[1]) {
      open[1] = Math.max(open[1], end);
      continue;
    }
    if (open !== null) total += open[1] - open[0];
    open = [start, end];
  }
  return open === null ? total : total + open[1] - open[0];
}
