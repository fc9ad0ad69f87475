import { describe, expect, it } from 'vitest';
import { SentenceStream } from './sentence-stream.js';

describe('SentenceStream', () => {
  it('releases a sentence once the next one starts, and the rest at the end', () => {
    const stream = new SentenceStream();
    expect(stream.push('Hello there')).toEqual([]);
    expect(stream.push('. How are')).toEqual(['Hello there.']);
    expect(stream.push(' you? I am fine')).toEqual(['How are you?']);
    expect(stream.flush()).toEqual(['I am fine']);
    expect(stream.flush()).toEqual([]);
  });

  it('keeps the space a piece ended on, and reads abbreviations and list items as the toolkit does', () => {
    const stream = new SentenceStream();
    expect(stream.push('Dr. Smith arrived. Then ')).toEqual(['Dr. Smith arrived.']);
    expect(stream.push('he left.\n\n- First item')).toEqual(['Then he left.']);
    expect(stream.flush()).toEqual(['First item']);
  });

  it('does not split inside numbers', () => {
    const stream = new SentenceStream();
    expect(stream.push('It costs 3.50 dollars. ')).toEqual([]);
    expect(stream.push('Next')).toEqual(['It costs 3.50 dollars.']);
  });
});
