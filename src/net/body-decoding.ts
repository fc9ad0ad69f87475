// Turns a fetched body into text: which media types are accepted, and which character encoding to decode with.
import { TextDecoder } from 'node:util';

/** Media types page fetches accept; anything else is refused before its body is read. */
export const acceptedMediaTypes: readonly string[] = [
  'text/html',
  'application/xhtml+xml',
  'text/plain',
  'text/markdown',
  'application/json',
];

export const acceptHeader =
  'text/html, application/xhtml+xml, text/markdown, text/plain;q=0.9, application/json;q=0.8';

export interface ContentType {
  /** Lower-case media type without parameters; '' when the header is missing. */
  mediaType: string;
  charset: string | null;
}

export function parseContentType(header: string | undefined): ContentType {
  if (header === undefined) return { mediaType: '', charset: null };
  const [type = '', ...parameters] = header.split(';');
  let charset: string | null = null;
  for (const parameter of parameters) {
    const match = /^\s*charset\s*=\s*"?([^";\s]+)"?\s*$/i.exec(parameter);
    if (match?.[1] !== undefined) charset = match[1].toLowerCase();
  }
  return { mediaType: type.trim().toLowerCase(), charset };
}

function isHtml(mediaType: string): boolean {
  return mediaType === 'text/html' || mediaType === 'application/xhtml+xml';
}

function bomEncoding(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return null;
}

/** `<meta charset>` or `<meta http-equiv="content-type" content="…charset=…">` in the first 1024 bytes. */
function metaCharset(bytes: Uint8Array): string | null {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  const match = /<meta[^>]+charset\s*=\s*["']?\s*([a-z0-9_:.-]+)/i.exec(head);
  if (match?.[1] === undefined) return null;
  const label = match[1].toLowerCase();
  // The HTML standard: a meta tag cannot declare UTF-16 (the bytes would not be ASCII-compatible).
  return label.startsWith('utf-16') ? 'utf-8' : label;
}

function decoderFor(label: string | null): TextDecoder {
  if (label !== null) {
    try {
      return new TextDecoder(label);
    } catch {
      // An unknown label: fall through to UTF-8, as browsers do for unsupported encodings.
    }
  }
  return new TextDecoder('utf-8');
}

/**
 * Decodes with the byte-order mark, else the header's charset, else (HTML) a meta charset, else
 * UTF-8. A truncated body may end inside a multi-byte character: it is not flushed, so that partial
 * sequence is left out instead of becoming U+FFFD.
 */
export function decodeBody(
  bytes: Uint8Array,
  contentType: ContentType,
  truncated: boolean,
): { text: string; encoding: string } {
  const label =
    bomEncoding(bytes) ??
    contentType.charset ??
    (isHtml(contentType.mediaType) ? metaCharset(bytes) : null);
  const decoder = decoderFor(label);
  // Always the streaming path: Node 20's one-shot windows-1252 decode is plain latin1 (0x80–0x9f
  // come out as control characters instead of “ ” € …); the streaming decoder gets them right.
  const text = decoder.decode(bytes, { stream: true }) + (truncated ? '' : decoder.decode());
  return { text, encoding: decoder.encoding };
}
