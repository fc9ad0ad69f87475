// HTML to text, once for the service: linkedom parses, one walker turns the visible content into
// blocks under their headings, and Readability picks a page's article when one is wanted.
import { createRequire } from 'node:module';
import type * as ReadabilityModule from '@mozilla/readability';
import type * as LinkedomModule from 'linkedom';
import {
  BlockCollector,
  type BlockKind,
  type ExtractedText,
  type ExtractionLimits,
} from './blocks.js';
import { boundHtmlNesting } from './html-nesting.js';
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
  readonly children: ArrayLike<DomElement>;
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

/** Parses `html`, its elements nested at most `maxHtmlDepth` deep (html-nesting.ts). */
function parseHtml(html: string): DomDocument {
  const complete = /<html[\s>]/i.test(html)
    ? html
    : `<html><head></head><body>${html}</body></html>`;
  return (parseHTML(boundHtmlNesting(complete).html) as { document: DomDocument }).document;
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

/** Class and id beyond this length are not read (real ones are short; the pattern backtracks). */
const maxNamesLength = 1000;

/** `inContent`: an ancestor is an <article>, <main> or <section>. */
function isChrome(element: DomElement, tag: string, inContent: boolean): boolean {
  if (chromeTags.has(tag)) return true;
  const role = element.getAttribute('role');
  if (role !== null && chromeRoles.has(role.toLowerCase())) return true;
  // A page's own header and footer (not an article's or a section's) are site chrome.
  if ((tag === 'header' || tag === 'footer') && !inContent) return true;
  const names = `${element.getAttribute('class') ?? ''} ${element.getAttribute('id') ?? ''}`;
  return chromeNamePattern.test(names.slice(0, maxNamesLength));
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

/** Elements inside which a <header> or <footer> belongs to the content, not to the site. */
const contentSectionTags = new Set(['article', 'main', 'section']);

/** The element's tag when it may hold visible content, else null. */
function visibleTag(element: DomElement, options: WalkOptions, inContent: boolean): string | null {
  const tag = element.localName.toLowerCase();
  if (invisibleTags.has(tag) || isHidden(element)) return null;
  if (options.dropChrome && isChrome(element, tag, inContent)) return null;
  return tag;
}

/** Whether `node` lies inside an <article>, <main> or <section> (it itself not counted). */
function startsInContent(node: DomNode): boolean {
  const parent = node.parentNode as Partial<DomElement> | null;
  return parent?.closest?.('article, main, section') != null;
}

/**
 * Visits the visible nodes under `root` (itself included) in document order, without recursion:
 * `enter` sees each element (it returns false to skip the element's children, or a function to
 * call after them) and `text` each text node. Every node is visited once: linear in the tree.
 */
function walkVisible(
  root: DomNode,
  options: WalkOptions,
  visit: {
    enter(element: DomElement, tag: string): boolean | (() => void);
    text(node: DomNode): void;
  },
): void {
  type Step = DomNode | (() => void);
  const steps: Step[] = [root];
  let contentDepth = startsInContent(root) ? 1 : 0;
  while (steps.length > 0) {
    const step = steps.pop()!;
    if (typeof step === 'function') {
      step();
      continue;
    }
    if (step.nodeType === textNode) {
      visit.text(step);
      continue;
    }
    if (step.nodeType !== elementNode && step.nodeType !== documentNode) continue;
    if (step.nodeType === elementNode) {
      const element = step as DomElement;
      const tag = visibleTag(element, options, contentDepth > 0);
      if (tag === null) continue;
      const entered = visit.enter(element, tag);
      if (entered === false) continue;
      const isContent = contentSectionTags.has(tag);
      if (isContent) contentDepth += 1;
      if (isContent || typeof entered === 'function') {
        steps.push(() => {
          if (isContent) contentDepth -= 1;
          if (typeof entered === 'function') entered();
        });
      }
    }
    const children = step.childNodes;
    for (let index = children.length - 1; index >= 0; index -= 1) steps.push(children[index]!);
  }
}

/** The visible text inside `node` on one line (headings, table cells, snippets). */
function inlineText(node: DomNode, options: WalkOptions): string {
  const parts: string[] = [];
  walkVisible(node, options, {
    enter(element, tag) {
      if (tag === 'img') parts.push(` ${element.getAttribute('alt') ?? ''} `);
      if (blockTags.has(tag) || tag === 'br') parts.push(' ');
      return true;
    },
    text(text) {
      parts.push(text.textContent ?? '');
    },
  });
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
  const markers = new ListMarkers();

  walkVisible(root, options, {
    text(node) {
      // Outside <pre>, line breaks in the markup are just spaces.
      buffer += (node.textContent ?? '').replace(/\s+/g, ' ');
    },
    enter(element, tag) {
      const headingLevel = /^h([1-6])$/.exec(tag);
      if (headingLevel !== null) {
        flush();
        collector.heading(Number(headingLevel[1]), inlineText(element, options));
        return false;
      }
      switch (tag) {
        case 'pre':
          flush();
          collector.block('code', element.textContent ?? '');
          return false;
        case 'br':
          buffer += '\n';
          return false;
        case 'img': {
          const alt = element.getAttribute('alt');
          if (alt !== null && alt.trim() !== '') buffer += ` ${alt} `;
          return false;
        }
        case 'tr': {
          flush();
          const cells = Array.from(element.children)
            .filter((cell) => cell.localName === 'td' || cell.localName === 'th')
            .map((cell) => inlineText(cell, options))
            .filter((cell) => cell !== '');
          collector.block('item', cells.join(' | '));
          return false;
        }
        case 'li': {
          flush();
          buffer = `${markers.of(element)} `;
          bufferKind = 'item';
          return flush;
        }
      }
      const isBlock = blockTags.has(tag);
      const isGroup = groupTags.has(tag);
      if (isBlock) flush();
      if (isGroup) groupDepth += 1;
      if (!isBlock && !isGroup) return true;
      return () => {
        if (isGroup) groupDepth -= 1;
        if (isBlock) flush();
        // A nested list continues its parent's lines.
        if (isGroup && groupDepth === 0) collector.endGroup();
      };
    },
  });
  flush();
}

/** `-`, or the item's number in an ordered list (counting from its `start`). */
class ListMarkers {
  /** Per ordered list, the number of each of its items (computed once per list). */
  private readonly numbers = new Map<DomElement, Map<DomElement, number>>();

  of(item: DomElement): string {
    const list = item.parentNode as Partial<DomElement> | null;
    if (list?.localName !== 'ol' || list.getAttribute === undefined) return '-';
    const ordered = list as DomElement;
    let numbers = this.numbers.get(ordered);
    if (numbers === undefined) {
      const start = Number(ordered.getAttribute('start') ?? '1');
      const first = Number.isFinite(start) ? start : 1;
      numbers = new Map(
        Array.from(ordered.children)
          .filter((child) => child.localName === 'li')
          .map((child, index) => [child, first + index]),
      );
      this.numbers.set(ordered, numbers);
    }
    return `${numbers.get(item) ?? 1}.`;
  }
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
export function htmlToText(html: string, limits: ExtractionLimits = {}): ExtractedText {
  return documentText(parseHtml(html), limits);
}

function documentText(document: DomDocument, limits: ExtractionLimits = {}): ExtractedText {
  const collector = new BlockCollector(limits);
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

/**
 * Readability reads documents at most this deep (and of at most this many elements). Its passes
 * measure the text of every candidate's subtree, so its time grows with elements × depth and
 * faster still in deep, empty trees (250 nested <div>: over a second). Pages deeper or larger
 * than this get the visible-text walk, which is linear.
 */
export const readabilityLimits = { maxDepth: 64, maxElements: 15_000 } as const;

const flat = (text: string) => text.replace(/\s+/g, ' ');

/** The deepest element's depth and the number of elements, in one pass without recursion. */
export function measureTree(root: DomNode): { depth: number; elements: number } {
  const stack: { node: DomNode; depth: number }[] = [{ node: root, depth: 0 }];
  let depth = 0;
  let elements = 0;
  while (stack.length > 0) {
    const { node, depth: at } = stack.pop()!;
    const children = (node as Partial<DomElement>).children;
    if (children === undefined) continue;
    for (let index = 0; index < children.length; index += 1) {
      elements += 1;
      depth = Math.max(depth, at + 1);
      stack.push({ node: children[index]!, depth: at + 1 });
    }
  }
  return { depth, elements };
}

function readabilityArticle(
  document: DomDocument,
): (ExtractedText & { excerpt: string | null; byline: string | null }) | null {
  const size = measureTree(document);
  if (size.depth > readabilityLimits.maxDepth || size.elements > readabilityLimits.maxElements) {
    return null;
  }
  try {
    // Read before Readability, which removes the heading it takes for the title.
    const heading = document.querySelector('h1, h2, h3, h4, h5, h6');
    const title =
      documentTitle(document) ??
      (heading === null ? null : inlineText(heading, { dropChrome: false }) || null);
    // The serializer hands back the article's element, so its text is walked as blocks.
    const Readability = readabilityClass();
    const article = new Readability<DomElement>(document, {
      serializer: (node: unknown) => node as DomElement,
      maxElemsToParse: readabilityLimits.maxElements,
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
 * page's visible text without navigation, headers, footers and ads. `readability: false` skips
 * Readability (a page it took too long over is read again that way).
 */
export function readableHtml(html: string, options: { readability?: boolean } = {}): ReadableHtml {
  const article = options.readability === false ? null : readabilityArticle(parseHtml(html));
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
