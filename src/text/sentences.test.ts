// The sentence splitter on real-prose traps: abbreviations, numbers, quotes, lists, CJK and other scripts.
import { describe, expect, it } from 'vitest';
import { growthExponent, linearExponent } from '../../test/support/growth.js';
import { sentencePieces, splitSentences } from './sentences.js';

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

const texts = (pieces: { text: string }[]) => pieces.map((piece) => piece.text);

// The knowledge chunker and the summariser each had a splitter; these are the cases they split
// differently, with the answer the toolkit gives.
describe('where the two former splitters disagreed', () => {
  it.each([
    [
      'She moved to the U.K. Then she studied law.',
      ['She moved to the U.K.', 'Then she studied law.'],
    ],
    ['Smith et al. They agreed.', ['Smith et al.', 'They agreed.']],
    ['We meet at 9 a.m. The room is booked.', ['We meet at 9 a.m.', 'The room is booked.']],
    ['Apple Inc. The company grew.', ['Apple Inc.', 'The company grew.']],
    ['Main St. The store is there.', ['Main St.', 'The store is there.']],
    ['Apple Inc. Chief executives met.', ['Apple Inc. Chief executives met.']],
    ['Steps: 1. Open the app. 2. Sign in.', ['Steps: 1. Open the app.', '2. Sign in.']],
    [
      'Er sagte: „Das ist z. B. gut.“ Dann ging er.',
      ['Er sagte: „Das ist z. B. gut.“', 'Dann ging er.'],
    ],
  ])('%s', (text, expected) => {
    expect(texts(sentencePieces(text))).toEqual(expected);
  });
});

describe('sentencePieces', () => {
  it('ends sentences at . ! ? … before a capital, a digit or a quote', () => {
    expect(
      texts(sentencePieces('It works! Really? Yes. "Quoted." 42 is the answer… Done')),
    ).toEqual(['It works!', 'Really?', 'Yes.', '"Quoted."', '42 is the answer…', 'Done']);
  });

  it('keeps abbreviations, initials, dotted initialisms and numbers before their word', () => {
    expect(
      texts(
        sentencePieces(
          'Use a tool, e.g. Python, i.e. Something dynamic. Ask Dr. Smith and Prof. Jones. J. R. R. Tolkien wrote. See Fig. 3 and No. 5 vs. Apple.',
        ),
      ),
    ).toEqual([
      'Use a tool, e.g. Python, i.e. Something dynamic.',
      'Ask Dr. Smith and Prof. Jones.',
      'J. R. R. Tolkien wrote.',
      'See Fig. 3 and No. 5 vs. Apple.',
    ]);
  });

  it('keeps the number of a numbered item with its text', () => {
    expect(texts(sentencePieces('1. Download the package. 2. Install it.'))).toEqual([
      '1. Download the package.',
      '2. Install it.',
    ]);
  });

  it('gives CJK sentences no separator and others a space', () => {
    const pieces = sentencePieces('東京は晴れです。大阪は「雨」です！本当？ Yes, really.');
    expect(pieces).toEqual([
      { text: '東京は晴れです。', separator: '' },
      { text: '大阪は「雨」です！', separator: '' },
      { text: '本当？', separator: '' },
      { text: 'Yes, really.', separator: ' ' },
    ]);
  });

  it("splits at other scripts' terminators, which Unicode knows and the rules above do not", () => {
    expect(texts(sentencePieces('नमस्ते। आप कैसे हैं? मैं ठीक हूँ।'))).toEqual([
      'नमस्ते।',
      'आप कैसे हैं?',
      'मैं ठीक हूँ।',
    ]);
    expect(texts(sentencePieces('مرحبا. كيف حالك؟ أنا بخير.'))).toEqual([
      'مرحبا.',
      'كيف حالك؟',
      'أنا بخير.',
    ]);
    // Boundaries ICU finds are judged by the same rules: "Dr." does not end a sentence.
    expect(texts(sentencePieces('Dr. Smith ने कहा। Then he left.'))).toEqual([
      'Dr. Smith ने कहा।',
      'Then he left.',
    ]);
    expect(texts(sentencePieces('Привет. Как дела? Хорошо!'))).toEqual([
      'Привет.',
      'Как дела?',
      'Хорошо!',
    ]);
  });

  it('collapses whitespace and returns nothing for blank text', () => {
    expect(texts(sentencePieces('  One.\n\n  Two.  '))).toEqual(['One.', 'Two.']);
    expect(sentencePieces('   ')).toEqual([]);
  });

  it('takes time linear in the length of the text', () => {
    // ICU alone took 20 s on a megabyte of prose and minutes on Japanese.
    const prose = (repeats: number) =>
      sentencePieces('This is one, e.g. of many. Another follows it! '.repeat(repeats));
    const japanese = (repeats: number) => sentencePieces('東京は日本の首都です。'.repeat(repeats));
    expect(prose(20_000)).toHaveLength(40_000);
    expect(japanese(50_000)).toHaveLength(50_000);
    expect(growthExponent(prose, 4_000)).toBeLessThan(linearExponent);
    expect(growthExponent(japanese, 20_000)).toBeLessThan(linearExponent);
  });
});
