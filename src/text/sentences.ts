// Sentences: terminator runs and Unicode's sentence boundaries (Intl.Segmenter), each checked
// against abbreviations, initials, list numbers and lower-case continuations.
import { collapseWhitespace, plainTextBlocks } from './plain-text.js';
import { windowedSegments, type TextPiece } from './segments.js';

/**
 * The text's sentences in order, each on one line (inner whitespace collapsed), list markers left
 * out. Blank lines, list items and headings always end a sentence; other line breaks are read as
 * hard wrapping unless the line looks complete.
 */
export function splitSentences(text: string): string[] {
  return plainTextBlocks(text).flatMap((block) =>
    sentencePieces(block.text).map((piece) => piece.text),
  );
}

/**
 * The sentences of one paragraph (its whitespace collapsed first), each with the space before it
 * ('' between CJK sentences).
 */
export function sentencePieces(paragraph: string): TextPiece[] {
  const text = collapseWhitespace(paragraph);
  const pieces: TextPiece[] = [];
  let start = 0;
  let separator = '';
  for (const end of candidateEnds(text)) {
    if (end <= start || end >= text.length || !endsSentence(text, end)) continue;
    pieces.push({ text: text.slice(start, end), separator });
    separator = text[end] === ' ' ? ' ' : '';
    start = end + separator.length;
  }
  if (start < text.length) pieces.push({ text: text.slice(start), separator });
  return pieces;
}

// ---------------------------------------------------------------------------------------------
// Candidate ends: every run of terminators, and ICU's sentence boundaries where the text has
// terminators of other scripts; each moved past the closing quotes and brackets that follow it.

const latinTerminators = new Set(['.', '!', '?', '…']);
const cjkTerminators = new Set(['。', '！', '？', '｡', '．']);
const terminatorRun = /[.!?…。！？｡．]+/gu;
// Closing brackets and quotes; initial quotes too, as German closes quotations with “ and ‘.
const closer = /["'\p{Pe}\p{Pf}\p{Pi}]/u;
/**
 * A sentence terminator (Unicode's Sentence_Terminal) other than those above, such as । ؟ ። ։.
 * Without one, every boundary ICU finds follows a terminator run the scan above also finds, and is
 * judged by the same rules, so ICU (costly per call) is asked only when it can add a boundary.
 */
const otherTerminator = /(?![.!?。！？｡．])\p{Sentence_Terminal}/u;

const segmenter = new Intl.Segmenter('und', { granularity: 'sentence' });

/** Where ICU's sentences end, before the whitespace that follows them. */
function* icuEnds(text: string): Generator<number> {
  for (const { segment, index } of windowedSegments(segmenter, text, 1000)) {
    const end = index + segment.trimEnd().length;
    if (end < text.length) yield end;
  }
}

function pastClosers(text: string, end: number): number {
  let position = end;
  while (position < text.length && closer.test(text[position]!)) position += 1;
  return position;
}

/** Candidate ends in increasing order, without repeats. */
function candidateEnds(text: string): number[] {
  const ends = new Set<number>();
  if (otherTerminator.test(text)) {
    for (const end of icuEnds(text)) ends.add(pastClosers(text, end));
  }
  for (const match of text.matchAll(terminatorRun)) {
    ends.add(pastClosers(text, match.index + match[0].length));
  }
  return [...ends].sort((left, right) => left - right);
}

// ---------------------------------------------------------------------------------------------
// Which candidates end a sentence.

// Always followed by more of the sentence ("Dr. Smith", "e.g. apples", "vs. them").
const neverFinal = new Set(
  (
    'mr mrs ms dr prof rev hon gen col lt sgt capt cmdr adm maj gov sen rep pres supt messrs mme ' +
    'mlle e.g i.e cf vs viz approx ca esp incl bzw vgl'
  ).split(' '),
);
// Followed by a number when inside a sentence ("No. 5", "Fig. 3", "Jan. 12").
const beforeNumbers = new Set(
  (
    'no nos fig figs vol vols p pp ch chap sec art eq ref ed tel ext nr bd jan feb mar apr jun ' +
    'jul aug sep sept oct nov dec'
  ).split(' '),
);
// Can end a sentence but usually do not; a boundary only when a typical sentence opener follows.
const rarelyFinal = new Set(['jr', 'sr', 'st', 'al', 'bros', 'mt', 'ft', 'inc', 'ltd', 'co']);
const sentenceOpeners = new Set(
  (
    'a an the i he she it we they you this that these those there his her its our their my but ' +
    'and so yet however then in on at for as if when while after before since meanwhile today ' +
    'tomorrow yesterday now'
  ).split(' '),
);
const startsLowercase = /^\p{Ll}/u;

/**
 * Whether the sentence ends at `end` (just after its terminators and closers). CJK terminators
 * always end one, and so does a boundary ICU found after punctuation of another script (। ؟ ።).
 * Latin punctuation needs whitespace after it ("3.5", "example.com" and "U.S.-based" stay whole)
 * and a next word that does not start in lower case ("e.g. apples", "Really?" she asked). A lone
 * period is further checked against the word before it, for abbreviations, initials and list
 * numbers.
 */
function endsSentence(text: string, end: number): boolean {
  let runEnd = end;
  while (runEnd > 0 && closer.test(text[runEnd - 1]!)) runEnd -= 1;
  let runStart = runEnd;
  while (
    runStart > 0 &&
    (latinTerminators.has(text[runStart - 1]!) || cjkTerminators.has(text[runStart - 1]!))
  ) {
    runStart -= 1;
  }
  const run = text.slice(runStart, runEnd);
  if (run === '' || [...run].some((character) => cjkTerminators.has(character))) return true;

  if (text[end] !== ' ') return false;
  const nextWord = /^ (\S+)/.exec(text.slice(end, end + 40))?.[1] ?? '';
  if (startsLowercase.test(nextWord)) return false;
  if (run !== '.') return true;

  const before = /([\p{L}\p{N}.]*)$/u.exec(text.slice(Math.max(0, runStart - 20), runStart))?.[1];
  const word = (before ?? '').replace(/^\.+/, '').toLowerCase();
  const opensSentence = sentenceOpeners.has(nextWord.replace(/[^\p{L}]/gu, '').toLowerCase());
  if (neverFinal.has(word)) return false;
  if (beforeNumbers.has(word) && /^\p{N}/u.test(nextWord)) return false;
  // "J. R. R. Tolkien", "U.S. Army", "a.m. Eastern": initials end a sentence only before an opener.
  if (/^\p{L}$/u.test(word) || /\p{L}\.\p{L}/u.test(word) || rarelyFinal.has(word)) {
    return opensSentence;
  }
  // "Steps: 1. Open the app. 2. Sign in." — a small number after a pause is a list marker.
  if (/^\d{1,2}$/.test(word)) {
    const preceding = text.slice(0, runStart - word.length).trimEnd();
    if (preceding === '' || /[:.!?;]$/.test(preceding)) return false;
  }
  return true;
}
