import fc from 'fast-check';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { findPoisonedKey } from './safe-keys.js';

// The parser of bodies up to 1 MiB (src/http/input-safety.ts): whether it refuses a text is the
// rule `findPoisonedKey` must match, so that large bodies (parsed in a text thread) obey it too.
const app = Fastify();
const inlineParser = app.getDefaultJsonParser('error', 'error');

function inlineRefuses(text: string): boolean {
  let refused = false;
  void inlineParser({} as never, text, (error) => {
    refused = error !== null;
  });
  return refused;
}

/** A JSON value as a tree whose object keys may be any text, `__proto__` included. */
type Tree = null | number | string | Tree[] | { entries: Array<[string, Tree]> };

function toText(tree: Tree): string {
  if (Array.isArray(tree)) return `[${tree.map(toText).join(',')}]`;
  if (tree !== null && typeof tree === 'object') {
    return `{${tree.entries.map(([key, value]) => `${JSON.stringify(key)}:${toText(value)}`).join(',')}}`;
  }
  return JSON.stringify(tree);
}

const poisonedKeyOf = (text: string) => findPoisonedKey(JSON.parse(text) as unknown);

describe('findPoisonedKey', () => {
  it('names the first __proto__ key, or constructor holding prototype, and nothing else', () => {
    expect(poisonedKeyOf('{"a":{"prototype":1},"metadata":{"__proto__":{"x":1}}}')).toEqual({
      param: 'metadata.__proto__',
      key: '__proto__',
    });
    expect(poisonedKeyOf('{"a":[{"constructor":{"prototype":{}}}]}')).toEqual({
      param: 'a[0].constructor',
      key: 'constructor',
    });
    expect(poisonedKeyOf('{"\\u005f_proto__":1}')?.param).toBe('__proto__');
    for (const harmless of [
      '{"prototype":{"constructor":1}}',
      '{"constructor":"x"}',
      '{"constructor":{"name":"x"}}',
      '{"constructor":[{"prototype":1}]}',
      '[{"prototype":1},"__proto__"]',
    ]) {
      expect(poisonedKeyOf(harmless), harmless).toBeNull();
      expect(inlineRefuses(harmless), harmless).toBe(false);
    }
  });

  it('finds a key exactly when the inline body parser refuses the text', () => {
    const key = fc.constantFrom('a', 'b', '__proto__', 'constructor', 'prototype', 'name');
    const tree = fc.letrec<{ value: Tree }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom<Tree>(null, 1, 'prototype', '__proto__'),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.record({
          entries: fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }),
        }),
      ),
    })).value;
    fc.assert(
      fc.property(tree, (value) => {
        const text = toText(value);
        expect(poisonedKeyOf(text) !== null, text).toBe(inlineRefuses(text));
      }),
      { numRuns: 2000 },
    );
  });
});
