// Markdown to text through marked's tokens: headings, inline marks, lists, tables, code, HTML, entities.
import { describe, expect, it } from 'vitest';
import { markdownTitle, markdownToText } from './markdown-text.js';

const blocks = (markdown: string) =>
  markdownToText(markdown).blocks.map((block) => [block.kind, block.text]);

describe('markdownToText', () => {
  it('drops emphasis, code and link marks, keeping link and image text', () => {
    expect(
      blocks(
        'Some **bold**, _em_, ~~gone~~, `a*b*c`, [a link](https://example.com), ![a chart](c.png), <https://x.example> and \\*stars\\*.',
      ),
    ).toEqual([
      ['prose', 'Some bold, em, gone, a*b*c, a link, a chart, https://x.example and *stars*.'],
    ]);
  });

  it('decodes entities with their semicolon (CommonMark), not in code, and leaves AT&T alone', () => {
    expect(blocks('Q &amp; A &copy; &#x2014; AT&T &notanentity `&amp;`')).toEqual([
      ['prose', 'Q & A © — AT&T &notanentity &amp;'],
    ]);
  });

  it('reads inline HTML as text and HTML blocks with the HTML walker', () => {
    expect(
      blocks('A <b>bold</b> word.\n\n<div><p>Block &amp; more</p><script>x()</script></div>'),
    ).toEqual([
      ['prose', 'A bold word.'],
      ['prose', 'Block & more'],
    ]);
  });

  it('numbers ordered items from their start, nests lists, and keeps task boxes', () => {
    const extracted = markdownToText(
      '3. three\n4. four\n   - nested\n     more\n\n- [x] done\n- [ ] open\n\nAfter.',
    );
    expect(extracted.blocks.map((block) => [block.kind, block.text])).toEqual([
      ['item', '3. three'],
      ['item', '4. four'],
      ['item', '- nested more'],
      ['item', '- [x] done'],
      ['item', '- [ ] open'],
      ['prose', 'After.'],
    ]);
    expect(extracted.text).toBe(
      '3. three\n4. four\n- nested more\n\n- [x] done\n- [ ] open\n\nAfter.',
    );
  });

  it('keeps code inside a list item as code', () => {
    expect(blocks('- Install:\n\n  ```\n  npm i\n  ```\n- Done')).toEqual([
      ['item', '- Install:'],
      ['code', 'npm i'],
      ['item', '- Done'],
    ]);
  });

  it('gives a table one item per row, header included', () => {
    expect(blocks('| Name | *Age* |\n|---|--:|\n| Ann | 31 |\n| Bo | |')).toEqual([
      ['item', 'Name | Age'],
      ['item', 'Ann | 31'],
      ['item', 'Bo'],
    ]);
  });

  it('reads setext headings and blockquotes, and skips front matter, rules and definitions', () => {
    const extracted = markdownToText(
      '---\ntitle: ignored\n---\nTitle\n=====\n\n> Quoted.\n\n***\n\n[ref]: https://example.com\n\nSub\n---\nText.',
    );
    expect(extracted.title).toBe('Title');
    expect(extracted.blocks.map((block) => [block.headings.join(' > '), block.text])).toEqual([
      ['Title', 'Quoted.'],
      ['Title > Sub', 'Text.'],
    ]);
  });

  it('reads front matter only at the very start', () => {
    expect(blocks('Intro.\n\n---\n\nkey: value\n\n---')[0]).toEqual(['prose', 'Intro.']);
  });
});

describe('markdownTitle', () => {
  it('is the first heading without its marks, else null', () => {
    expect(markdownTitle('Intro\n\n## The *real* title ##\n\n# Later')).toBe('The real title');
    expect(markdownTitle('No heading here.')).toBeNull();
  });
});
