// HTML to text, once for the service: linkedom parses (html-dom.ts), one walker turns the visible
// content into blocks under their headings (html-walk.ts, html-blocks.ts), and Readability picks a
// page's article when one is wanted.
import { BlockCollector, type ExtractedText, type ExtractionLimits } from './blocks.js';
import { collectBlocks, inlineText } from './html-blocks.js';
import {
  parseHtml,
  readabilityClass,
  type DomDocument,
  type DomElement,
  type DomNode,
} from './html-dom.js';
import { collapseWhitespace } from './plain-text.js';

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
