// Schemas built per run (an agent's answer schema follows its configuration) are compiled once per
// distinct schema and not kept by Ajv: a process running an agent many times holds one validator.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { checkAgainstSchema, compiledAgentValidators } from './schema-validator.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** A new object each call, as reasoning-agent.ts's answerSchema(configuration) builds it. */
const answerSchema = (steps: number) => ({
  type: 'object',
  properties: {
    steps: { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: steps },
    conclusion: { type: 'string', minLength: 1 },
  },
  required: ['steps', 'conclusion'],
  additionalProperties: false,
});

describe('agent schema validators', () => {
  it('compiles a schema built anew for each run once', () => {
    expect(
      checkAgainstSchema(answerSchema(3), { steps: ['a'], conclusion: 'b' }, 'x', 'x').ok,
    ).toBe(true);
    const afterOne = compiledAgentValidators();
    for (let run = 0; run < 500; run += 1) {
      const checked = checkAgainstSchema(answerSchema(3), { steps: [], conclusion: '' }, 'x', 'x');
      expect(checked.ok).toBe(false);
    }
    expect(compiledAgentValidators()).toBe(afterOne);
  });

  it('keeps a bounded number of distinct schemas: the heap does not grow with each new one', () => {
    for (let steps = 1000; steps < 1300; steps += 1)
      checkAgainstSchema(answerSchema(steps), {}, 'x', 'x');
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    // Many, so that whatever else the worker allocates meanwhile is spread thin (a validator kept
    // per schema would cost KiBs each, whatever the count).
    const distinct = 1500;
    for (let steps = 2000; steps < 2000 + distinct; steps += 1) {
      checkAgainstSchema(answerSchema(steps), {}, 'x', 'x');
    }
    gc();
    gc();
    // Each compiled validator is a few KiB of generated code; kept by Ajv they added up.
    expect((process.memoryUsage().heapUsed - before) / distinct).toBeLessThan(1024);
    // Still right after its validator was dropped and compiled again.
    expect(
      checkAgainstSchema(answerSchema(2000), { steps: ['a'], conclusion: 'b' }, 'x', 'x').ok,
    ).toBe(true);
  });
});
