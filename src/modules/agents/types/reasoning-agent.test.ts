// parseReasoningText: a plain-text answer read as steps and a conclusion, for models that ignore the schema.
import { describe, expect, it } from 'vitest';
import { parseReasoningText } from '../../../text/reasoning-text.js';

describe('parseReasoningText', () => {
  it('takes list items and paragraphs as steps and a labelled line as the conclusion', () => {
    expect(
      parseReasoningText(
        '## Working\n\n1. **Givens**: 3 boxes of 4.\n2. Multiply: `3 * 4 = 12`.\n\nFinal answer: 12 apples.',
      ),
    ).toEqual({
      steps: ['Working', 'Givens: 3 boxes of 4.', 'Multiply: 3 * 4 = 12.'],
      conclusion: '12 apples.',
    });
  });

  it('splits a single paragraph into sentences, keeping "Therefore …" whole', () => {
    expect(
      parseReasoningText('Each box holds 4. There are 3 boxes. Therefore, there are 12 apples.'),
    ).toEqual({
      steps: ['Each box holds 4.', 'There are 3 boxes.'],
      conclusion: 'Therefore, there are 12 apples.',
    });
  });

  it('takes the text after a lone "Conclusion:" line, and the last unit when nothing is labelled', () => {
    expect(parseReasoningText('Step one.\n\nStep two.\n\nConclusion:\n\nIt works.')).toEqual({
      steps: ['Step one.', 'Step two.'],
      conclusion: 'It works.',
    });
    expect(parseReasoningText('- add 2 and 2\n- get 4')).toEqual({
      steps: ['add 2 and 2'],
      conclusion: 'get 4',
    });
  });

  it('gives a one-sentence answer as the conclusion with no steps', () => {
    expect(parseReasoningText('  4  ')).toEqual({ steps: [], conclusion: '4' });
    expect(parseReasoningText('')).toEqual({ steps: [], conclusion: '' });
  });
});
