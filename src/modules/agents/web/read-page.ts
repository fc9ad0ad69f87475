// One page for an agent: fetched with the SSRF rules, then reduced to its readable text by the
// extractor the caller gives (the text worker threads in the service; see extract-page.ts).
import { TextTaskLimitError } from '../../../text-pool/text-pool.js';
import type { ExtractedPage, ExtractOptions } from './extract-page.js';
import { safeFetch, WebFetchError, type SafeFetchOptions } from '../../../net/safe-fetch.js';

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

/** Turns a fetched body into its text: extractPage, run where it cannot block the event loop. */
export type PageExtractor = (
  body: string,
  url: string,
  options: ExtractOptions,
) => Promise<ExtractedPage>;

/**
 * Fetches `url` (throws WebFetchError) and extracts its text, at most `maxChars` characters. A page
 * whose reading runs past the text workers' limits is read once more without Readability (the
 * visible text, in linear time); past that too it fails with reason `unreadable`.
 */
export async function readPage(
  url: string,
  options: SafeFetchOptions & { maxChars?: number; extract: PageExtractor },
): Promise<WebPage> {
  const fetched = await safeFetch(url, options);
  const extractOptions: ExtractOptions = {
    contentType: fetched.contentType,
    ...(options.maxChars === undefined ? {} : { maxChars: options.maxChars }),
  };
  let page: ExtractedPage;
  try {
    page = await options.extract(fetched.text, fetched.url, extractOptions);
  } catch (error) {
    if (!(error instanceof TextTaskLimitError)) throw error;
    try {
      page = await options.extract(fetched.text, fetched.url, {
        ...extractOptions,
        readability: false,
      });
    } catch (retryError) {
      if (!(retryError instanceof TextTaskLimitError)) throw retryError;
      throw new WebFetchError('unreadable', fetched.url, retryError.message, {
        cause: retryError,
      });
    }
  }
  return {
    url: fetched.url,
    title: page.title,
    text: page.text,
    excerpt: page.excerpt,
    ...(page.byline === undefined ? {} : { byline: page.byline }),
    truncated: fetched.truncated || page.truncated,
  };
}
