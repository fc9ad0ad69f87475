// Plain-text blocks (paragraphs, items, label lines, hard wrapping) and the whitespace tidiers.
import { describe, expect, it } from 'vitest';
import {
  collapseWhitespace,
  normaliseWhitespace,
  plainTextBlocks,
  tidyPlainText,
} from './plain-text.js';

describe('plainTextBlocks', () => {
  it('takes list markers off items and keeps them, and reads # and > lines as prose', () => {
    expect(
      plainTextBlocks(
        '# Report\n- Revenue rose\n* Costs fell\n• Staff grew\n3. Margins improved\n(b) Another\n> Quoted line',
      ),
    ).toEqual([
      { kind: 'prose', marker: '', text: 'Report' },
      { kind: 'item', marker: '-', text: 'Revenue rose' },
      { kind: 'item', marker: '*', text: 'Costs fell' },
      { kind: 'item', marker: '•', text: 'Staff grew' },
      { kind: 'item', marker: '3.', text: 'Margins improved' },
      { kind: 'item', marker: '(b)', text: 'Another' },
      { kind: 'prose', marker: '', text: 'Quoted line' },
    ]);
  });

  it('joins hard-wrapped lines, also inside an item, and ends blocks at blank lines', () => {
    expect(
      plainTextBlocks(
        'The committee met with\nthe mayor on Monday.\r\n\r\n- Bullet two is\n  wrapped here.\n\nLast.',
      ).map((block) => block.text),
    ).toEqual([
      'The committee met with the mayor on Monday.',
      'Bullet two is wrapped here.',
      'Last.',
    ]);
  });

  it('keeps a label line apart from the capitalised line after it', () => {
    expect(plainTextBlocks('Introduction\nThe study examines cities.')).toEqual([
      { kind: 'prose', marker: '', text: 'Introduction' },
      { kind: 'prose', marker: '', text: 'The study examines cities.' },
    ]);
    // A line ending on a word like "the" is wrapped, whatever follows.
    expect(plainTextBlocks('We visited the\nLouvre today.')).toHaveLength(1);
  });

  it('gives nothing for blank text', () => {
    expect(plainTextBlocks(' \n\n\t')).toEqual([]);
  });
});

describe('whitespace', () => {
  it('collapseWhitespace makes one line without zero-width characters', () => {
    expect(collapseWhitespace('  a\u00a0\u00a0b\t\n c\u200b ')).toBe('a b c');
  });

  it('normaliseWhitespace collapses spaces, trims lines and keeps at most one blank line', () => {
    expect(normaliseWhitespace('  a\u00a0\u00a0b\t c \n\n\n\n d\u200b \r\n e ')).toBe(
      'a b c\n\nd\ne',
    );
  });

  it('tidyPlainText keeps indentation and inner spacing, tidying only line ends and blank runs', () => {
    expect(tidyPlainText('\n\n# Notes\r\n\r\n\r\n\r\n- fixed   a bug  \n  - nested\n\n')).toBe(
      '# Notes\n\n- fixed   a bug\n  - nested',
    );
  });
});
