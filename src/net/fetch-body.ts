// Reading a page's body: decompressed, capped in bytes, of a media type that is read as text.
import type http from 'node:http';
import { pipeline, type Readable, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import { acceptedMediaTypes, parseContentType, type ContentType } from './body-decoding.js';
import type { SafeFetchOptions } from './fetch-options.js';
import { shown, WebFetchError } from './web-fetch-error.js';

export function decompressor(response: http.IncomingMessage, url: URL): Transform | null {
  const encoding = (response.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  switch (encoding) {
    case 'identity':
    case '':
      return null;
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      throw new WebFetchError(
        'unsupported_content_type',
        url.href,
        `${shown(url)} was sent with content encoding '${encoding}', which page fetches do not decode.`,
      );
  }
}

/** Reads at most `maxBytes` (decoded); a larger body is cut there or refused. */
export async function readBody(
  response: http.IncomingMessage,
  url: URL,
  options: SafeFetchOptions,
  signal: AbortSignal,
): Promise<{ body: Buffer; truncated: boolean }> {
  const refuse = options.onTooLarge === 'refuse';
  const tooLarge = () =>
    new WebFetchError(
      'too_large',
      url.href,
      `${shown(url)} is larger than the ${options.maxBytes}-byte limit for fetched pages.`,
    );
  const declared = Number(response.headers['content-length'] ?? Number.NaN);
  if (refuse && response.headers['content-encoding'] === undefined && declared > options.maxBytes) {
    throw tooLarge();
  }
  const decoder = decompressor(response, url);
  // pipeline() tears the decoder down when the response breaks off, so the loop below cannot hang.
  const source: Readable = decoder === null ? response : pipeline(response, decoder, () => {});
  const onAbort = () => source.destroy(signal.reason as Error);
  signal.addEventListener('abort', onAbort, { once: true });
  const chunks: Buffer[] = [];
  let total = 0;
  let truncated = false;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      const room = options.maxBytes - total;
      if (chunk.length > room) {
        if (refuse) throw tooLarge();
        chunks.push(chunk.subarray(0, room));
        total += room;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      total += chunk.length;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    decoder?.destroy();
  }
  return { body: Buffer.concat(chunks, total), truncated };
}

export function checkContentType(response: http.IncomingMessage, url: URL): ContentType {
  const contentType = parseContentType(response.headers['content-type']);
  if (!acceptedMediaTypes.includes(contentType.mediaType)) {
    const what =
      contentType.mediaType === '' ? 'no content type' : `content type '${contentType.mediaType}'`;
    throw new WebFetchError(
      'unsupported_content_type',
      url.href,
      `${shown(url)} answered with ${what}; only ${acceptedMediaTypes.join(', ')} pages are read.`,
    );
  }
  return contentType;
}
