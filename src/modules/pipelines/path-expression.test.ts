import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { forbiddenKeyIn, parsePath, PathSyntaxError, setAt, valueAt } from './path-expression.js';

describe('path expressions', () => {
  it('parses the three roots, nested keys, indexes and bracketed names', () => {
    expect(parsePath('$.input.query')).toEqual({
      text: '$.input.query',
      root: 'input',
      stage: null,
      steps: ['query'],
    });
    expect(parsePath('$.input.a.b')).toMatchObject({ root: 'input', steps: ['a', 'b'] });
    expect(parsePath('$.stages.retrieve.documents[0].text')).toMatchObject({
      root: 'stages',
      stage: 'retrieve',
      steps: ['documents', 0, 'text'],
    });
    expect(parsePath('$.stages["summarize text"].summary')).toMatchObject({
      stage: 'summarize text',
      steps: ['summary'],
    });
    expect(parsePath('$.output.key_points')).toMatchObject({
      root: 'output',
      steps: ['key_points'],
    });
  });

  it.each([
    ['input.query', "must start with '$.'"],
    ['$.inputs.query', "'$.input'"],
    ['$.input', 'name a key'],
    ['$.stages.retrieve', 'name an output key'],
    ['$.stages[0].x', 'a stage name must follow'],
    ['$.input.a..b', "expected a key after '.'"],
    ['$.input.a[x]', 'expected [<index>]'],
    ['$.input.a b', "unexpected ' '"],
    ['$.stages["open.x', 'no closing'],
  ])('refuses %s', (text, reason) => {
    expect(() => parsePath(text)).toThrow(PathSyntaxError);
    expect(() => parsePath(text)).toThrow(reason);
  });

  it('resolves values, and undefined for anything missing', () => {
    const value = { documents: [{ text: 'first', score: 0 }], empty: null, list: [] };
    expect(valueAt(value, ['documents', 0, 'text'])).toBe('first');
    expect(valueAt(value, ['documents', 0, 'score'])).toBe(0);
    expect(valueAt(value, ['empty'])).toBeNull();
    expect(valueAt(value, ['documents', 1, 'text'])).toBeUndefined();
    expect(valueAt(value, ['list', 0])).toBeUndefined();
    expect(valueAt(value, ['documents', 'text'])).toBeUndefined();
    expect(valueAt(value, ['toString'])).toBeUndefined();
  });

  it('sets dotted input names, creating objects on the way', () => {
    const target: Record<string, unknown> = { query: 'q' };
    setAt(target, 'parameters.result_count', 3);
    setAt(target, 'parameters.min_score', 0.5);
    setAt(target, 'urls', ['https://example.org']);
    expect(target).toEqual({
      query: 'q',
      parameters: { result_count: 3, min_score: 0.5 },
      urls: ['https://example.org'],
    });
  });
});

describe('path helpers never reach a prototype', () => {
  /** Keys a client could send: the reserved names, Object.prototype's members, ordinary keys. */
  const key = fc.oneof(
    fc.constantFrom('__proto__', 'constructor', 'prototype'),
    fc.constantFrom(...Object.getOwnPropertyNames(Object.prototype)),
    fc.constantFrom('parameters', 'polluted', 'a', 'query', '0', 'length'),
    fc.string({ minLength: 1, maxLength: 8 }).filter((text) => !text.includes('.')),
  );
  const keys = fc.array(key, { minLength: 1, maxLength: 6 });
  const shapeOf = (target: object) =>
    Reflect.ownKeys(target).map((name) => [name, Object.getOwnPropertyDescriptor(target, name)]);
  const prototypes = [Object.prototype, Array.prototype, Function.prototype];

  function expectPrototypesUnchanged(before: unknown[]): void {
    expect(prototypes.map(shapeOf)).toEqual(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  }

  it('setAt: any dotted name either is refused or sets own properties only', () => {
    const before = prototypes.map(shapeOf);
    fc.assert(
      fc.property(keys, fc.jsonValue(), (path, value) => {
        const target: Record<string, unknown> = { parameters: { kept: 1 } };
        const name = path.join('.');
        const reserved = path.some((step) =>
          ['__proto__', 'constructor', 'prototype'].includes(step),
        );
        if (reserved) {
          expect(() => setAt(target, name, value)).toThrow(PathSyntaxError);
          expect(target).toEqual({ parameters: { kept: 1 } });
        } else {
          setAt(target, name, value);
          // What was set is read back through own properties alone, at the very path.
          expect(valueAt(target, path)).toEqual(value);
          let current: unknown = target;
          for (const step of path.slice(0, -1)) {
            expect(Object.hasOwn(current as object, step)).toBe(true);
            current = (current as Record<string, unknown>)[step];
            expect([Object.prototype, null]).toContain(Object.getPrototypeOf(current));
          }
        }
        expectPrototypesUnchanged(before);
      }),
      { numRuns: 2000 },
    );
  });

  it('parsePath: no key, stage name or bracketed text may be a reserved name', () => {
    const before = prototypes.map(shapeOf);
    const step = fc.oneof(
      key.filter((text) => /^[A-Za-z_][A-Za-z0-9_-]*$/.test(text)).map((text) => `.${text}`),
      key.filter((text) => !text.includes('"')).map((text) => `["${text}"]`),
      fc.nat(20).map((index) => `[${index}]`),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('$.input', '$.stages', '$.output'),
        fc.array(step, { minLength: 1, maxLength: 5 }),
        (root, steps) => {
          const text = root + steps.join('');
          let parsed;
          try {
            parsed = parsePath(text);
          } catch (error) {
            expect(error).toBeInstanceOf(PathSyntaxError);
            return;
          }
          for (const part of [parsed.stage, ...parsed.steps]) {
            expect(['__proto__', 'constructor', 'prototype']).not.toContain(part);
          }
          // Resolving it against anything reads own properties only.
          expect(valueAt({}, parsed.steps)).toBeUndefined();
          expect(valueAt([], parsed.steps)).toBeUndefined();
          expectPrototypesUnchanged(before);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('valueAt never returns an inherited member, whatever the key', () => {
    const source = { a: { b: 1 }, list: [{ c: 2 }] };
    const ownWalk = (path: readonly string[]): unknown => {
      let current: unknown = source;
      for (const step of path) {
        if (current === null || typeof current !== 'object' || Array.isArray(current))
          return undefined;
        if (!Object.hasOwn(current, step)) return undefined;
        current = (current as Record<string, unknown>)[step];
      }
      return current;
    };
    fc.assert(
      fc.property(keys, (path) => {
        const found = valueAt(source, path);
        expect(found).toBe(ownWalk(path));
        expect(typeof found).not.toBe('function');
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses reserved names with a reason, in every written form', () => {
    for (const reserved of ['__proto__', 'constructor', 'prototype']) {
      for (const text of [
        `$.input.${reserved}`,
        `$.input.a.${reserved}.b`,
        `$.input["${reserved}"]`,
        `$.stages.${reserved}.x`,
        `$.stages["${reserved}"].x`,
        `$.stages.first.${reserved}`,
        `$.output.${reserved}`,
      ]) {
        expect(() => parsePath(text), text).toThrow(`'${reserved}' is a reserved name`);
      }
      expect(() => setAt({}, `parameters.${reserved}.polluted`, 'yes')).toThrow(PathSyntaxError);
      expect(forbiddenKeyIn(`parameters.${reserved}.x`)).toBe(reserved);
    }
    expect(forbiddenKeyIn('parameters.result_count')).toBeNull();
  });
});
