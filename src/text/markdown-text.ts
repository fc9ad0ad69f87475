// Markdown to plain text through marked's tokens: headings as the blocks' path, list items and
// table rows one per line, code verbatim, inline marks dropped, HTML read by the HTML walker.
import { DecodingMode, decodeHTML } from 'entities';
import { BlockCollector, type ExtractedText, type ExtractionLimits } from './blocks.js';
import { collectHtmlFragment } from './html-text.js';
import { lexMarkdown, type MarkdownToken, type MarkdownTokens } from './markdown.js';
import { collapseWhitespace } from './plain-text.js';

/** YAML front matter is metadata, not text. */
function withoutFrontMatter(markdown: string): string {
  const match = /^---[ \t]*\r?\n[\s\S]*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/.exec(markdown);
  return match === null ? markdown : markdown.slice(match[0].length);
}

/** The document's blocks under their headings; its title is the first heading. */
export function markdownToText(markdown: string, limits: ExtractionLimits = {}): ExtractedText {
  const collector = new BlockCollector(limits);
  collectTokens(lexMarkdown(withoutFrontMatter(markdown)), collector);
  return collector.result(collector.firstHeading);
}

/** The first heading's text, or null. */
export function markdownTitle(markdown: string): string | null {
  for (const token of lexMarkdown(withoutFrontMatter(markdown))) {
    if (token.type === 'heading') return inlineText((token as MarkdownTokens.Heading).tokens);
  }
  return null;
}

/** Markdown as one line of plain text: marks dropped, entities decoded, list markers kept. */
export function markdownLine(markdown: string): string {
  return collapseWhitespace(markdownToText(markdown).text);
}

/** `nested`: inside a list item, whose list goes on after these tokens. */
function collectTokens(
  tokens: readonly MarkdownToken[],
  collector: BlockCollector,
  nested = false,
): void {
  for (const token of tokens) {
    switch (token.type) {
      case 'heading': {
        const heading = token as MarkdownTokens.Heading;
        collector.heading(heading.depth, inlineText(heading.tokens));
        break;
      }
      case 'paragraph':
      case 'text':
        collector.block('prose', inlineText(tokenChildren(token) ?? [token]));
        break;
      case 'code':
        collector.block('code', (token as MarkdownTokens.Code).text);
        break;
      case 'blockquote':
        collectTokens((token as MarkdownTokens.Blockquote).tokens, collector, nested);
        break;
      case 'list':
        collectList(token as MarkdownTokens.List, collector);
        if (!nested) collector.endGroup();
        break;
      case 'table': {
        const table = token as MarkdownTokens.Table;
        for (const row of [table.header, ...table.rows]) {
          const cells = row.map((cell) => inlineText(cell.tokens)).filter((cell) => cell !== '');
          collector.block('item', cells.join(' | '));
        }
        if (!nested) collector.endGroup();
        break;
      }
      case 'html':
        collectHtmlFragment((token as MarkdownTokens.HTML).text, collector);
        break;
      default:
        // space, hr, def (link reference definitions): no text.
        break;
    }
  }
}

/**
 * One block per item: its own text after its marker (`-`, or its number), then its nested lists
 * and code as blocks of their own.
 */
function collectList(list: MarkdownTokens.List, collector: BlockCollector): void {
  const start = typeof list.start === 'number' ? list.start : 1;
  list.items.forEach((item, index) => {
    const marker = list.ordered ? `${start + index}.` : '-';
    const check = item.task ? (item.checked === true ? '[x] ' : '[ ] ') : '';
    const own: string[] = [];
    const nested: MarkdownToken[] = [];
    for (const child of item.tokens) {
      if (child.type === 'text' || child.type === 'paragraph') {
        own.push(inlineText(tokenChildren(child) ?? [child]));
      } else if (child.type !== 'checkbox') {
        nested.push(child);
      }
    }
    collector.block('item', `${marker} ${check}${own.join(' ')}`);
    collectTokens(nested, collector, true);
  });
}

function tokenChildren(token: MarkdownToken): MarkdownToken[] | undefined {
  return (token as { tokens?: MarkdownToken[] }).tokens;
}

/** Entities count only with their semicolon in Markdown (CommonMark), so `AT&T` stays as written. */
const decodeEntities = (text: string) => decodeHTML(text, DecodingMode.Strict);

/** marked leaves entities in text; code spans and backslash escapes are already literal. */
function inlineText(tokens: readonly MarkdownToken[]): string {
  const parts: string[] = [];
  const walk = (list: readonly MarkdownToken[]) => {
    for (const token of list) {
      switch (token.type) {
        case 'codespan':
        case 'escape':
          parts.push((token as { text: string }).text);
          break;
        case 'br':
          parts.push(' ');
          break;
        case 'html':
          // Inline tags are dropped; the text between them is ordinary text tokens.
          if (/^<br\b/i.test((token as MarkdownTokens.Tag).text)) parts.push(' ');
          break;
        case 'checkbox':
          break;
        default: {
          const children = tokenChildren(token);
          if (children !== undefined && token.type !== 'image') walk(children);
          else parts.push(decodeEntities((token as { text?: string }).text ?? ''));
        }
      }
    }
  };
  walk(tokens);
  return collapseWhitespace(parts.join(''));
}
