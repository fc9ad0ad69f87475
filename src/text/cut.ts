// Cutting text to a length without breaking words where possible, and never a surrogate pair.

import { codePointBoundary, windowedSegments, type TextPiece } from './segments.js';

/**
 * The start of `text`, at most `maxChars` long: cut at the last space or line break when one is
 * near the limit (within the last tenth), else at the limit; trailing whitespace dropped.
 */
export function truncateText(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text, truncated: false };
  const boundary = Math.max(text.lastIndexOf(' ', maxChars), text.lastIndexOf('\n', maxChars));
  const end = boundary > maxChars * 0.9 ? boundary : codePointBoundary(text, maxChars);
  return { text: text.slice(0, end).trimEnd(), truncated: true };
}

const wordSegmenter = new Intl.Segmenter('und', { granularity: 'word' });

function codePointSlices(text: string, maxLength: number): string[] {
  const slices: string[] = [];
  let current = '';
  for (const character of text) {
    if (current !== '' && current.length + character.length > maxLength) {
      slices.push(current);
      current = '';
    }
    current += character;
  }
  if (current !== '') slices.push(current);
  return slices;
}

/**
 * Splits text longer than `maxLength` into pieces of at most that length: at spaces, else where
 * Unicode word segmentation allows (CJK has no spaces), and only for a single word longer than
 * `maxLength` (a hash, a URL) between code points.
 */
export function splitLongText(text: string, maxLength: number): TextPiece[] {
  if (text.length <= maxLength) return [{ text, separator: '' }];
  const atoms: TextPiece[] = [];
  for (const [index, word] of text.split(' ').entries()) {
    if (word === '') continue;
    const separator = index === 0 || atoms.length === 0 ? '' : ' ';
    if (word.length <= maxLength) {
      atoms.push({ text: word, separator });
      continue;
    }
    let first = true;
    for (const { segment } of windowedSegments(wordSegmenter, word, 4096)) {
      const slices = segment.length <= maxLength ? [segment] : codePointSlices(segment, maxLength);
      for (const slice of slices) {
        atoms.push({ text: slice, separator: first ? separator : '' });
        first = false;
      }
    }
  }
  const pieces: TextPiece[] = [];
  let current: TextPiece | null = null;
  for (const atom of atoms) {
    if (current === null) {
      current = { text: atom.text, separator: atom.separator };
    } else if (current.text.length + atom.separator.length + atom.text.length > maxLength) {
      pieces.push(current);
      current = { text: atom.text, separator: atom.separator };
    } else {
      current = { text: current.text + atom.separator + atom.text, separator: current.separator };
    }
  }
  if (current !== null) pieces.push(current);
  return pieces;
}
