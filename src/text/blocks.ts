// A document as plain-text blocks under their heading path: what every extractor (plain text,
// Markdown, HTML) produces, and how blocks read back as one text.
import { collapseWhitespace } from './plain-text.js';

/** `item`: a list item or table row (kept on its own line); `code`: kept verbatim, never split at punctuation. */
export type BlockKind = 'prose' | 'item' | 'code';

export interface TextBlock {
  /** The heading path above the block, outermost first; empty before the first heading. */
  readonly headings: readonly string[];
  /** Counts headings seen so far: blocks of one section share it, even under repeated titles. */
  readonly section: number;
  readonly kind: BlockKind;
  readonly text: string;
}

export interface ExtractedText {
  /** The document's own title: HTML `<title>` or first heading, Markdown's first heading; else null. */
  readonly title: string | null;
  /**
   * The whole document as plain text: headings and blocks separated by blank lines, except that
   * neighbouring list items and table rows stand on consecutive lines.
   */
  readonly text: string;
  readonly blocks: readonly TextBlock[];
}

/** Limits of one extraction; a document beyond them is refused early rather than read whole. */
export interface ExtractionLimits {
  /** Sections (text under one heading) that hold text: each becomes one search chunk or more. */
  readonly maxSections?: number;
}

/** The document has more sections with text than `ExtractionLimits.maxSections`. */
export class TooManySectionsError extends Error {
  constructor(readonly maxSections: number) {
    super(`The document has more than ${maxSections} sections with text.`);
    this.name = 'TooManySectionsError';
  }
}

/** Collects headings and blocks in document order and keeps the heading path current. */
export class BlockCollector {
  readonly blocks: TextBlock[] = [];
  firstHeading: string | null = null;
  private readonly parts: string[] = [];
  private lastKind: BlockKind | 'heading' | 'end' | null = null;
  private readonly path: { level: number; text: string }[] = [];
  private section = 0;
  private lastSectionWithText = -1;
  private sectionsWithText = 0;

  constructor(private readonly limits: ExtractionLimits = {}) {}

  heading(level: number, text: string): void {
    const cleaned = collapseWhitespace(text);
    if (cleaned === '') return;
    this.firstHeading ??= cleaned;
    while (this.path.length > 0 && this.path[this.path.length - 1]!.level >= level) this.path.pop();
    this.path.push({ level, text: cleaned });
    this.section += 1;
    this.append('heading', cleaned);
  }

  /** Code keeps its lines and indentation; other text keeps its line breaks, one space between words. */
  block(kind: BlockKind, text: string): void {
    const cleaned =
      kind === 'code'
        ? text.replace(/^\n+/, '').trimEnd()
        : text
            .split('\n')
            .map(collapseWhitespace)
            .filter((line) => line !== '')
            .join('\n');
    if (cleaned === '') return;
    if (this.section !== this.lastSectionWithText) {
      this.lastSectionWithText = this.section;
      this.sectionsWithText += 1;
      const max = this.limits.maxSections;
      if (max !== undefined && this.sectionsWithText > max) throw new TooManySectionsError(max);
    }
    this.blocks.push({
      headings: this.path.map((entry) => entry.text),
      section: this.section,
      kind,
      text: cleaned,
    });
    this.append(kind, cleaned);
  }

  /** Ends a list or table: the next item starts after a blank line. */
  endGroup(): void {
    if (this.lastKind === 'item') this.lastKind = 'end';
  }

  result(title: string | null): ExtractedText {
    return { title, text: this.parts.join(''), blocks: this.blocks };
  }

  private append(kind: BlockKind | 'heading', text: string): void {
    if (this.lastKind !== null)
      this.parts.push(kind === 'item' && this.lastKind === 'item' ? '\n' : '\n\n');
    this.parts.push(text);
    this.lastKind = kind;
  }
}
