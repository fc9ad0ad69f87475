// A fetched page's readable text: Readability's article, else the visible text; text bodies pass
// through. Runs in the text worker threads (text-pool), never on the event loop: HTML parsing and
// Readability take time that grows with the page's size and shape.
import { truncateText } from '../../../text/cut.js';
import { readableHtml } from '../../../text/html-text.js';
import { markdownTitle } from '../../../text/markdown-text.js';
import { normaliseWhitespace, tidyPlainText } from '../../../text/plain-text.js';

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
  /** false: the visible text without trying Readability (a page it took too long over). */
  readability?: boolean;
}

export const defaultMaxChars = 50_000;
const maxExcerptChars = 300;
const maxTitleChars = 300;

function singleLine(text: string | null | undefined, maxChars: number): string {
  return truncateText(normaliseWhitespace(text ?? '').replace(/\n+/g, ' '), maxChars).text;
}

/**
 * Extracts `body` fetched from `url`: for HTML, Readability's article when it finds one, else the
 * page's visible text without scripts, styles, navigation, headers, footers and ads (the title
 * falls back to the URL); plain-text, Markdown and JSON bodies pass through with tidied lines.
 */
export function extractPage(
  body: string,
  url: string,
  options: ExtractOptions = {},
): ExtractedPage {
  const maxChars = options.maxChars ?? defaultMaxChars;
  const contentType = (options.contentType ?? 'text/html').toLowerCase();
  const isHtml = contentType === 'text/html' || contentType === 'application/xhtml+xml';
  const page = isHtml
    ? readableHtml(body, { readability: options.readability ?? true })
    : {
        text: tidyPlainText(body),
        title: contentType === 'text/markdown' ? markdownTitle(body) : '',
        excerpt: null,
        byline: null,
        method: 'plain_text' as const,
      };
  const capped = truncateText(page.text, maxChars);
  const byline = singleLine(page.byline, maxTitleChars);
  return {
    title: singleLine(isHtml ? (page.title ?? url) : page.title, maxTitleChars),
    text: capped.text,
    excerpt: singleLine(page.excerpt, maxExcerptChars) || singleLine(capped.text, 200),
    ...(byline === '' ? {} : { byline }),
    length: capped.text.length,
    truncated: capped.truncated,
    method: page.method,
  };
}
