import { describe, expect, it } from 'vitest';
import { parseOutput, transcriptionOf } from './pocketsphinx-utterance.js';

// pocketsphinx_continuous -time yes on two utterances with a pause between them (its real output).
const output = [
  'one two three',
  '<s> 0.000 0.020 0.999600',
  'one 0.030 0.240 0.500000',
  'two 0.250 0.430 0.600000',
  '<sil> 0.440 0.460 0.732028',
  'three 0.470 0.670 0.700000',
  '</s> 0.690 0.990 1.000000',
  'six and',
  '<s> 4.900 5.020 1.000100',
  'six 5.030 5.230 0.800000',
  'and(2) 6.650 6.780 1.000000',
  '</s> 7.710 8.010 1.000000',
  '',
].join('\n');

describe('PocketSphinx output', () => {
  it('reads each utterance as a segment with its words’ times, fillers and variants left out', () => {
    const transcription = transcriptionOf(parseOutput(output));
    expect(transcription.text).toBe('one two three six and');
    expect(transcription.confidence).toBeCloseTo((0.5 + 0.6 + 0.7 + 0.8 + 1) / 5, 6);
    expect(transcription.segments).toEqual([
      {
        text: 'one two three',
        start: 0,
        end: 0.99,
        confidence: expect.closeTo(0.6, 6) as number,
        words: [
          { word: 'one', start: 0.03, end: 0.24 },
          { word: 'two', start: 0.25, end: 0.43 },
          { word: 'three', start: 0.47, end: 0.67 },
        ],
      },
      {
        text: 'six and',
        start: 4.9,
        end: 8.01,
        confidence: 0.9,
        words: [
          { word: 'six', start: 5.03, end: 5.23 },
          { word: 'and', start: 6.65, end: 6.78 },
        ],
      },
    ]);
  });

  it('reads only whole lines of an output still arriving', () => {
    const partial = transcriptionOf(
      parseOutput('hello world\n<s> 0.000 0.020 0.9\nhello 0.030 0.4'),
    );
    expect(partial.text).toBe('hello world');
    expect(partial.segments).toEqual([
      { text: 'hello world', start: 0, end: 0, words: [], confidence: null },
    ]);
    expect(transcriptionOf(parseOutput('')).segments).toEqual([]);
  });
});
