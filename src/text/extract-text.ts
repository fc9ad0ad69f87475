// A document (plain text, Markdown or HTML) as plain-text blocks under their heading path.
import { BlockCollector, type ExtractedText, type ExtractionLimits } from './blocks.js';
import { truncateText } from './cut.js';
import { htmlToText } from './html-text.js';
import { markdownToText } from './markdown-text.js';
import { collapseWhitespace, plainTextBlocks } from './plain-text.js';

export const documentContentTypes = ['text/plain', 'text/markdown', 'text/html'] as const;
export type DocumentContentType = (typeof documentContentTypes)[number];

/** Paragraphs and list items (with their markers); the title is the first line. */
function plainTextToText(text: string, limits: ExtractionLimits): ExtractedText {
  const collector = new BlockCollector(limits);
  for (const block of plainTextBlocks(text)) {
    collector.block(
      block.kind,
      block.kind === 'item' ? `${block.marker} ${block.text}` : block.text,
    );
  }
  const firstLine = collapseWhitespace(text.split('\n').find((line) => line.trim() !== '') ?? '');
  return collector.result(firstLine === '' ? null : truncateText(firstLine, 200).text);
}

/**
 * The document's plain text and its blocks; line endings are normalised first. Throws
 * TooManySectionsError past `limits.maxSections`.
 */
export function extractText(
  content: string,
  contentType: DocumentContentType,
  limits: ExtractionLimits = {},
): ExtractedText {
  const source = content.replace(/\r\n?/g, '\n');
  switch (contentType) {
    case 'text/plain':
      return plainTextToText(source, limits);
    case 'text/markdown':
      return markdownToText(source, limits);
    case 'text/html':
      return htmlToText(source, limits);
  }
}
