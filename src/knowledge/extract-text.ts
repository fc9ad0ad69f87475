// Turns a document (plain text, Markdown or HTML) into plain-text blocks under their heading path.
import { parseHTML } from 'linkedom';

export const documentContentTypes = ['text/plain', 'text/markdown', 'text/html'] as const;
export type DocumentContentType = (typeof documentContentTypes)[number];

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
  /** The document's own title: HTML `<title>` or first `<h1>`, Markdown's first heading; else null. */
  readonly title: string | null;
  /** The whole document as plain text: headings and blocks, separated by blank lines. */
  readonly text: string;
  readonly blocks: readonly TextBlock[];
}

/** Collects headings and blocks in document order and keeps the heading path current. */
class BlockCollector {
  readonly blocks: TextBlock[] = [];
  readonly lines: string[] = [];
  firstHeading: string | null = null;
  private readonly path: { level: number; text: string }[] = [];
  private section = 0;

  heading(level: number, text: string): void {
    if (text === '') return;
    this.firstHeading ??= text;
    while (this.path.length > 0 && this.path[this.path.length - 1]!.level >= level) this.path.pop();
    this.path.push({ level, text });
    this.section += 1;
    this.lines.push(text);
  }

  block(kind: BlockKind, text: string): void {
    const cleaned = kind === 'code' ? text.replace(/^\n+/, '').trimEnd() : text.trim();
    if (cleaned === '') return;
    this.blocks.push({
      headings: this.path.map((entry) => entry.text),
      section: this.section,
      kind,
      text: cleaned,
    });
    this.lines.push(cleaned);
  }

  result(title: string | null): ExtractedText {
    return { title, text: this.lines.join('\n\n'), blocks: this.blocks };
  }
}

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

const listItemPattern = /^\s*([-*+•]|\d{1,9}[.)])[ \t]+(\S.*)$/;

// ---------------------------------------------------------------------------------------------
// Plain text

function extractPlainText(source: string): ExtractedText {
  const collector = new BlockCollector();
  for (const paragraph of source.split(/\n[ \t]*\n/)) {
    const lines = paragraph.split('\n').filter((line) => line.trim() !== '');
    if (lines.length === 0) continue;
    // A list keeps one item per line; other text was likely wrapped, so its lines are joined.
    if (!lines.some((line) => listItemPattern.test(line))) {
      collector.block('prose', collapse(lines.join(' ')));
      continue;
    }
    let item: string[] = [];
    let kind: BlockKind = 'prose';
    const flush = () => {
      if (item.length > 0) collector.block(kind, collapse(item.join(' ')));
      item = [];
    };
    for (const line of lines) {
      if (listItemPattern.test(line)) {
        flush();
        kind = 'item';
      }
      item.push(line);
    }
    flush();
  }
  const firstLine = collapse(source.split('\n').find((line) => line.trim() !== '') ?? '');
  return collector.result(firstLine === '' ? null : firstLine.slice(0, 200));
}

// ---------------------------------------------------------------------------------------------
// Markdown

const entities: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  '#39': "'",
};

/**
 * Inline Markdown to plain text: link and image text, emphasis and code marks removed. Every
 * pattern stays within a line and a bounded length, so that unclosed marks (`**`, `[`) in a large
 * document cost linear time, not a scan to the end of the text from each of them.
 */
export function markdownInlineText(text: string): string {
  const codeSpans: string[] = [];
  // Code spans first, so that emphasis marks inside them survive.
  let result = text.replace(
    /(`+)([^`\n]|[^`\n][^\n]{0,1000}?[^`\n])\1(?!`)/g,
    (_match, _ticks, code: string) => {
      codeSpans.push(code.trim());
      return `\u0000${codeSpans.length - 1}\u0000`;
    },
  );
  result = result
    .replace(/!\[([^\]\n]{0,500})\]\([^)\n]{0,2000}\)/g, '$1')
    .replace(/\[([^\]\n]{1,500})\]\([^)\n]{0,2000}\)/g, '$1')
    .replace(/\[([^\]\n]{1,500})\]\[[^\]\n]{0,200}\]/g, '$1')
    .replace(/<((?:https?|mailto):[^>\s]{1,2000})>/g, '$1')
    .replace(/<\/?[A-Za-z][^>\n]{0,1000}>/g, '')
    .replace(/(\*\*|__)(?=\S)([^\n]{0,500}?\S)\1/g, '$2')
    .replace(/(^|[^\p{L}\p{N}*])\*(?=\S)([^*\n]{0,500}?\S)\*(?![\p{L}\p{N}])/gu, '$1$2')
    .replace(/(^|[^\p{L}\p{N}_])_(?=\S)([^_\n]{0,500}?\S)_(?![\p{L}\p{N}])/gu, '$1$2')
    .replace(/~~(?=\S)([^\n]{0,500}?\S)~~/g, '$1')
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~<])/g, '$1')
    .replace(/&(amp|lt|gt|quot|apos|nbsp|#39);/g, (_match, name: string) => entities[name] ?? '');
  // eslint-disable-next-line no-control-regex
  return result.replace(/\u0000(\d+)\u0000/g, (_match, index: string) => codeSpans[Number(index)]!);
}

const fencePattern = /^ {0,3}(`{3,}|~{3,})/;
const atxHeadingPattern = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const setextUnderlinePattern = /^ {0,3}(=+|-+)[ \t]*$/;
const thematicBreakPattern = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const tableRowPattern = /^\s*\|.*\|\s*$/;
const tableSeparatorPattern = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const blockquotePattern = /^ {0,3}>[ \t]?(.*)$/;
const referenceDefinitionPattern = /^ {0,3}\[[^\]]+\]:\s*\S+/;
const indentedCodePattern = /^(?: {4}|\t)/;

function extractMarkdown(source: string): ExtractedText {
  const collector = new BlockCollector();
  const lines = source.split('\n');
  let index = 0;
  // YAML front matter is metadata, not text.
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((line, position) => position > 0 && /^(---|\.\.\.)\s*$/.test(line));
    if (end > 0) index = end + 1;
  }

  let paragraph: string[] = [];
  let paragraphKind: BlockKind = 'prose';
  let lastBlockWasItem = false;
  const flush = () => {
    if (paragraph.length > 0) {
      collector.block(paragraphKind, collapse(markdownInlineText(paragraph.join('\n'))));
      lastBlockWasItem = paragraphKind === 'item';
    }
    paragraph = [];
    paragraphKind = 'prose';
  };

  while (index < lines.length) {
    const line = lines[index]!;
    index += 1;

    const fence = fencePattern.exec(line);
    if (fence !== null) {
      flush();
      const marker = fence[1]!;
      const closing = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}\\s*$`);
      const code: string[] = [];
      while (index < lines.length && !closing.test(lines[index]!)) {
        code.push(lines[index]!);
        index += 1;
      }
      index += 1; // the closing fence (or the end of the document)
      collector.block('code', code.join('\n'));
      lastBlockWasItem = false;
      continue;
    }

    const heading = atxHeadingPattern.exec(line);
    if (heading !== null) {
      flush();
      collector.heading(heading[1]!.length, collapse(markdownInlineText(heading[2] ?? '')));
      continue;
    }

    if (line.trim() === '') {
      flush();
      continue;
    }

    const underline = setextUnderlinePattern.exec(line);
    if (underline !== null && paragraph.length > 0 && paragraphKind === 'prose') {
      const text = collapse(markdownInlineText(paragraph.join(' ')));
      paragraph = [];
      collector.heading(underline[1]!.startsWith('=') ? 1 : 2, text);
      continue;
    }

    if (thematicBreakPattern.test(line)) {
      flush();
      continue;
    }

    if (tableRowPattern.test(line)) {
      flush();
      if (!tableSeparatorPattern.test(line)) {
        const cells = line
          .trim()
          .replace(/^\||\|$/g, '')
          .split(/(?<!\\)\|/)
          .map((cell) => collapse(markdownInlineText(cell)));
        collector.block('item', cells.join(' | '));
        lastBlockWasItem = true;
      }
      continue;
    }

    const item = listItemPattern.exec(line);
    if (item !== null) {
      flush();
      paragraphKind = 'item';
      paragraph.push(
        `${item[1] === '*' || item[1] === '+' || item[1] === '•' ? '-' : item[1]} ${item[2]}`,
      );
      continue;
    }

    if (
      paragraph.length === 0 &&
      !lastBlockWasItem &&
      indentedCodePattern.test(line) &&
      line.trim() !== ''
    ) {
      const code = [line];
      while (
        index < lines.length &&
        (indentedCodePattern.test(lines[index]!) || lines[index]!.trim() === '')
      ) {
        code.push(lines[index]!);
        index += 1;
      }
      collector.block(
        'code',
        code.map((codeLine) => codeLine.replace(/^(?: {4}|\t)/, '')).join('\n'),
      );
      continue;
    }

    if (referenceDefinitionPattern.test(line) && paragraph.length === 0) continue;

    const quote = blockquotePattern.exec(line);
    const text = quote === null ? line : quote[1]!;
    if (quote !== null && text.trim() === '') {
      flush();
      continue;
    }
    paragraph.push(text);
  }
  flush();
  return collector.result(collector.firstHeading);
}

// ---------------------------------------------------------------------------------------------
// HTML

/** Elements whose content is never the document's text. */
const skippedElements = new Set([
  'head',
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'math',
  'canvas',
  'iframe',
  'object',
  'embed',
  'video',
  'audio',
  'nav',
  'aside',
  'form',
  'button',
  'select',
  'textarea',
  'input',
  'dialog',
]);

const skippedRoles = new Set([
  'navigation',
  'banner',
  'contentinfo',
  'complementary',
  'search',
  'menu',
  'menubar',
  'dialog',
]);

/** Elements that end the running paragraph. */
const blockElements = new Set([
  'address',
  'article',
  'blockquote',
  'body',
  'caption',
  'center',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'header',
  'hgroup',
  'hr',
  'html',
  'legend',
  'li',
  'main',
  'ol',
  'p',
  'section',
  'summary',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'ul',
]);

interface HtmlNode {
  readonly nodeType: number;
  readonly textContent: string | null;
  readonly childNodes: ArrayLike<HtmlNode>;
  readonly localName?: string;
  readonly parentNode: HtmlNode | null;
  getAttribute?(name: string): string | null;
  hasAttribute?(name: string): boolean;
  closest?(selector: string): HtmlNode | null;
}

/** What this module reads of linkedom's document (the DOM types are not in this project's lib). */
interface HtmlDocument {
  readonly title: string | null;
  readonly body: HtmlNode | null;
  readonly documentElement: HtmlNode | null;
  querySelector(selector: string): HtmlNode | null;
  querySelectorAll(selector: string): ArrayLike<HtmlNode>;
}

const elementNode = 1;
const textNode = 3;

function isSkipped(element: HtmlNode, name: string): boolean {
  if (skippedElements.has(name)) return true;
  if (element.hasAttribute?.('hidden') === true) return true;
  if (element.getAttribute?.('aria-hidden') === 'true') return true;
  const role = element.getAttribute?.('role');
  if (role !== null && role !== undefined && skippedRoles.has(role)) return true;
  // A page's own header and footer (not an article's) are site chrome.
  if ((name === 'header' || name === 'footer') && element.parentNode?.closest !== undefined) {
    return element.parentNode.closest('article, main, section') === null;
  }
  return false;
}

function extractHtml(source: string): ExtractedText {
  // linkedom parses whole documents only; a fragment is wrapped into one.
  const isDocument = /<html[\s>]|<body[\s>]|<!doctype/i.test(source);
  const { document } = parseHTML(
    isDocument ? source : `<!doctype html><html><head></head><body>${source}</body></html>`,
  ) as unknown as { document: HtmlDocument };
  const collector = new BlockCollector();
  const root =
    document.querySelector('main') ??
    (document.querySelectorAll('article').length === 1
      ? document.querySelector('article')
      : null) ??
    document.body ??
    document.documentElement;

  let buffer = '';
  let bufferKind: BlockKind = 'prose';
  const flush = () => {
    collector.block(bufferKind, collapse(buffer));
    buffer = '';
    bufferKind = 'prose';
  };

  const walk = (node: HtmlNode) => {
    if (node.nodeType === textNode) {
      buffer += node.textContent ?? '';
      return;
    }
    if (node.nodeType !== elementNode) return;
    const name = node.localName ?? '';
    if (isSkipped(node, name)) return;
    const headingLevel = /^h([1-6])$/.exec(name);
    if (headingLevel !== null) {
      flush();
      collector.heading(Number(headingLevel[1]), collapse(node.textContent ?? ''));
      return;
    }
    if (name === 'pre') {
      flush();
      collector.block('code', node.textContent ?? '');
      return;
    }
    if (name === 'br') {
      buffer += ' ';
      return;
    }
    if (name === 'img') {
      const alt = node.getAttribute?.('alt');
      if (alt !== null && alt !== undefined && alt.trim() !== '') buffer += ` ${alt} `;
      return;
    }
    if (name === 'tr') {
      flush();
      const cells = Array.from(node.childNodes)
        .filter((cell) => cell.localName === 'td' || cell.localName === 'th')
        .map((cell) => collapse(cell.textContent ?? ''))
        .filter((cell) => cell !== '');
      collector.block('item', cells.join(' | '));
      return;
    }
    if (name === 'li') {
      flush();
      const list = node.parentNode;
      if (list?.localName === 'ol') {
        const start = Number(list.getAttribute?.('start') ?? '1');
        const siblings = Array.from(list.childNodes).filter((child) => child.localName === 'li');
        buffer = `${(Number.isFinite(start) ? start : 1) + siblings.indexOf(node)}. `;
      } else {
        buffer = '- ';
      }
      bufferKind = 'item';
      for (const child of Array.from(node.childNodes)) walk(child);
      flush();
      return;
    }
    const isBlock = blockElements.has(name);
    if (isBlock) flush();
    for (const child of Array.from(node.childNodes)) walk(child);
    if (isBlock) flush();
  };

  if (root !== null) walk(root);
  flush();
  const pageTitle = collapse(document.title ?? '');
  return collector.result(pageTitle === '' ? collector.firstHeading : pageTitle);
}

/** The document's plain text and its blocks; line endings are normalised first. */
export function extractText(content: string, contentType: DocumentContentType): ExtractedText {
  const source = content.replace(/\r\n?/g, '\n');
  switch (contentType) {
    case 'text/plain':
      return extractPlainText(source);
    case 'text/markdown':
      return extractMarkdown(source);
    case 'text/html':
      return extractHtml(source);
  }
}
