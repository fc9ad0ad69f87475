import { describe, expect, it } from 'vitest';
import { parsePath, PathSyntaxError, setAt, valueAt } from './path-expression.js';

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
