// BlockCollector: heading paths and sections, cleaning, and how blocks read back as one text.
import { describe, expect, it } from 'vitest';
import { BlockCollector } from './blocks.js';

describe('BlockCollector', () => {
  it('keeps the heading path, popping headings of the same or a deeper level', () => {
    const collector = new BlockCollector();
    collector.heading(1, 'Guide');
    collector.heading(2, 'Install');
    collector.heading(3, 'Linux');
    collector.block('prose', 'Run apt.');
    collector.heading(2, 'Use');
    collector.block('prose', 'Run it.');
    expect(collector.blocks.map((block) => [block.headings, block.section])).toEqual([
      [['Guide', 'Install', 'Linux'], 3],
      [['Guide', 'Use'], 4],
    ]);
    expect(collector.firstHeading).toBe('Guide');
  });

  it('gives repeated titles sections of their own', () => {
    const collector = new BlockCollector();
    collector.heading(2, 'Example');
    collector.block('prose', 'One.');
    collector.heading(2, 'Example');
    collector.block('prose', 'Two.');
    expect(collector.blocks.map((block) => block.section)).toEqual([1, 2]);
  });

  it('collapses prose but keeps its line breaks, keeps code verbatim, and skips empty blocks', () => {
    const collector = new BlockCollector();
    collector.block('prose', '  one \t two \n\n three  ');
    collector.block('code', '\n\n  indented();\n    more();  \n\n');
    collector.block('prose', ' \n ');
    collector.heading(1, '  ');
    expect(collector.blocks.map((block) => block.text)).toEqual([
      'one two\nthree',
      '  indented();\n    more();',
    ]);
    expect(collector.firstHeading).toBeNull();
  });

  it('reads back with blank lines between blocks and single breaks inside a list or table', () => {
    const collector = new BlockCollector();
    collector.heading(1, 'Title');
    collector.block('prose', 'Intro.');
    collector.block('item', '- one');
    collector.block('item', '- two');
    collector.endGroup();
    collector.block('item', 'a | b');
    collector.block('prose', 'End.');
    expect(collector.result('Doc')).toMatchObject({
      title: 'Doc',
      text: 'Title\n\nIntro.\n\n- one\n- two\n\na | b\n\nEnd.',
    });
  });
});
