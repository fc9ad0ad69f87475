// Splits prose into sentences: abbreviations, decimals, ellipses, quotes, list items, headings and CJK punctuation.

/**
 * The text's sentences in order, each trimmed with its inner whitespace collapsed to single spaces
 * (so a sentence is one line, fit for a bullet). Blank lines, list items and headings always end
 * a sentence; other line breaks are read as hard wrapping unless the line looks complete.
 */
export function splitSentences(text: string): string[] {
  return splitBlocks(text).flatMap(splitBlock);
}

// ---------------------------------------------------------------------------------------------
// Blocks: paragraphs, list items and headings, which no sentence crosses.

// Bullets (- * + • and the like), numbered items (1. 2) (a)), headings (#) and quotes (>).
const lineMarker = /^(?:[-*+•·▪‣◦–—]|\d{1,3}[.)]|[a-z]\)|\(\w{1,3}\)|#{1,6}|>+)\s+/u;
const endsSentence = /[.!?…。！？｡]["'”’)\]»」』]*$/u;
const endsMidPhrase = /[,;:\-–—(&/]$/u;
const startsLowercase = /^\p{Ll}/u;
// A line that ends on one of these words is a wrapped line, whatever the next one starts with.
const continuationWords = new Set([
  'a',
  'an',
  'the',
  'of',
  'to',
  'in',
  'on',
  'at',
  'for',
  'with',
  'by',
  'from',
  'and',
  'or',
  'but',
  'as',
  'that',
  'which',
  'who',
  'is',
  'are',
  'was',
  'were',
  'be',
  'been',
  'has',
  'have',
  'had',
  'not',
  'its',
  'their',
  'his',
  'her',
  'our',
  'your',
  'this',
  'these',
  'those',
  'into',
  'than',
  'if',
  'when',
  'while',
  'because',
  'so',
  'very',
  'more',
  'most',
]);

function splitBlocks(text: string): string[] {
  const blocks: string[] = [];
  let lines: string[] = [];
  const flush = () => {
    if (lines.length > 0) blocks.push(lines.join(' '));
    lines = [];
  };
  for (const rawLine of text.split(/\r\n|\r|\n/)) {
    const line = rawLine.trim();
    if (line === '') {
      flush();
      continue;
    }
    const marker = lineMarker.exec(line);
    if (marker !== null) {
      flush();
      const content = line.slice(marker[0].length).trim();
      if (content !== '') lines.push(content);
      continue;
    }
    const previous = lines[lines.length - 1];
    if (previous !== undefined && !continuesLine(previous, line)) flush();
    lines.push(line);
  }
  flush();
  return blocks;
}

/**
 * A line break inside a paragraph is hard wrapping when the next line starts in lower case, the
 * line ends mid-phrase, or after punctuation that ends a sentence (the sentence splitter decides
 * there, so "Dr." at a line end still joins "Smith"). A line with no final punctuation followed by
 * a capitalised line is a heading or a label and stands alone.
 */
function continuesLine(previous: string, next: string): boolean {
  if (endsSentence.test(previous) || endsMidPhrase.test(previous)) return true;
  if (startsLowercase.test(next)) return true;
  const lastWord = /(\p{L}+)$/u.exec(previous)?.[1]?.toLowerCase();
  return lastWord !== undefined && continuationWords.has(lastWord);
}

// ---------------------------------------------------------------------------------------------
// Sentences within a block.

const latinTerminators = new Set(['.', '!', '?', '…']);
const cjkTerminators = new Set(['。', '！', '？', '｡']);
const closers = new Set(['"', "'", '”', '’', ')', ']', '»', '」', '』', '）', '】', '》', '〉']);

// Always followed by more of the sentence ("Dr. Smith", "e.g. apples", "vs. them").
const neverFinal = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'rev',
  'hon',
  'gen',
  'col',
  'lt',
  'sgt',
  'capt',
  'cmdr',
  'adm',
  'maj',
  'gov',
  'sen',
  'rep',
  'pres',
  'supt',
  'messrs',
  'mme',
  'mlle',
  'e.g',
  'i.e',
  'cf',
  'vs',
  'viz',
  'approx',
  'ca',
  'esp',
  'incl',
]);
// Followed by a number when inside a sentence ("No. 5", "Fig. 3", "Jan. 12").
const beforeNumbers = new Set([
  'no',
  'nos',
  'fig',
  'figs',
  'vol',
  'vols',
  'p',
  'pp',
  'ch',
  'chap',
  'sec',
  'art',
  'eq',
  'ref',
  'ed',
  'tel',
  'ext',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
]);
// Can end a sentence but usually do not; a boundary only when a typical sentence opener follows.
const rarelyFinal = new Set(['jr', 'sr', 'st', 'al', 'bros', 'mt', 'ft']);
const sentenceOpeners = new Set([
  'a',
  'an',
  'the',
  'i',
  'he',
  'she',
  'it',
  'we',
  'they',
  'you',
  'this',
  'that',
  'these',
  'those',
  'there',
  'his',
  'her',
  'its',
  'our',
  'their',
  'my',
  'but',
  'and',
  'so',
  'yet',
  'however',
  'then',
  'in',
  'on',
  'at',
  'for',
  'as',
  'if',
  'when',
  'while',
  'after',
  'before',
  'since',
  'meanwhile',
  'today',
  'tomorrow',
  'yesterday',
  'now',
]);

function splitBlock(block: string): string[] {
  const sentences: string[] = [];
  let start = 0;
  let index = 0;
  while (index < block.length) {
    const character = block[index] as string;
    const isCjk = cjkTerminators.has(character);
    if (!isCjk && !latinTerminators.has(character)) {
      index += 1;
      continue;
    }
    let end = index + 1;
    while (
      end < block.length &&
      (latinTerminators.has(block[end] as string) || cjkTerminators.has(block[end] as string))
    )
      end += 1;
    while (end < block.length && closers.has(block[end] as string)) end += 1;
    if (isCjk || end === block.length || isBoundary(block, index, end)) {
      push(sentences, block.slice(start, end));
      start = end;
    }
    index = end;
  }
  push(sentences, block.slice(start));
  return sentences;
}

function push(sentences: string[], text: string): void {
  const sentence = text.replace(/\s+/g, ' ').trim();
  if (sentence !== '') sentences.push(sentence);
}

/**
 * Whether the terminator run block[runStart, runEnd) ends a sentence. Latin punctuation needs
 * whitespace after it ("3.5", "example.com" and "U.S.-based" stay whole) and a next word that does
 * not start in lower case ("e.g. apples", "Really?" she asked). A lone period is further checked
 * against the word before it, for abbreviations, initials and list numbers.
 */
function isBoundary(block: string, runStart: number, runEnd: number): boolean {
  if (!/\s/.test(block[runEnd] ?? '')) return false;
  const nextWord = /^\s*(\S+)/.exec(block.slice(runEnd, runEnd + 40))?.[1] ?? '';
  if (startsLowercase.test(nextWord)) return false;
  if (block.slice(runStart, runEnd).replace(/["'”’)\]»]+$/, '') !== '.') return true;

  const before =
    /([\p{L}\p{N}.]*)$/u.exec(block.slice(Math.max(0, runStart - 20), runStart))?.[1] ?? '';
  const word = before.replace(/^\.+/, '').toLowerCase();
  const opensSentence = sentenceOpeners.has(nextWord.replace(/[^\p{L}]/gu, '').toLowerCase());
  if (neverFinal.has(word)) return false;
  if (beforeNumbers.has(word) && /^\p{N}/u.test(nextWord)) return false;
  // "J. R. R. Tolkien", "U.S. Army", "a.m. Eastern": initials end a sentence only before an opener.
  if (/^\p{L}$/u.test(word) || /\p{L}\.\p{L}/u.test(word) || rarelyFinal.has(word)) {
    return opensSentence;
  }
  // "Steps: 1. Open the app. 2. Sign in." — a small number after a pause is a list marker.
  if (/^\d{1,2}$/.test(word)) {
    const preceding = block.slice(0, runStart - word.length).trimEnd();
    if (preceding === '' || /[:.!?;]$/.test(preceding)) return false;
  }
  return true;
}
