// Readable text of a fetched page: the article Readability finds, else the body's visible text;
// plain-text, markdown and JSON bodies pass through.
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';

export interface ExtractedPage {
  title: string;
  text: string;
  /** A sentence or two: the page's description, else the start of the text. */
  excerpt: string;
  byline?: string;
  /** Characters in `text`. */
  length: number;
  /** Whether `text` was cut at `maxChars`. */
  truncated: boolean;
  /** How the text was found. */
  method: 'readability' | 'visible_text' | 'plain_text';
}

export interface ExtractOptions {
  /** The body's media type (safeFetch's `contentType`); HTML when absent. */
  contentType?: string;
  /** Longest `text` returned, in characters. */
  maxChars?: number;
}

export const defaultMaxChars = 50_000;
const maxExcerptChars = 300;
const maxTitleChars = 300;

/*
 * The DOM as far as this module walks it. The project compiles without the DOM library, so
 * linkedom's and Readability's `Document`/`Node` types do not resolve; these name what is used.
 */
interface DomNode {
  nodeType: number;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
}

interface DomElement extends DomNode {
  localName: string;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
}

interface DomDocument extends DomNode {
  title: string;
  body: DomElement | null;
  documentElement: DomElement;
  querySelector(selectors: string): DomElement | null;
}

const elementNode = 1;
const textNode = 3;
const documentNode = 9;

/** Never visible, whatever the page. */
const invisibleTags = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'head',
  'title',
  'svg',
  'canvas',
  'iframe',
  'object',
  'embed',
  'video',
  'audio',
  'picture',
  'img',
  'button',
  'select',
  'input',
  'textarea',
  'dialog',
]);

/** Site chrome around the content; dropped from the whole-page fallback only. */
const chromeTags = new Set(['nav', 'header', 'footer', 'aside', 'form', 'menu']);
const chromeRoles = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search']);
// Class or id words of ads and overlays (`ad`, `ads`, `ad-slot`, `advertisement`, `sponsored`, …).
const chromeNamePattern =
  /(?:^|[\s_-])(?:ads?|advert\w*|sponsor\w*|promo\w*|banner|cookie\w*|popup|paywall)(?:$|[\s_-])/i;

const paragraphTags = new Set([
  'p',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'blockquote',
  'pre',
  'table',
  'ul',
  'ol',
  'dl',
  'figure',
  'section',
  'article',
  'main',
  'hr',
]);
const lineTags = new Set([
  'div',
  'li',
  'tr',
  'dt',
  'dd',
  'figcaption',
  'caption',
  'address',
  'details',
  'summary',
]);

function isChrome(element: DomElement): boolean {
  if (chromeTags.has(element.localName)) return true;
  const role = element.getAttribute('role');
  if (role !== null && chromeRoles.has(role.toLowerCase())) return true;
  const names = `${element.getAttribute('class') ?? ''} ${element.getAttribute('id') ?? ''}`;
  return chromeNamePattern.test(names);
}

function isHidden(element: DomElement): boolean {
  if (element.hasAttribute('hidden')) return true;
  if (element.getAttribute('aria-hidden') === 'true') return true;
  const style = element.getAttribute('style') ?? '';
  return /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)/i.test(style);
}

// Block boundaries are marked while walking (with private-use characters, which pages do not use)
// and resolved at the end, so adjacent blocks give one break, not one per closing and opening tag:
// a run of marks holding a paragraph mark becomes a blank line, any other run a line break.
const lineMark = '\ue000';
const paragraphMark = '\ue001';
const breakRuns = /[^\S\n]*[\ue000\ue001][\s\ue000\ue001]*/g;

/** The text a reader would see, with paragraph and line breaks where the blocks are. */
function visibleText(root: DomNode, dropChrome: boolean): string {
  const parts: string[] = [];
  const walk = (node: DomNode, preformatted: boolean) => {
    if (node.nodeType === textNode) {
      // Outside <pre>, line breaks in the markup are just spaces.
      const text = node.textContent ?? '';
      parts.push(preformatted ? text : text.replace(/\s+/g, ' '));
      return;
    }
    if (node.nodeType !== elementNode && node.nodeType !== documentNode) return;
    let mark = '';
    if (node.nodeType === elementNode) {
      const element = node as DomElement;
      const tag = element.localName.toLowerCase();
      if (invisibleTags.has(tag) || isHidden(element)) return;
      if (dropChrome && isChrome(element)) return;
      if (tag === 'br') {
        parts.push('\n');
        return;
      }
      if (tag === 'td' || tag === 'th') parts.push(' ');
      mark = paragraphTags.has(tag) ? paragraphMark : lineTags.has(tag) ? lineMark : '';
      preformatted ||= tag === 'pre';
    }
    parts.push(mark);
    for (let index = 0; index < node.childNodes.length; index += 1) {
      const child = node.childNodes[index];
      if (child !== undefined) walk(child, preformatted);
    }
    parts.push(mark);
  };
  walk(root, false);
  const text = parts
    .join('')
    .replace(breakRuns, (run) => (run.includes(paragraphMark) ? '\n\n' : '\n'));
  return normaliseWhitespace(text);
}

/** One space between words, one blank line at most between paragraphs, no zero-width characters. */
export function normaliseWhitespace(text: string): string {
  return text
    .replace(/[\u200b-\u200d\u2060\ufeff]/g, '')
    .replace(/\r\n?/g, '\n')
    .replace(/[^\S\n]+/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Plain text keeps its indentation (code, markdown lists); only line ends and blank runs are tidied. */
function tidyPlainText(text: string): string {
  return text
    .replace(/[\u200b-\u200d\u2060\ufeff]/g, '')
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\n+|\n+$/g, '');
}

function singleLine(text: string | null | undefined, maxChars: number): string {
  return cap(normaliseWhitespace(text ?? '').replace(/\n+/g, ' '), maxChars).text;
}

/** Cuts at a word boundary near the limit (never inside a surrogate pair). */
function cap(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text, truncated: false };
  let end = maxChars;
  const space = text.lastIndexOf(' ', maxChars);
  const newline = text.lastIndexOf('\n', maxChars);
  const boundary = Math.max(space, newline);
  if (boundary > maxChars * 0.9) end = boundary;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: text.slice(0, end).trimEnd(), truncated: true };
}

function result(
  fields: { title: string; text: string; excerpt?: string | null; byline?: string | null },
  method: ExtractedPage['method'],
  maxChars: number,
): ExtractedPage {
  const capped = cap(fields.text, maxChars);
  const excerpt = singleLine(fields.excerpt, maxExcerptChars) || singleLine(capped.text, 200);
  const byline = singleLine(fields.byline, maxTitleChars);
  return {
    title: singleLine(fields.title, maxTitleChars),
    text: capped.text,
    excerpt,
    ...(byline === '' ? {} : { byline }),
    length: capped.text.length,
    truncated: capped.truncated,
    method,
  };
}

/**
 * linkedom is not a full HTML5 parser: without an <html> element it drops content that browsers
 * would put in an implied body, so such documents get the wrappers written out.
 */
function parseDocument(html: string): DomDocument {
  const complete = /<html[\s>]/i.test(html)
    ? html
    : `<html><head></head><body>${html}</body></html>`;
  return (parseHTML(complete) as unknown as { document: DomDocument }).document;
}

function markdownTitle(text: string): string {
  return /^#{1,6}[ \t]+(.+?)[ \t#]*$/m.exec(text)?.[1] ?? '';
}

/** Readability's default `charThreshold`: below it, it is unsure it found the article. */
const readabilityCharThreshold = 500;

function flat(text: string): string {
  return text.replace(/\s+/g, ' ');
}

/** The <title> (wherever linkedom put it), else the first heading, else the URL. */
function titleOf(document: DomDocument, url: string): string {
  return (
    document.title ||
    (document.querySelector('title')?.textContent ?? '') ||
    (document.querySelector('h1')?.textContent ?? '') ||
    url
  );
}

function readabilityArticle(
  html: string,
  url: string,
): { title: string; text: string; excerpt: string | null; byline: string | null } | null {
  try {
    const document = parseDocument(html);
    // The serializer hands back the article's element, so its text is walked with block breaks.
    const article = new Readability<DomElement>(document, {
      serializer: (node: unknown) => node as DomElement,
    }).parse();
    if (article === null || !article.content) return null;
    const text = visibleText(article.content, false);
    if (text === '') return null;
    return {
      title: article.title || titleOf(document, url),
      text,
      excerpt: article.excerpt ?? null,
      byline: article.byline ?? null,
    };
  } catch {
    // Readability gives up on some documents by throwing rather than returning null.
    return null;
  }
}

/**
 * Extracts `html` (or a text body) fetched from `url`: Readability's article when it finds one,
 * else the body's visible text without scripts, styles, navigation, headers, footers and ads.
 */
export function extractPage(
  body: string,
  url: string,
  options: ExtractOptions = {},
): ExtractedPage {
  const maxChars = options.maxChars ?? defaultMaxChars;
  const contentType = (options.contentType ?? 'text/html').toLowerCase();
  if (contentType !== 'text/html' && contentType !== 'application/xhtml+xml') {
    const text = tidyPlainText(body);
    const title = contentType === 'text/markdown' ? markdownTitle(text) : '';
    return result({ title, text }, 'plain_text', maxChars);
  }

  const readable = readabilityArticle(body, url);
  // Readability's pick is trusted when long enough to pass its own threshold; a shorter one only
  // when it lies within the page's non-chrome text (on small pages it sometimes picks the menu).
  if (readable !== null && readable.text.length >= readabilityCharThreshold) {
    return result(readable, 'readability', maxChars);
  }
  // Readability changes the document it parses, so the fallback reads a fresh one. It walks the
  // whole document, not just <body>: linkedom puts content outside it when a page omits the tag.
  const document = parseDocument(body);
  const text = visibleText(document, true);
  if (readable !== null && flat(text).includes(flat(readable.text))) {
    return result(readable, 'readability', maxChars);
  }
  const title = titleOf(document, url);
  const description = document.querySelector('meta[name="description"]')?.getAttribute('content');
  return result({ title, text, excerpt: description ?? null }, 'visible_text', maxChars);
}
