// Reading a ToolAgent's steps back: working time as the union of the steps' spans (parallel calls
// once, the gaps between sittings not at all), each turn's own tool steps even when a model reuses
// call ids, failed model turns of an earlier attempt skipped, and the note on calls not made.
import { describe, expect, it } from 'vitest';
import type { StepRecord } from '../../executions/execution.js';
import { replaySteps, workedMs } from './tool-replay.js';

let position = 0;
function step(fields: Partial<StepRecord> & Pick<StepRecord, 'kind'>): StepRecord {
  position += 1;
  return {
    id: `step_${position}`,
    executionId: 'exec_1',
    stageRecordId: null,
    position,
    name: fields.kind === 'model' ? 'model' : 'tool',
    callId: null,
    arguments: null,
    output: null,
    status: 'completed',
    error: null,
    decision: null,
    tokensUsed: 0,
    durationMs: null,
    startedAt: '2026-11-28T10:00:00.000Z',
    completedAt: null,
    expiresAt: null,
    toolSchema: null,
    ...fields,
  };
}

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 28, 10, 0, seconds)).toISOString();

describe('workedMs', () => {
  it('counts overlapping spans once and the time between them not at all', () => {
    const spans = [
      // A model turn from 0 to 2 s.
      step({ kind: 'model', completedAt: at(2), durationMs: 2000 }),
      // Three calls at once, 2 s to 12 s (10 s each): 10 s, not 30.
      ...[0, 1, 2].map(() => step({ kind: 'tool', completedAt: at(12), durationMs: 10_000 })),
      // An hour waiting for approval, then a call of 1 s.
      step({ kind: 'tool', completedAt: at(3612), durationMs: 1000 }),
      // A step still waiting has no span.
      step({ kind: 'tool', status: 'waiting_for_approval' }),
    ];
    expect(workedMs(spans)).toBe(2000 + 10_000 + 1000);
    expect(workedMs([])).toBe(0);
  });
});

describe('replaySteps', () => {
  const call = (id: string, args = '{}') => ({
    id,
    type: 'function' as const,
    function: { name: 'lookup', arguments: args },
  });

  it('matches each turn with its own tool steps when call ids repeat, and tells of calls not made', () => {
    const steps = [
      step({ kind: 'model', output: { content: '', tool_calls: [call('c1')] } }),
      step({ kind: 'tool', callId: 'c1', output: { ok: true, content: 'first' } }),
      // A failed turn of an earlier attempt says nothing.
      step({ kind: 'model', status: 'failed' }),
      step({
        kind: 'model',
        output: { content: '', tool_calls: [call('c1'), call('c2')], calls_refused: 3 },
      }),
      step({ kind: 'tool', callId: 'c1', output: { ok: true, content: 'second' } }),
      step({ kind: 'tool', callId: 'c2', status: 'running', arguments: { n: 2 } }),
    ];
    const replayed = replaySteps(steps, 2);
    expect(replayed.modelTurns).toBe(2);
    expect(replayed.messages.map((turn) => [turn.role, turn.content])).toEqual([
      ['assistant', ''],
      ['tool', 'first'],
      ['assistant', ''],
      ['tool', 'second'],
    ]);
    // The call left running is the one to decide on; the note waits for its result.
    expect(replayed.toRun.map((pending) => [pending.call.id, pending.step?.status])).toEqual([
      ['c2', 'running'],
    ]);
    expect(replayed.refused).toBe(3);
  });

  it('adds the note to the last result once every call of the turn has one', () => {
    const steps = [
      step({ kind: 'model', output: { content: '', tool_calls: [call('a')], calls_refused: 1 } }),
      step({ kind: 'tool', callId: 'a', output: { ok: true, content: 'done' } }),
    ];
    const last = replaySteps(steps, 1).messages.at(-1);
    expect(last?.content).toBe(
      'done\n\n[1 more call was not made: at most 1 call run per turn (tools.max_calls_per_turn). Ask again for any still needed.]',
    );
  });
});
