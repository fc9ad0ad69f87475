// What an image in a message costs in tokens, counted the way OpenAI documents it for its vision
// models: `detail: low` is 85 tokens; otherwise the image is scaled to fit 2048×2048, then its
// shorter side to 768, and it costs 85 + 170 per 512-pixel tile. The size is read from a data
// URL's header only (image-size, on at most the first 64 KiB decoded); an image behind a URL is
// never fetched for counting and is counted as a 1024×1024 image (765 tokens).
import { createRequire } from 'node:module';
import type * as ImageSize from 'image-size';

/**
 * image-size, loaded (as CommonJS, synchronously) with the first image: its readers of some twenty
 * formats take ~8 MiB that a service whose clients send no images never needs.
 */
let imageSize: typeof ImageSize.imageSize | undefined;
const loadImageSize = () =>
  (imageSize ??= (createRequire(import.meta.url)('image-size') as typeof ImageSize).imageSize);

const baseTokens = 85;
const tileTokens = 170;
/** What an image of unknown size counts as: 1024×1024 at high detail. */
export const unknownImageTokens = baseTokens + tileTokens * 4;
/** How much of a data URL's base64 is decoded to read the image's size. */
const headerBase64Chars = Math.ceil((64 * 1024) / 3) * 4;

/** Tokens for an image of this size at high detail. */
export function tiledImageTokens(width: number, height: number): number {
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shorten = Math.min(1, 768 / Math.min(w, h));
  w *= shorten;
  h *= shorten;
  return baseTokens + tileTokens * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** The pixel size of a base64 data URL's image, or null when its header cannot be read. */
function dataUrlSize(url: string): { width: number; height: number } | null {
  const comma = url.indexOf(',');
  if (comma < 0 || !url.slice(0, comma).endsWith(';base64')) return null;
  const head = url.slice(comma + 1, comma + 1 + headerBase64Chars);
  try {
    const size = loadImageSize()(Buffer.from(head, 'base64'));
    return size.width > 0 && size.height > 0 ? { width: size.width, height: size.height } : null;
  } catch {
    return null;
  }
}

export function imageTokens(url: string, detail: 'auto' | 'low' | 'high' | undefined): number {
  if (detail === 'low') return baseTokens;
  if (!url.startsWith('data:')) return unknownImageTokens;
  const size = dataUrlSize(url);
  return size === null ? unknownImageTokens : tiledImageTokens(size.width, size.height);
}
