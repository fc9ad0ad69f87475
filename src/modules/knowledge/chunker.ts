// Splits extracted text into search chunks: per section, whole sentences packed up to a size, with
// whole-sentence overlap between neighbours; code blocks and list items are never cut at punctuation.
import { TooManySectionsError, type ExtractedText, type TextBlock } from '../../text/blocks.js';
import { splitLongText } from '../../text/cut.js';
import { extractText, type DocumentContentType } from '../../text/extract-text.js';
import type { TextPiece } from '../../text/segments.js';
import { sentencePieces } from '../../text/sentences.js';

export interface ChunkingOptions {
  /** Largest chunk, in characters (UTF-16 code units, as JavaScript counts them). */
  readonly chunkSize: number;
  /** Characters of whole sentences repeated from the end of one chunk at the start of the next. */
  readonly chunkOverlap: number;
  /** Chunks one document may make at most (TooManyChunksError past it); no limit when absent. */
  readonly maxChunks?: number;
}

/** The document makes more chunks than `ChunkingOptions.maxChunks`. */
export class TooManyChunksError extends Error {
  constructor(readonly maxChunks: number) {
    super(`The document makes more than ${maxChunks} chunks.`);
    this.name = 'TooManyChunksError';
  }
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
  // The length of `current` joined, kept as pieces come and go: measuring anew each time is quadratic in
  // the pieces of a chunk (a chunk of one-word sentences holds hundreds).
  let currentLength = 0;
  for (const piece of pieces) {
    if (current.length === 0) {
      current = [piece];
      currentLength = piece.text.length;
      continue;
    }
    if (currentLength + piece.separator.length + piece.text.length <= options.chunkSize) {
      current.push(piece);
      currentLength += piece.separator.length + piece.text.length;
      continue;
    }
    chunks.push(joinPieces(current));
    // The last whole pieces that fit in the overlap (never the whole previous chunk).
    let overlapStart = current.length;
    let overlapLength = 0;
    for (let index = current.length - 1; index > 0; index -= 1) {
      const length =
        overlapStart === current.length
          ? current[index]!.text.length
          : overlapLength + current[index + 1]!.separator.length + current[index]!.text.length;
      if (length > options.chunkOverlap) break;
      overlapStart = index;
      overlapLength = length;
    }
    // Fewer when they would push the chunk over its size.
    while (
      overlapStart < current.length &&
      overlapLength + piece.separator.length + piece.text.length > options.chunkSize
    ) {
      overlapLength =
        overlapStart + 1 < current.length
          ? overlapLength -
            current[overlapStart]!.text.length -
            current[overlapStart + 1]!.separator.length
          : 0;
      overlapStart += 1;
    }
    const overlapped = overlapStart < current.length;
    current = [...current.slice(overlapStart), piece];
    currentLength = overlapped
      ? overlapLength + piece.separator.length + piece.text.length
      : piece.text.length;
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
        : sentencePieces(block.text).flatMap((sentence) =>
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
    if (options.maxChunks !== undefined && chunks.length > options.maxChunks) {
      throw new TooManyChunksError(options.maxChunks);
    }
    start = end;
  }
  return chunks;
}

/**
 * Extracts the document's text and chunks it. Past `options.maxChunks` it throws
 * TooManyChunksError, as soon as the sections read so far show it (each makes a chunk or more).
 */
export function chunkDocument(
  content: string,
  contentType: DocumentContentType,
  options: ChunkingOptions,
): ChunkedDocument {
  let extracted: ExtractedText;
  try {
    extracted = extractText(
      content,
      contentType,
      options.maxChunks === undefined ? {} : { maxSections: options.maxChunks },
    );
  } catch (error) {
    if (error instanceof TooManySectionsError) throw new TooManyChunksError(error.maxSections);
    throw error;
  }
  return { ...extracted, chunks: chunkBlocks(extracted.blocks, options) };
}
