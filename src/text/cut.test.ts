// Cutting text: pieces at word boundaries (CJK included), truncation near a limit, surrogate pairs kept whole.
import { describe, expect, it } from 'vitest';
import { splitLongText, truncateText } from './cut.js';

describe('splitLongText', () => {
  it('cuts between words, never inside one', () => {
    const sentence = Array.from({ length: 60 }, (_, index) => `word${index}`).join(' ');
    const pieces = splitLongText(sentence, 50);
    expect(pieces.length).toBeGreaterThan(1);
    for (const piece of pieces) {
      expect(piece.text.length).toBeLessThanOrEqual(50);
      expect(piece.text).toMatch(/^word\d+( word\d+)*$/);
    }
    expect(pieces.map((piece) => piece.text).join(' ')).toBe(sentence);
  });

  it('cuts CJK text without spaces at word boundaries', () => {
    const text = '今日は東京の天気が晴れです'.repeat(10);
    const pieces = splitLongText(text, 20);
    expect(pieces.map((piece) => piece.text).join('')).toBe(text);
    for (const piece of pieces) {
      expect(piece.text.length).toBeLessThanOrEqual(20);
      expect(piece.separator).toBe('');
    }
    // Word segmentation keeps 東京 and 天気 whole.
    expect(pieces.some((piece) => piece.text.endsWith('東') || piece.text.startsWith('京'))).toBe(
      false,
    );
  });

  it('cuts a single word longer than the limit between code points', () => {
    const pieces = splitLongText(`short ${'x'.repeat(25)} end`, 10);
    expect(pieces.every((piece) => piece.text.length <= 10)).toBe(true);
    const rejoined = pieces.map(
      (piece, index) => (index === 0 ? '' : piece.separator) + piece.text,
    );
    expect(rejoined.join('')).toBe(`short ${'x'.repeat(25)} end`);
    // Surrogate pairs are never split.
    const emoji = splitLongText('😀'.repeat(12), 5);
    expect(
      emoji.every((piece) => piece.text.length <= 5 && !/[\ud800-\udbff]$/.test(piece.text)),
    ).toBe(true);
  });
});

describe('truncateText', () => {
  it('leaves text within the limit as it is', () => {
    expect(truncateText('short text', 10)).toEqual({ text: 'short text', truncated: false });
  });

  it('cuts at a space or line break near the limit, without trailing whitespace', () => {
    const text = `${'word '.repeat(19)}lastword and more`;
    expect(truncateText(text, 100)).toEqual({
      text: 'word '.repeat(19).trimEnd(),
      truncated: true,
    });
    expect(truncateText(`${'a'.repeat(95)}\nnextline more`, 100).text).toBe('a'.repeat(95));
  });

  it('cuts at the limit when no break is near it, never inside a surrogate pair', () => {
    expect(truncateText('a b' + 'c'.repeat(20), 10)).toEqual({
      text: 'a bccccccc',
      truncated: true,
    });
    expect(truncateText('😀'.repeat(10), 5)).toEqual({ text: '😀😀', truncated: true });
  });
});
