// Splits extracted text into search chunks: per section, whole sentences packed up to a size, with
// whole-sentence overlap between neighbours; code blocks and list items are never cut at punctuation.
import {
  extractText,
  type DocumentContentType,
  type ExtractedText,
  type TextBlock,
} from './extract-text.js';

export interface ChunkingOptions {
  /** Largest chunk, in characters (UTF-16 code units, as JavaScript counts them). */
  readonly chunkSize: number;
  /** Characters of whole sentences repeated from the end of one chunk at the start of the next. */
  readonly chunkOverlap: number;
}

export interface TextChunk {
  /** 0-based order in the document. */
  readonly position: number;
  /** The section's heading path, e.g. `Install > Linux`; empty before the first heading. */
  readonly heading: string;
  readonly text: string;
}

export interface ChunkedDocument extends ExtractedText {
  readonly chunks: readonly TextChunk[];
}

/** A piece of text that is never split further, and what joins it to the piece before. */
export interface TextPiece {
  readonly text: string;
  readonly separator: string;
}

// Lower-case forms, without their final period, of abbreviations that rarely end a sentence.
const abbreviations = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'mt',
  'ft',
  'vs',
  'cf',
  'al',
  'fig',
  'figs',
  'eq',
  'no',
  'nos',
  'vol',
  'vols',
  'p',
  'pp',
  'ed',
  'eds',
  'approx',
  'ca',
  'inc',
  'ltd',
  'co',
  'corp',
  'dept',
  'est',
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
  'rev',
  'gen',
  'col',
  'lt',
  'sgt',
  'capt',
  'hon',
  'ibid',
  'viz',
  'resp',
]);

/** Terminators after which CJK text starts a new sentence without a space. */
const cjkTerminators = /[。！？．]/;
const sentenceEnd = /(?:[.!?…]+|[。！？．]+)["'”’)\]»」』）]*/gu;

function isAbbreviation(word: string): boolean {
  const bare = word.replace(/^[("'“‘[]+/, '');
  return (
    abbreviations.has(bare.toLowerCase()) ||
    // Dotted initialisms: e.g, i.e, U.S, a.m
    /^(?:\p{L}\.)+\p{L}$/u.test(bare) ||
    // A personal initial: J. R. R. Tolkien
    /^\p{Lu}$/u.test(bare)
  );
}

/**
 * Sentences of one paragraph, each with the whitespace that preceded it (' ' or '' in CJK text).
 * A period ends a sentence only before whitespace and a character that is not lower case, and not
 * after a known abbreviation, an initial, or a list number at the start ("1. Install").
 */
export function splitSentences(paragraph: string): TextPiece[] {
  const text = paragraph.replace(/\s+/g, ' ').trim();
  const sentences: TextPiece[] = [];
  let start = 0;
  let separator = '';
  for (const match of text.matchAll(sentenceEnd)) {
    const end = match.index + match[0].length;
    const after = text[end];
    if (!cjkTerminators.test(match[0])) {
      if (after !== ' ') continue;
      const next = text[end + 1] ?? '';
      if (/\p{Ll}/u.test(next)) continue;
      if (/^\.["'”’)\]»]*$/.test(match[0])) {
        const wordStart = text.lastIndexOf(' ', match.index - 1) + 1;
        const word = text.slice(wordStart, match.index);
        if (isAbbreviation(word)) continue;
        if (/^\d{1,9}$/.test(word) && wordStart === start) continue;
      }
    }
    if (end === text.length) break;
    sentences.push({ text: text.slice(start, end), separator });
    separator = after === ' ' ? ' ' : '';
    start = end + separator.length;
  }
  if (start < text.length) sentences.push({ text: text.slice(start), separator });
  return sentences;
}

const wordSegmenter = new Intl.Segmenter('und', { granularity: 'word' });

/**
 * Unicode word segments of `text`, segmented a window at a time: ICU's dictionary segmentation of
 * CJK text slows down far more than linearly on long runs (80,000 characters take seconds). The
 * last segment of a window may be cut, so it is segmented again with the text that follows.
 */
function* wordSegments(text: string): Generator<string> {
  const windowLength = 4096;
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + windowLength);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    const segments = Array.from(
      wordSegmenter.segment(text.slice(start, end)),
      (part) => part.segment,
    );
    if (end < text.length && segments.length > 1) segments.pop();
    for (const segment of segments) {
      yield segment;
      start += segment.length;
    }
  }
}

/**
 * Splits text longer than `maxLength` at word boundaries: at spaces, else where Unicode word
 * segmentation allows (CJK has no spaces), and only for a single word longer than `maxLength`
 * (a hash, a URL) between code points.
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
    for (const segment of wordSegments(word)) {
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

/** A code block fits whole when it can; otherwise it is cut between lines. */
function codePieces(code: string, maxLength: number): TextPiece[] {
  if (code.length <= maxLength) return [{ text: code, separator: '' }];
  const pieces: TextPiece[] = [];
  let current: string[] = [];
  let length = 0;
  const flush = () => {
    if (current.length > 0) pieces.push({ text: current.join('\n'), separator: '\n' });
    current = [];
    length = 0;
  };
  for (const line of code.split('\n')) {
    if (line.length > maxLength) {
      flush();
      for (const piece of splitLongText(line, maxLength)) {
        pieces.push({ text: piece.text, separator: '\n' });
      }
      continue;
    }
    if (current.length > 0 && length + 1 + line.length > maxLength) flush();
    length += (current.length > 0 ? 1 : 0) + line.length;
    current.push(line);
  }
  flush();
  return pieces;
}

function joinedLength(pieces: readonly TextPiece[]): number {
  return pieces.reduce(
    (sum, piece, index) => sum + (index === 0 ? 0 : piece.separator.length) + piece.text.length,
    0,
  );
}

function joinPieces(pieces: readonly TextPiece[]): string {
  return pieces.map((piece, index) => (index === 0 ? '' : piece.separator) + piece.text).join('');
}

/**
 * Packs pieces greedily into chunks of at most `chunkSize` characters. Each new chunk starts with
 * the last whole pieces of the previous one that fit in `chunkOverlap` (never the whole previous
 * chunk, and fewer when they would push the chunk over its size).
 */
export function packPieces(pieces: readonly TextPiece[], options: ChunkingOptions): string[] {
  const chunks: string[] = [];
  let current: TextPiece[] = [];
  for (const piece of pieces) {
    if (current.length === 0) {
      current = [piece];
      continue;
    }
    if (joinedLength(current) + piece.separator.length + piece.text.length <= options.chunkSize) {
      current.push(piece);
      continue;
    }
    chunks.push(joinPieces(current));
    let overlap: TextPiece[] = [];
    for (let index = current.length - 1; index > 0; index -= 1) {
      const candidate = [current[index]!, ...overlap];
      if (joinedLength(candidate) > options.chunkOverlap) break;
      overlap = candidate;
    }
    while (overlap.length > 0 && joinedLength([...overlap, piece]) > options.chunkSize) {
      overlap = overlap.slice(1);
    }
    current = [...overlap, piece];
  }
  if (current.length > 0) chunks.push(joinPieces(current));
  return chunks;
}

/** The pieces of one section: sentences of prose and list items, code blocks whole. */
function sectionPieces(blocks: readonly TextBlock[], chunkSize: number): TextPiece[] {
  const pieces: TextPiece[] = [];
  let previous: TextBlock | undefined;
  for (const block of blocks) {
    // List items and table rows stay one per line; anything else is a paragraph of its own.
    const blockSeparator = previous?.kind === 'item' && block.kind === 'item' ? '\n' : '\n\n';
    const blockPieces =
      block.kind === 'code'
        ? codePieces(block.text, chunkSize)
        : splitSentences(block.text).flatMap((sentence) =>
            splitLongText(sentence.text, chunkSize).map((piece, index) =>
              index === 0 ? { ...piece, separator: sentence.separator } : piece,
            ),
          );
    blockPieces.forEach((piece, index) =>
      pieces.push(index === 0 ? { ...piece, separator: blockSeparator } : piece),
    );
    previous = block;
  }
  return pieces;
}

/** Chunks per section (a heading starts a new one); sections without text give none. */
export function chunkBlocks(blocks: readonly TextBlock[], options: ChunkingOptions): TextChunk[] {
  if (
    options.chunkSize < 1 ||
    options.chunkOverlap < 0 ||
    options.chunkOverlap >= options.chunkSize
  ) {
    throw new RangeError('chunkOverlap must be at least 0 and smaller than chunkSize');
  }
  const chunks: TextChunk[] = [];
  let start = 0;
  while (start < blocks.length) {
    let end = start + 1;
    while (end < blocks.length && blocks[end]!.section === blocks[start]!.section) end += 1;
    const section = blocks.slice(start, end);
    const heading = section[0]!.headings.join(' > ');
    for (const text of packPieces(sectionPieces(section, options.chunkSize), options)) {
      chunks.push({ position: chunks.length, heading, text });
    }
    start = end;
  }
  return chunks;
}

/** Extracts the document's text and chunks it. */
export function chunkDocument(
  content: string,
  contentType: DocumentContentType,
  options: ChunkingOptions,
): ChunkedDocument {
  const extracted = extractText(content, contentType);
  return { ...extracted, chunks: chunkBlocks(extracted.blocks, options) };
}
