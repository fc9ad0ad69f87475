// Tests for the sentence splitter on real-prose traps: abbreviations, numbers, quotes, lists and CJK.
import { describe, expect, it } from 'vitest';
import { splitSentences } from './sentences.js';

describe('splitSentences', () => {
  it('splits at full stops, question and exclamation marks', () => {
    expect(splitSentences('It rained. Did it stop? Not yet! We waited.')).toEqual([
      'It rained.',
      'Did it stop?',
      'Not yet!',
      'We waited.',
    ]);
  });

  it('keeps titles and Latin abbreviations inside the sentence', () => {
    expect(splitSentences('Dr. Smith met Mr. and Mrs. Jones. They talked.')).toEqual([
      'Dr. Smith met Mr. and Mrs. Jones.',
      'They talked.',
    ]);
    expect(splitSentences('Fruit, e.g. apples, is healthy. So is rest, i.e. sleep.')).toEqual([
      'Fruit, e.g. apples, is healthy.',
      'So is rest, i.e. sleep.',
    ]);
    expect(splitSentences('Smith et al. found the same. They agreed.')).toEqual([
      'Smith et al. found the same.',
      'They agreed.',
    ]);
  });

  it('reads U.S.-style initialisms as a boundary only before a sentence opener', () => {
    expect(splitSentences('The U.S. economy grew. Growth was broad.')).toEqual([
      'The U.S. economy grew.',
      'Growth was broad.',
    ]);
    expect(splitSentences('She moved to the U.S. Then she studied law.')).toEqual([
      'She moved to the U.S.',
      'Then she studied law.',
    ]);
    expect(splitSentences('J. R. R. Tolkien wrote books. He was British.')).toEqual([
      'J. R. R. Tolkien wrote books.',
      'He was British.',
    ]);
    expect(splitSentences('We meet at 9 a.m. The room is booked.')).toEqual([
      'We meet at 9 a.m.',
      'The room is booked.',
    ]);
  });

  it('keeps decimals, versions, prices and addresses whole', () => {
    expect(
      splitSentences('Version 2.0 shipped in 2023. It costs $3.50 at example.com now.'),
    ).toEqual(['Version 2.0 shipped in 2023.', 'It costs $3.50 at example.com now.']);
    expect(splitSentences('Growth was 3.5% in Q2. Inflation was 2.1%.')).toEqual([
      'Growth was 3.5% in Q2.',
      'Inflation was 2.1%.',
    ]);
  });

  it('keeps abbreviations that precede numbers', () => {
    expect(
      splitSentences('No. 10 is famous. Prices rose (see Fig. 3). Born Jan. 5, he left.'),
    ).toEqual(['No. 10 is famous.', 'Prices rose (see Fig. 3).', 'Born Jan. 5, he left.']);
  });

  it('ends a sentence at an ellipsis only when a new sentence follows', () => {
    expect(splitSentences('Wait... what happened? He paused… Then he spoke. And so on...')).toEqual(
      ['Wait... what happened?', 'He paused…', 'Then he spoke.', 'And so on...'],
    );
  });

  it('keeps closing quotes with their sentence and quoted questions inside the sentence', () => {
    expect(splitSentences('He said, "It works." Then he left.')).toEqual([
      'He said, "It works."',
      'Then he left.',
    ]);
    expect(splitSentences('"Really?" she asked. “Yes.” He nodded.')).toEqual([
      '"Really?" she asked.',
      '“Yes.”',
      'He nodded.',
    ]);
    expect(splitSentences('Really?! Yes.')).toEqual(['Really?!', 'Yes.']);
  });

  it('treats list items, headings and blank lines as boundaries, without their markers', () => {
    const text = [
      '# Quarterly report',
      'Key facts:',
      '- Revenue rose 12%',
      '* Costs fell',
      '1. Margins improved',
      '2) Staff grew',
      '',
      'Next steps follow',
      '',
      'The board meets in May.',
    ].join('\n');
    expect(splitSentences(text)).toEqual([
      'Quarterly report',
      'Key facts:',
      'Revenue rose 12%',
      'Costs fell',
      'Margins improved',
      'Staff grew',
      'Next steps follow',
      'The board meets in May.',
    ]);
  });

  it('joins hard-wrapped lines and splits a label line from the paragraph', () => {
    expect(
      splitSentences('The committee met with\nthe mayor on Monday. It\nagreed to the plan.'),
    ).toEqual(['The committee met with the mayor on Monday.', 'It agreed to the plan.']);
    expect(splitSentences('Introduction\nThe study examines cities.')).toEqual([
      'Introduction',
      'The study examines cities.',
    ]);
    expect(splitSentences('- Bullet two is\n  wrapped here.\r\n- Next one.')).toEqual([
      'Bullet two is wrapped here.',
      'Next one.',
    ]);
    expect(splitSentences('We met Dr.\nSmith today.')).toEqual(['We met Dr. Smith today.']);
  });

  it('does not take numbered steps inside a sentence for ends', () => {
    expect(
      splitSentences('Steps: 1. Open the app. 2. Sign in. He scored 12. Then he left.'),
    ).toEqual(['Steps: 1. Open the app.', '2. Sign in.', 'He scored 12.', 'Then he left.']);
  });

  it('splits Chinese and Japanese at full-width stops, with closing brackets kept', () => {
    expect(splitSentences('今日は晴れです。明日は雨でしょう！本当ですか？')).toEqual([
      '今日は晴れです。',
      '明日は雨でしょう！',
      '本当ですか？',
    ]);
    expect(splitSentences('他说：“好。”然后走了。')).toEqual(['他说：“好。”', '然后走了。']);
  });

  it('collapses whitespace inside a sentence and keeps text without final punctuation', () => {
    expect(splitSentences('  Hello \t  world  ')).toEqual(['Hello world']);
    expect(splitSentences('')).toEqual([]);
    expect(splitSentences(' \n\n ')).toEqual([]);
  });
});
