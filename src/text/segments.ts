// Pieces of text: Unicode segmentation (Intl.Segmenter) in linear time, and safe cut positions.

/** A piece of text and the whitespace that joins it to the piece before ('' in CJK text or inside a word). */
export interface TextPiece {
  readonly text: string;
  readonly separator: string;
}

/** `end`, moved back one where it would cut a surrogate pair in half. */
export function codePointBoundary(text: string, end: number): number {
  const code = text.charCodeAt(end - 1);
  return end < text.length && code >= 0xd800 && code <= 0xdbff ? end - 1 : end;
}

/**
 * `segmenter`'s segments of `text`, segmented a window at a time: in V8, ICU's segmentation of one
 * long string costs far more than linear time (a megabyte of prose split into sentences: 20 s; of
 * Japanese: minutes). The last segment of a window may be cut, so it is segmented again with the
 * text that follows.
 */
export function* windowedSegments(
  segmenter: Intl.Segmenter,
  text: string,
  windowLength: number,
): Generator<{ segment: string; index: number }> {
  let start = 0;
  while (start < text.length) {
    const end = codePointBoundary(text, Math.min(text.length, start + windowLength));
    const segments = Array.from(segmenter.segment(text.slice(start, end)));
    if (end < text.length && segments.length > 1) segments.pop();
    for (const { segment } of segments) {
      yield { segment, index: start };
      start += segment.length;
    }
  }
}
