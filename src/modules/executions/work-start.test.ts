import { describe, expect, it } from 'vitest';
import { workStart } from './execution.js';

describe("a run's working time", () => {
  const createdAt = '2026-11-28T10:00:00.000Z';
  const created = Date.parse(createdAt);

  it('counts from its creation while it has never paused', () => {
    expect(workStart({ createdAt, executionTimeMs: null }, created + 5_000)).toBe(created);
  });

  it('goes on from what it had worked when it paused, the wait for a person not counted', () => {
    // Paused after 700 ms of work; decided on an hour later.
    const resumed = created + 3_600_000;
    const start = workStart({ createdAt, executionTimeMs: 700 }, resumed);
    expect(start).toBe(resumed - 700);
    // 300 ms more of work after the decision: 1,000 ms in all.
    expect(resumed + 300 - start).toBe(1_000);
  });
});
