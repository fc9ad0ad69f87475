// One page for an agent: fetched with the SSRF rules, then reduced to its readable text.
import { extractPage } from './extract.js';
import { safeFetch, type SafeFetchOptions } from './safe-fetch.js';

export interface WebPage {
  /** The URL that answered (after redirects). */
  url: string;
  title: string;
  text: string;
  excerpt: string;
  byline?: string;
  /** Whether the body was cut at the byte limit or the text at `maxChars`. */
  truncated: boolean;
}

/** Fetches `url` (throws WebFetchError) and extracts its text, at most `maxChars` characters. */
export async function readPage(
  url: string,
  options: SafeFetchOptions & { maxChars?: number },
): Promise<WebPage> {
  const fetched = await safeFetch(url, options);
  const page = extractPage(fetched.text, fetched.url, {
    contentType: fetched.contentType,
    ...(options.maxChars === undefined ? {} : { maxChars: options.maxChars }),
  });
  return {
    url: fetched.url,
    title: page.title,
    text: page.text,
    excerpt: page.excerpt,
    ...(page.byline === undefined ? {} : { byline: page.byline }),
    truncated: fetched.truncated || page.truncated,
  };
}
