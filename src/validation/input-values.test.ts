import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findUnstorableValue, maxNestingDepth, stringProblem } from './input-values.js';

/** The plain recursive walk the iterative one replaces: the reference for the property below. */
function reference(value: unknown, path: string[] = [], depth = 1): unknown {
  if (typeof value === 'string') {
    const problem = stringProblem(value);
    return problem === null ? null : { path, problem };
  }
  if (typeof value === 'number') {
    return Number.isFinite(value) ? null : { path, problem: 'must be a finite number' };
  }
  if (typeof value !== 'object' || value === null) return null;
  if (depth > maxNestingDepth) {
    return { path, problem: `is nested deeper than ${maxNestingDepth} levels` };
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = reference(item, [...path, String(index)], depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    const problem = stringProblem(key);
    if (problem !== null) return { path: [...path, key], problem: `has a key that ${problem}` };
  }
  for (const [key, item] of Object.entries(value)) {
    const found = reference(item, [...path, key], depth + 1);
    if (found !== null) return found;
  }
  return null;
}

const leaf = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.constantFrom('ok', 'a\u0000b', '\ud800', 'x'),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
);

describe('findUnstorableValue', () => {
  it('names the path of a NUL, a lone surrogate, a non-finite number and a bad key', () => {
    expect(findUnstorableValue({ a: [1, { b: 'x\u0000' }] })).toEqual({
      path: ['a', '1', 'b'],
      problem: expect.stringContaining('NUL') as unknown,
    });
    expect(findUnstorableValue({ a: { ['k\ud800']: 1 } })?.path).toEqual(['a', 'k\ud800']);
    expect(findUnstorableValue([0, [Infinity]])?.path).toEqual(['1', '0']);
    expect(findUnstorableValue('\u0000')?.path).toEqual([]);
    expect(findUnstorableValue({ a: [1, 2, { c: 'fine' }] })).toBeNull();
  });

  it('refuses nesting past the limit and accepts it at the limit', () => {
    const nest = (levels: number): unknown => {
      let value: unknown = 1;
      for (let level = 0; level < levels; level += 1) value = [value];
      return value;
    };
    expect(findUnstorableValue(nest(maxNestingDepth))).toBeNull();
    const found = findUnstorableValue(nest(maxNestingDepth + 1));
    expect(found?.problem).toMatch(/nested deeper/);
    expect(found?.path).toHaveLength(maxNestingDepth);
  });

  it('finds what the recursive walk finds, at the same path', () => {
    fc.assert(
      fc.property(
        fc.letrec((tie) => ({
          value: fc.oneof(
            { depthSize: 'small' },
            leaf,
            fc.array(tie('value'), { maxLength: 4 }),
            fc.dictionary(fc.string({ unit: 'binary', maxLength: 3 }), tie('value'), {
              maxKeys: 4,
            }),
          ),
        })).value,
        (value) => {
          expect(findUnstorableValue(value)).toEqual(reference(value));
        },
      ),
      { numRuns: 500 },
    );
  });
});
