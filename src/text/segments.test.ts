// Windowed Unicode segmentation: the same segments as one pass, in linear time; safe cut positions.
import { describe, expect, it } from 'vitest';
import { growthExponent, linearExponent } from '../../test/support/growth.js';
import { codePointBoundary, windowedSegments } from './segments.js';

const words = new Intl.Segmenter('und', { granularity: 'word' });

describe('windowedSegments', () => {
  it('gives the segments of one pass, with their positions, across window edges', () => {
    const text = 'Tokyo 東京は日本の首都です and more words. '.repeat(20);
    const whole = Array.from(words.segment(text), ({ segment, index }) => ({ segment, index }));
    expect(Array.from(windowedSegments(words, text, 16))).toEqual(whole);
  });

  it('never cuts a surrogate pair at a window edge', () => {
    const text = '😀'.repeat(50);
    const segments = Array.from(windowedSegments(words, text, 7), ({ segment }) => segment);
    expect(segments.join('')).toBe(text);
    expect(segments.every((segment) => !/[\ud800-\udbff]$/.test(segment))).toBe(true);
  });

  it('segments a long CJK run in linear time', () => {
    const segment = (repeats: number) => {
      let count = 0;
      for (const _ of windowedSegments(words, '東京は日本の首都です'.repeat(repeats), 4096))
        count += 1;
      return count;
    };
    expect(segment(4_000)).toBeGreaterThan(4_000);
    // 1,000 repeats are 10,000 characters (2.4 windows) and cost ~0.2 s of CPU here: far above the
    // clock's granularity; CJK word segmentation is slow, and larger sizes only made the test long.
    expect(growthExponent(segment, 1_000)).toBeLessThan(linearExponent);
  });
});

describe('codePointBoundary', () => {
  it('moves a cut back out of a surrogate pair only', () => {
    expect(codePointBoundary('a😀b', 2)).toBe(1);
    expect(codePointBoundary('a😀b', 3)).toBe(3);
    expect(codePointBoundary('ab', 1)).toBe(1);
  });
});
