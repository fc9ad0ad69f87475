// Tests for extractive summarisation: the article's central sentences win, in text order, deterministically.
import { describe, expect, it } from 'vitest';
import { splitSentences } from './sentences.js';
import {
  SummarizationInputError,
  maxSentencesConsidered,
  pageRank,
  similarityMatrix,
  stem,
  summarize,
  tokenize,
} from './textrank.js';

// Written so that the story (the council approves a battery storage project for the power grid)
// runs through some sentences, while others are colour that shares little with the rest.
const article = [
  /* 0 */ "The Riverside city council approved a large battery storage project on Tuesday to keep the city's power grid stable during summer heat waves.",
  /* 1 */ 'The battery storage project will store solar power during the day and release it to the grid in the evening, when demand on the power grid peaks.',
  /* 2 */ 'Council members voted seven to two after a long public hearing.',
  /* 3 */ "The mayor's golden retriever, Biscuit, slept under the podium for most of the evening.",
  /* 4 */ 'Engineers from the city utility said the batteries can power forty thousand homes for four hours if the grid fails.',
  /* 5 */ 'The utility expects the battery storage project to cut evening power prices for every household in the city.',
  /* 6 */ 'Construction of the storage site near the old rail yard begins in March.',
  /* 7 */ 'A local bakery donated cinnamon rolls to everyone who attended the hearing.',
  /* 8 */ 'Two residents worried about fire safety at the battery site and asked for regular inspections.',
  /* 9 */ 'The fire chief said modern lithium batteries are monitored around the clock and that the site will have its own water supply.',
  /* 10 */ 'State grants will pay for half of the project, and the city will borrow the rest.',
  /* 11 */ 'Critics argued that the money should go to bus routes and road repairs instead.',
  /* 12 */ 'Supporters replied that a stable power grid protects hospitals, schools and businesses across the city.',
  /* 13 */ 'Last summer, a heat wave overloaded the grid and left parts of the city without power for two days.',
  /* 14 */ 'The new battery storage will let the utility respond to such heat waves within seconds instead of hours.',
  /* 15 */ 'The hearing ran past midnight, and the lights in the council chamber flickered twice.',
  /* 16 */ 'Several students from the high school robotics club presented a model of the site.',
  /* 17 */ 'Parking near city hall was scarce because of a farmers market on the same street.',
  /* 18 */ 'The utility will publish monthly reports on how much power the battery storage project delivers to the grid.',
  /* 19 */ 'If the project succeeds, the council plans a second battery storage site on the east side of the city by 2028.',
];
const articleText = `${article.slice(0, 10).join(' ')}\n\n${article.slice(10).join(' ')}`;
const central = new Set([0, 1, 4, 5, 12, 13, 14, 18, 19]);
const anecdotes = [2, 3, 7, 11, 15, 16, 17];

function errorOf(action: () => unknown): SummarizationInputError {
  try {
    action();
  } catch (error) {
    if (error instanceof SummarizationInputError) return error;
    throw error;
  }
  throw new Error('expected a SummarizationInputError');
}

describe('summarize on an article', () => {
  it('reads the article as its 20 sentences', () => {
    expect(splitSentences(articleText)).toEqual(article);
  });

  it('picks central sentences, the lead first among them', () => {
    const result = summarize(articleText, { sentences: 5 });
    const chosen = result.sentences.map((sentence) => sentence.index);
    expect(chosen).toHaveLength(5);
    for (const index of chosen) expect(central.has(index)).toBe(true);
    expect(chosen).toContain(0);
    expect(result.keyPoints[0]).toBe(article[0]);
  });

  it('leaves the anecdotes out of even a ten-sentence summary', () => {
    const chosen = summarize(articleText, { sentences: 10 }).sentences.map(
      (sentence) => sentence.index,
    );
    for (const index of anecdotes) expect(chosen).not.toContain(index);
  });

  it('keeps the text order in the summary, and ranks the key points', () => {
    const result = summarize(articleText, { sentences: 4 });
    const indexes = result.sentences.map((sentence) => sentence.index);
    expect(indexes).toEqual([...indexes].sort((left, right) => left - right));
    expect(result.summary).toBe(indexes.map((index) => article[index]).join(' '));
    expect(result.sentences.map((sentence) => sentence.text)).toEqual(
      indexes.map((index) => article[index]),
    );
    const everySentence = summarize(articleText, { sentences: 20 }).sentences;
    const keyPointScores = result.keyPoints.map(
      (point) => everySentence[article.indexOf(point)]?.score ?? Number.NaN,
    );

    expect(keyPointScores).toEqual(
      [...keyPointScores].sort((left, right) => (right ?? 0) - (left ?? 0)),
    );
  });

  it('scores relative to the most central sentence', () => {
    const result = summarize(articleText, { sentences: 3 });
    expect(result.sentences.find((sentence) => sentence.index === 0)?.score).toBe(1);
    for (const sentence of result.sentences) {
      expect(sentence.score).toBeGreaterThan(0);
      expect(sentence.score).toBeLessThanOrEqual(1);
    }
  });

  it('labels the result as extractive and counts the sentences', () => {
    const result = summarize(articleText);
    expect(result.method).toBe('extractive-textrank');
    expect(result.sentenceCount).toBe(20);
    expect(result.truncated).toBe(false);
  });

  it('is deterministic', () => {
    const first = summarize(articleText, { sentences: 5 });
    for (let run = 0; run < 3; run += 1) {
      expect(summarize(articleText, { sentences: 5 })).toEqual(first);
    }
  });

  it('sizes the summary by count, by ratio, or a fifth of the text by default', () => {
    expect(summarize(articleText, { sentences: 2 }).sentences).toHaveLength(2);
    expect(summarize(articleText, { ratio: 0.25 }).sentences).toHaveLength(5);
    expect(summarize(articleText, { ratio: 0.01 }).sentences).toHaveLength(1);
    expect(summarize(articleText).sentences).toHaveLength(4);
    expect(summarize(articleText, { sentences: 50 }).sentences).toHaveLength(20);
  });

  it('gives up to 20 key points by default and as many as asked', () => {
    expect(summarize(articleText).keyPoints).toHaveLength(20);
    expect(summarize(articleText, { keyPoints: 3 }).keyPoints).toEqual(
      summarize(articleText).keyPoints.slice(0, 3),
    );
  });
});

describe('summarize on awkward input', () => {
  it('refuses empty text', () => {
    const error = errorOf(() => summarize('   \n\t '));
    expect(error.message).toBe('text: there is no text to summarise');
    expect(error.param).toBe('text');
    expect(error.code).toBe('invalid_parameter');
    expect(errorOf(() => summarize('')).message).toBe('text: there is no text to summarise');
  });

  it('refuses options it cannot honour', () => {
    expect(errorOf(() => summarize('A b c.', { sentences: 2, ratio: 0.5 })).message).toBe(
      "sentences: give 'sentences' or 'ratio', not both",
    );
    expect(errorOf(() => summarize('A b c.', { sentences: 0 })).message).toBe(
      'sentences: must be a whole number of at least 1, got 0',
    );
    expect(errorOf(() => summarize('A b c.', { sentences: 1.5 })).message).toBe(
      'sentences: must be a whole number of at least 1, got 1.5',
    );
    expect(errorOf(() => summarize('A b c.', { ratio: 0 })).message).toBe(
      'ratio: must be more than 0 and at most 1, got 0',
    );
    expect(errorOf(() => summarize('A b c.', { ratio: 1.5 })).message).toBe(
      'ratio: must be more than 0 and at most 1, got 1.5',
    );
    expect(errorOf(() => summarize('A b c.', { keyPoints: 0 })).message).toBe(
      'keyPoints: must be a whole number of at least 1, got 0',
    );
  });

  it('summarises one sentence as itself', () => {
    expect(summarize('The council approved the project.')).toEqual({
      method: 'extractive-textrank',
      summary: 'The council approved the project.',
      sentences: [{ text: 'The council approved the project.', score: 1, index: 0 }],
      keyPoints: ['The council approved the project.'],
      sentenceCount: 1,
      truncated: false,
    });
  });

  it('takes the first of two equally central sentences', () => {
    const result = summarize(
      'The council approved the plan. The plan was approved by the council.',
    );
    expect(result.summary).toBe('The council approved the plan.');
    expect(result.sentences[0]?.score).toBe(1);
  });

  it('leaves headings and fragments out of the summary and the key points', () => {
    const text = `Battery storage\n\n${article.slice(0, 6).join(' ')}`;
    const result = summarize(text, { sentences: 3 });
    expect(result.sentenceCount).toBe(7);
    expect(result.sentences.map((sentence) => sentence.index)).not.toContain(0);
    expect(result.keyPoints).not.toContain('Battery storage');
    expect(summarize('Yes. Done.').summary).toBe('Yes.');
  });

  it('does not repeat a sentence the text repeats', () => {
    const text = [...article.slice(0, 6), article[0], ...article.slice(6)].join(' ');
    const result = summarize(text, { sentences: 5 });
    expect(result.keyPoints.filter((point) => point === article[0])).toHaveLength(1);
    expect(result.sentences.filter((sentence) => sentence.text === article[0])).toHaveLength(1);
    expect(new Set(result.keyPoints).size).toBe(result.keyPoints.length);
  });

  it('keeps key points on one line each, ready for bullets', () => {
    const result = summarize(
      '- The grid needs storage\n  for hot evenings.\n- Batteries store power for the grid.',
    );
    expect(result.keyPoints).toEqual([
      'The grid needs storage for hot evenings.',
      'Batteries store power for the grid.',
    ]);
  });

  it('summarises Japanese text and joins its sentences without spaces', () => {
    const text =
      '市議会は大型の蓄電池計画を承認した。蓄電池は夏の電力網を安定させる。猫が会場で寝ていた。蓄電池計画の費用は州が半分を負担する。';
    const result = summarize(text, { sentences: 2 });
    expect(result.sentenceCount).toBe(4);
    expect(result.sentences.map((sentence) => sentence.index)).not.toContain(2);
    expect(result.summary).not.toContain(' ');
  });

  it('ranks only the first sentences of a very long text, and says so', () => {
    const vocabulary =
      'grid battery power storage council city project utility solar demand heat evening price site hearing'.split(
        ' ',
      );
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    const sentences = Array.from({ length: 3000 }, () => {
      const words = Array.from({ length: 12 }, () => vocabulary[next() % vocabulary.length]);
      return `${words.join(' ')}.`.replace(/^./, (first) => first.toUpperCase());
    });
    const result = summarize(sentences.join(' '), { sentences: 3 });
    expect(result.sentenceCount).toBe(3000);
    expect(result.truncated).toBe(true);
    expect(result.sentences).toHaveLength(3);
    for (const sentence of result.sentences) {
      expect(sentence.index).toBeLessThan(maxSentencesConsidered);
    }
  });
});

describe('tokenize and stem', () => {
  it('drops stop words, possessives and case, and stems lightly', () => {
    expect(tokenize("The city's batteries are storing power for the grid.")).toEqual([
      'city',
      'battery',
      'stor',
      'power',
      'grid',
    ]);
  });

  it('brings a word family together without joining short words', () => {
    expect(new Set(['store', 'stored', 'storing', 'stores'].map(stem))).toEqual(new Set(['stor']));
    expect(new Set(['battery', 'batteries'].map(stem))).toEqual(new Set(['battery']));
    expect(new Set(['stop', 'stopped', 'stopping'].map(stem))).toEqual(new Set(['stop']));
    expect(stem('fall')).toBe('fall');
    expect(stem('falling')).toBe('fall');
    expect(stem('analysis')).toBe('analysis');
    expect(stem('status')).toBe('status');
    expect(stem('gas')).toBe('gas');
    expect(stem('2024s')).toBe('2024s');
  });

  it('turns runs of CJK characters into character pairs', () => {
    expect(tokenize('蓄電池')).toEqual(['蓄電', '電池']);
    expect(tokenize('猫')).toEqual(['猫']);
  });
});

describe('similarityMatrix and pageRank', () => {
  it('is 1 for the same terms, 0 for none shared, and symmetric', () => {
    const matrix = similarityMatrix([
      ['grid', 'power'],
      ['grid', 'power'],
      ['cat', 'nap'],
      ['grid', 'cat'],
    ]);
    const at = (row: number, column: number) => matrix[row * 4 + column] ?? Number.NaN;
    expect(at(0, 1)).toBeCloseTo(1, 12);
    expect(at(0, 2)).toBe(0);
    expect(at(0, 0)).toBe(0);
    for (let row = 0; row < 4; row += 1) {
      for (let column = 0; column < 4; column += 1) expect(at(row, column)).toBe(at(column, row));
    }
    expect(at(0, 3)).toBeGreaterThan(0);
    expect(at(0, 3)).toBeLessThan(1);
  });

  it('weighs a rare shared term above one most sentences share', () => {
    const matrix = similarityMatrix([
      ['grid', 'power'],
      ['grid', 'cat'],
      ['grid', 'dog'],
      ['power', 'fox'],
    ]);
    const viaCommonTerm = matrix[0 * 4 + 1] ?? Number.NaN;
    const viaRareTerm = matrix[0 * 4 + 3] ?? Number.NaN;
    expect(viaRareTerm).toBeGreaterThan(viaCommonTerm);
  });

  it('gives a hub the highest score and keeps a distribution', () => {
    // Sentence 0 shares a term with each of the others, which share nothing among themselves.
    const tokens = [['a', 'b', 'c'], ['a', 'x'], ['b', 'y'], ['c', 'z'], ['lonely']];
    const scores = pageRank(similarityMatrix(tokens), tokens.length);
    const values = [...scores];
    expect(values.reduce((sum, value) => sum + value, 0)).toBeCloseTo(1, 9);
    expect(Math.max(...values)).toBe(values[0]);
    expect(values[4]).toBe(Math.min(...values));
  });

  it('handles no sentence and one sentence', () => {
    expect([...pageRank(new Float64Array(0), 0)]).toEqual([]);
    expect([...pageRank(new Float64Array(1), 1)]).toEqual([1]);
  });
});
