// lexMarkdown: marked's GitHub-flavoured tokens, and nesting no input can turn into a stack overflow.
import { describe, expect, it } from 'vitest';
import { growthExponent, linearExponent } from '../../test/support/growth.js';
import { lexMarkdown, type MarkdownTokens } from './markdown.js';

describe('lexMarkdown', () => {
  it('gives GitHub-flavoured block tokens with their inline tokens', () => {
    const tokens = lexMarkdown('# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done');
    expect(tokens.map((token) => token.type)).toEqual([
      'heading',
      'space',
      'table',
      'space',
      'list',
    ]);
    const heading = tokens[0] as MarkdownTokens.Heading;
    expect(heading.tokens).toMatchObject([{ type: 'text', text: 'Title' }]);
    expect((tokens[4] as MarkdownTokens.List).items[0]).toMatchObject({
      task: true,
      checked: true,
    });
  });

  it('survives thousands of nested quotes and list markers, which overflowed the stack', () => {
    for (const markdown of ['> '.repeat(20_000), '>'.repeat(20_000), '- '.repeat(20_000)]) {
      expect(() => lexMarkdown(`${markdown}deep`)).not.toThrow();
    }
    // Nesting up to the bound is kept as written.
    const quoted = lexMarkdown('> > > three deep');
    const depth = (token: MarkdownTokens.Blockquote | undefined): number =>
      token?.type === 'blockquote' ? 1 + depth(token.tokens[0] as MarkdownTokens.Blockquote) : 0;
    expect(depth(quoted[0] as MarkdownTokens.Blockquote)).toBe(3);
  });

  it('lexes lists nested by indentation thousands deep in linear time', () => {
    // Unbounded, 1,000 levels took seconds (cubic in the depth) and 2,000 overflowed the stack.
    const nested = (levels: number) =>
      Array.from({ length: levels }, (_, level) => `${' '.repeat(2 * level)}- a`).join('\n');
    expect(() => lexMarkdown(nested(2000))).not.toThrow();
    // The text itself grows with the square of the depth (its indentation): linear in its length.
    const lex = (size: number) => lexMarkdown(nested(Math.round(Math.sqrt(size))));
    expect(growthExponent(lex, 500 * 500)).toBeLessThan(linearExponent);
  });
});
