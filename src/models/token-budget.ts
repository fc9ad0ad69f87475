// Token counting that stays linear in the input and yields to the event loop: tokenizers (BPE
// merges in particular) are quadratic on long runs of one character and synchronous, so text is
// counted in bounded slices, long runs in short pieces, and past a cap the count is extrapolated.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** Characters counted exactly; a longer text's count is extrapolated from them. */
export const exactCountLimit = 32 * 1024;
/** Longest slice handed to a tokenizer at once (cut at whitespace where there is some). */
const sliceLength = 4096;
/** Runs of non-space (or of space) longer than this are counted in pieces of this length. */
const runPieceLength = 16;
/** Longest stretch of counting between two turns of the event loop. */
const budgetPerTurnMs = 2;

const longRun = new RegExp(`\\S{${runPieceLength + 1},}|\\s{${runPieceLength + 1},}`, 'g');

/** Where to cut `text` at or before `at` without splitting a surrogate pair. */
function safeCut(text: string, at: number): number {
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}

/** Ordinary text in slices of at most `sliceLength`, cut before a space when possible (a word keeps its leading space, as tokenizers expect). */
function* textSlices(text: string): Generator<string> {
  let start = 0;
  while (text.length - start > sliceLength) {
    let cut = start + sliceLength;
    const space = text.lastIndexOf(' ', cut);
    if (space > start + sliceLength / 2) cut = space;
    cut = safeCut(text, cut);
    yield text.slice(start, cut);
    start = cut;
  }
  if (start < text.length) yield text.slice(start);
}

/** The slices `text` is counted in: ordinary text as is, long runs in short pieces. */
export function* countingSlices(text: string): Generator<string> {
  let position = 0;
  for (const run of text.matchAll(longRun)) {
    const index = run.index;
    if (index > position) yield* textSlices(text.slice(position, index));
    const end = index + run[0].length;
    let start = index;
    while (start < end) {
      const cut = Math.min(end, safeCut(text, start + runPieceLength));
      yield text.slice(start, cut > start ? cut : start + runPieceLength);
      start = cut > start ? cut : start + runPieceLength;
    }
    position = end;
  }
  if (position < text.length) yield* textSlices(text.slice(position));
}

/**
 * Tokens in `text` by `countSlice` (a synchronous tokenizer), without holding the event loop for
 * more than a few milliseconds and in time linear in the text. Exact up to `exactCountLimit`
 * characters (slices cut between words; long runs are rare and overcount slightly); beyond it the
 * rate of the counted part is extrapolated — good enough to trim history, never used to bill.
 */
export async function countTokensGently(
  text: string,
  countSlice: (slice: string) => number,
): Promise<number> {
  if (text.length <= sliceLength && !/\S{17}|\s{17}/.test(text)) return countSlice(text);
  const examined =
    text.length > exactCountLimit ? text.slice(0, safeCut(text, exactCountLimit)) : text;
  let total = 0;
  let turnStarted = performance.now();
  // A long run is cut into many equal pieces ('aaaa…', 'abab…'): each distinct piece is counted
  // once. At most exactCountLimit / runPieceLength entries, dropped when the call ends.
  const pieces = new Map<string, number>();
  for (const slice of countingSlices(examined)) {
    if (slice.length <= runPieceLength) {
      let pieceCount = pieces.get(slice);
      if (pieceCount === undefined) {
        pieceCount = countSlice(slice);
        pieces.set(slice, pieceCount);
      }
      total += pieceCount;
    } else {
      total += countSlice(slice);
    }
    if (performance.now() - turnStarted > budgetPerTurnMs) {
      await yieldToEventLoop();
      turnStarted = performance.now();
    }
  }
  return examined.length === text.length
    ? total
    : Math.ceil((total * text.length) / examined.length);
}
