// Plain text as blocks (paragraphs, list items, heading and label lines), and whitespace tidying.

/** A paragraph, or a list item with its marker (`-`, `1.`, `(a)` …) taken off. */
export interface PlainBlock {
  readonly kind: 'prose' | 'item';
  /** The item's marker as written; '' for prose. */
  readonly marker: string;
  /** The block's lines joined with single spaces. */
  readonly text: string;
}

// Bullets (- * + • and the like), numbered items (1. 2) (a)), headings (#) and quotes (>).
const lineMarker = /^(?:([-*+•·▪‣◦–—]|\d{1,3}[.)]|[a-z]\)|\(\w{1,3}\))|#{1,6}|>+)\s+/u;
const endsSentence = /[.!?…。！？｡]["'”’“‘)\]»」』]*$/u;
const endsMidPhrase = /[,;:\-–—(&/]$/u;
const startsLowercase = /^\p{Ll}/u;
// A line that ends on one of these words is a wrapped line, whatever the next one starts with.
const continuationWords = new Set(
  (
    'a an the of to in on at for with by from and or but as that which who is are was were be ' +
    'been has have had not its their his her our your this these those into than if when while ' +
    'because so very more most'
  ).split(' '),
);
const longestContinuationWord = Math.max(...[...continuationWords].map((word) => word.length));

/**
 * The blocks no sentence crosses: blank lines, list items and heading lines always end one; other
 * line breaks are read as hard wrapping unless the line looks complete.
 */
export function plainTextBlocks(text: string): PlainBlock[] {
  const blocks: PlainBlock[] = [];
  let lines: string[] = [];
  let marker = '';
  const flush = () => {
    if (lines.length > 0) {
      blocks.push({ kind: marker === '' ? 'prose' : 'item', marker, text: lines.join(' ') });
    }
    lines = [];
    marker = '';
  };
  for (const rawLine of text.split(/\r\n|\r|\n/)) {
    const line = collapseWhitespace(rawLine);
    if (line === '') {
      flush();
      continue;
    }
    const found = lineMarker.exec(line);
    if (found !== null) {
      flush();
      marker = found[1] ?? '';
      const content = line.slice(found[0].length);
      if (content !== '') lines.push(content);
      else marker = '';
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
  // The last word, read from the end: a regular expression anchored only at the end would try
  // every start in a long line of letters (quadratic).
  const lastWord = /(\p{L}+)$/u.exec(previous.slice(-longestContinuationWord - 1))?.[1];
  return (
    lastWord !== undefined &&
    lastWord.length <= longestContinuationWord &&
    continuationWords.has(lastWord.toLowerCase())
  );
}

const zeroWidth = /[\u200b-\u200d\u2060\ufeff]/g;

/** One line: runs of whitespace become one space, zero-width characters go, ends are trimmed. */
export function collapseWhitespace(text: string): string {
  return text.replace(zeroWidth, '').replace(/\s+/g, ' ').trim();
}

/** One space between words, one blank line at most between paragraphs, no zero-width characters. */
export function normaliseWhitespace(text: string): string {
  return text
    .replace(zeroWidth, '')
    .replace(/\r\n?/g, '\n')
    .replace(/[^\S\n]+/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Keeps indentation (code, nested lists): only line ends, trailing spaces and blank runs are tidied. */
export function tidyPlainText(text: string): string {
  return text
    .replace(zeroWidth, '')
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\n+|\n+$/g, '');
}
