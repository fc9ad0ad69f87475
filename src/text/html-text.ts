// HTML to text, once for the service: linkedom parses, one walker turns the visible content into
// blocks under their headings, and Readability picks a page's article when one is wanted.
import { createRequire } from 'node:module';
import type * as ReadabilityModule from '@mozilla/readability';
import type * as LinkedomModule from 'linkedom';
import { BlockCollector, type BlockKind, type ExtractedText } from './blocks.js';
import { collapseWhitespace } from './plain-text.js';

/*
 * The DOM as far as this module walks it. The project compiles without the DOM library, so
 * linkedom's and Readability's `Document`/`Node` types do not resolve; these name what is used.
 */
interface DomNode {
  readonly nodeType: number;
  readonly textContent: string | null;
  readonly childNodes: ArrayLike<DomNode>;
  readonly parentNode: DomNode | null;
}

interface DomElement extends DomNode {
  readonly localName: string;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  closest(selectors: string): DomElement | null;
}

interface DomDocument extends DomNode {
  readonly title: string;
  querySelector(selectors: string): DomElement | null;
  querySelectorAll(selectors: string): ArrayLike<DomElement>;
}

const elementNode = 1;
const textNode = 3;
const documentNode = 9;

/**
 * linkedom is not a full HTML5 parser: without an <html> element it drops content that browsers
 * would put in an implied body, so such documents and fragments get the wrappers written out.
 */
/*
 * linkedom and Readability weigh about 25 MiB once loaded, and most instances never read HTML:
 * they are required (their CommonJS builds, synchronously) the first time HTML is parsed.
 */
const require = createRequire(import.meta.url);
let linkedom: typeof LinkedomModule | undefined;
let readability: typeof ReadabilityModule | undefined;

function parseHTML(html: string): unknown {
  linkedom ??= require('linkedom') as typeof LinkedomModule;
  return linkedom.parseHTML(html);
}

function readabilityClass(): typeof ReadabilityModule.Readability {
  readability ??= require('@mozilla/readability') as typeof ReadabilityModule;
  return readability.Readability;
}

function parseHtml(html: string): DomDocument {
  const complete = /<html[\s>]/i.test(html)
    ? html
    : `<html><head></head><body>${html}</body></html>`;
  return (parseHTML(complete) as { document: DomDocument }).document;
}

// ---------------------------------------------------------------------------------------------
// What is not text

/** Never visible, whatever the page. */
const invisibleTags = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'head',
  'title',
  'svg',
  'math',
  'canvas',
  'iframe',
  'object',
  'embed',
  'video',
  'audio',
  'button',
  'select',
  'input',
  'textarea',
  'dialog',
]);

/** Site chrome around the content. */
const chromeTags = new Set(['nav', 'aside', 'form', 'menu']);
const chromeRoles = new Set([
  'navigation',
  'banner',
  'contentinfo',
  'complementary',
  'search',
  'menu',
  'menubar',
  'dialog',
]);
// Class or id words of ads and overlays (`ad`, `ads`, `ad-slot`, `advertisement`, `sponsored`, …).
const chromeNamePattern =
  /(?:^|[\s_-])(?:ads?|advert\w*|sponsor\w*|promo\w*|banner|cookie\w*|popup|paywall)(?:$|[\s_-])/i;

function isHidden(element: DomElement): boolean {
  if (element.hasAttribute('hidden')) return true;
  if (element.getAttribute('aria-hidden') === 'true') return true;
  const style = element.getAttribute('style') ?? '';
  return /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)/i.test(style);
}

function isChrome(element: DomElement, tag: string): boolean {
  if (chromeTags.has(tag)) return true;
  const role = element.getAttribute('role');
  if (role !== null && chromeRoles.has(role.toLowerCase())) return true;
  // A page's own header and footer (not an article's or a section's) are site chrome.
  if ((tag === 'header' || tag === 'footer') && element.parentNode !== null) {
    const parent = element.parentNode as Partial<DomElement>;
    if (parent.closest?.('article, main, section') === null) return true;
  }
  const names = `${element.getAttribute('class') ?? ''} ${element.getAttribute('id') ?? ''}`;
  return chromeNamePattern.test(names);
}

// ---------------------------------------------------------------------------------------------
// The walker

/** Elements that end the running paragraph. */
const blockTags = new Set([
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

/** Elements whose items or rows stand on consecutive lines, apart from what follows. */
const groupTags = new Set(['ul', 'ol', 'dl', 'table']);

interface WalkOptions {
  /** Leave out navigation, asides, forms, ads and the page's header and footer. */
  readonly dropChrome: boolean;
}

/** The element's tag when it may hold visible content, else null. */
function visibleTag(element: DomElement, options: WalkOptions): string | null {
  const tag = element.localName.toLowerCase();
  if (invisibleTags.has(tag) || isHidden(element)) return null;
  if (options.dropChrome && isChrome(element, tag)) return null;
  return tag;
}

const children = (node: DomNode): DomNode[] => Array.from(node.childNodes);

/** The visible text inside `node` on one line (headings, table cells, snippets). */
function inlineText(node: DomNode, options: WalkOptions): string {
  const parts: string[] = [];
  const walk = (current: DomNode) => {
    if (current.nodeType === textNode) {
      parts.push(current.textContent ?? '');
      return;
    }
    if (current.nodeType !== elementNode && current.nodeType !== documentNode) return;
    if (current.nodeType === elementNode) {
      const element = current as DomElement;
      const tag = visibleTag(element, options);
      if (tag === null) return;
      if (tag === 'img') parts.push(` ${element.getAttribute('alt') ?? ''} `);
      if (blockTags.has(tag) || tag === 'br') parts.push(' ');
    }
    for (const child of children(current)) walk(child);
  };
  walk(node);
  return collapseWhitespace(parts.join(''));
}

/** Adds the blocks and headings under `root` to `collector`, in document order. */
function collectBlocks(root: DomNode, collector: BlockCollector, options: WalkOptions): void {
  let buffer = '';
  let bufferKind: BlockKind = 'prose';
  let groupDepth = 0;
  const flush = () => {
    collector.block(bufferKind, buffer);
    buffer = '';
    bufferKind = 'prose';
  };

  const walk = (node: DomNode) => {
    if (node.nodeType === textNode) {
      // Outside <pre>, line breaks in the markup are just spaces.
      buffer += (node.textContent ?? '').replace(/\s+/g, ' ');
      return;
    }
    if (node.nodeType === documentNode) {
      for (const child of children(node)) walk(child);
      return;
    }
    if (node.nodeType !== elementNode) return;
    const element = node as DomElement;
    const tag = visibleTag(element, options);
    if (tag === null) return;
    const headingLevel = /^h([1-6])$/.exec(tag);
    if (headingLevel !== null) {
      flush();
      collector.heading(Number(headingLevel[1]), inlineText(element, options));
      return;
    }
    switch (tag) {
      case 'pre':
        flush();
        collector.block('code', element.textContent ?? '');
        return;
      case 'br':
        buffer += '\n';
        return;
      case 'img': {
        const alt = element.getAttribute('alt');
        if (alt !== null && alt.trim() !== '') buffer += ` ${alt} `;
        return;
      }
      case 'tr': {
        flush();
        const cells = children(element)
          .filter((cell) => {
            const name = (cell as Partial<DomElement>).localName;
            return name === 'td' || name === 'th';
          })
          .map((cell) => inlineText(cell, options))
          .filter((cell) => cell !== '');
        collector.block('item', cells.join(' | '));
        return;
      }
      case 'li': {
        flush();
        buffer = `${listMarker(element)} `;
        bufferKind = 'item';
        for (const child of children(element)) walk(child);
        flush();
        return;
      }
    }
    const isBlock = blockTags.has(tag);
    const isGroup = groupTags.has(tag);
    if (isBlock) flush();
    groupDepth += isGroup ? 1 : 0;
    for (const child of children(element)) walk(child);
    groupDepth -= isGroup ? 1 : 0;
    if (isBlock) flush();
    // A nested list continues its parent's lines.
    if (isGroup && groupDepth === 0) collector.endGroup();
  };

  walk(root);
  flush();
}

/** `-`, or the item's number in an ordered list (counting from its `start`). */
function listMarker(item: DomElement): string {
  const list = item.parentNode as Partial<DomElement> | null;
  if (list?.localName !== 'ol' || list.getAttribute === undefined) return '-';
  const start = Number(list.getAttribute('start') ?? '1');
  const items = children(list as DomNode).filter(
    (child) => (child as Partial<DomElement>).localName === 'li',
  );
  return `${(Number.isFinite(start) ? start : 1) + items.indexOf(item)}.`;
}

/** The <title> (wherever linkedom put it), else null. */
function documentTitle(document: DomDocument): string | null {
  const title = collapseWhitespace(
    document.title || (document.querySelector('title')?.textContent ?? ''),
  );
  return title === '' ? null : title;
}

/** The document's main content: its <main>, else its only <article>, else all of it. */
function contentRoot(document: DomDocument): DomNode {
  const articles = document.querySelectorAll('article');
  return document.querySelector('main') ?? (articles.length === 1 ? articles[0]! : document);
}

// ---------------------------------------------------------------------------------------------
// Entry points

/**
 * The visible text of a whole document (or fragment) as blocks: scripts, styles, hidden elements
 * and site chrome left out; headings kept as the blocks' path; list items numbered or bulleted;
 * table rows as `cell | cell`; <pre> verbatim. The title is the <title>, else the first heading.
 */
export function htmlToText(html: string): ExtractedText {
  return documentText(parseHtml(html));
}

function documentText(document: DomDocument): ExtractedText {
  const collector = new BlockCollector();
  collectBlocks(contentRoot(document), collector, { dropChrome: true });
  return collector.result(documentTitle(document) ?? collector.firstHeading);
}

/** Adds an HTML fragment's blocks to `collector` (the HTML blocks of a Markdown document). */
export function collectHtmlFragment(fragment: string, collector: BlockCollector): void {
  collectBlocks(parseHtml(fragment), collector, { dropChrome: true });
}

/** An HTML fragment's visible text on one line, entities decoded (search snippets, say). */
export function htmlFragmentText(fragment: string): string {
  return inlineText(parseHtml(fragment), { dropChrome: false });
}

export interface ReadableHtml extends ExtractedText {
  /** `readability`: the article Readability found; `visible_text`: the page without its chrome. */
  readonly method: 'readability' | 'visible_text';
  /** Readability's excerpt, else the page's meta description. */
  readonly excerpt: string | null;
  readonly byline: string | null;
}

/** Readability's default `charThreshold`: below it, it is unsure it found the article. */
const readabilityCharThreshold = 500;

const flat = (text: string) => text.replace(/\s+/g, ' ');

function readabilityArticle(
  html: string,
): (ExtractedText & { excerpt: string | null; byline: string | null }) | null {
  try {
    const document = parseHtml(html);
    // Read before Readability, which removes the heading it takes for the title.
    const heading = document.querySelector('h1, h2, h3, h4, h5, h6');
    const title =
      documentTitle(document) ??
      (heading === null ? null : inlineText(heading, { dropChrome: false }) || null);
    // The serializer hands back the article's element, so its text is walked as blocks.
    const Readability = readabilityClass();
    const article = new Readability<DomElement>(document, {
      serializer: (node: unknown) => node as DomElement,
    }).parse();
    if (article === null || !article.content) return null;
    const collector = new BlockCollector();
    // Readability already removed the chrome; an article's own header may hold its title.
    collectBlocks(article.content, collector, { dropChrome: false });
    const extracted = collector.result(article.title || title);
    if (extracted.text === '') return null;
    return { ...extracted, excerpt: article.excerpt ?? null, byline: article.byline ?? null };
  } catch {
    // Readability gives up on some documents by throwing rather than returning null.
    return null;
  }
}

/**
 * A web page's readable text: the article Readability finds when it is sure of it, else the
 * page's visible text without navigation, headers, footers and ads.
 */
export function readableHtml(html: string): ReadableHtml {
  const article = readabilityArticle(html);
  // Readability's pick is trusted when long enough to pass its own threshold; a shorter one only
  // when it lies within the page's non-chrome text (on small pages it sometimes picks the menu).
  if (article !== null && article.text.length >= readabilityCharThreshold) {
    return { ...article, method: 'readability' };
  }
  // Readability changes the document it parses, so the fallback reads a fresh one.
  const document = parseHtml(html);
  const visible = documentText(document);
  if (article !== null && flat(visible.text).includes(flat(article.text))) {
    return { ...article, method: 'readability' };
  }
  const description = document.querySelector('meta[name="description"]')?.getAttribute('content');
  return { ...visible, method: 'visible_text', excerpt: description ?? null, byline: null };
}
