// Image URLs a provider cannot fetch itself (Google's older Gemini models, any http: URL there)
// fetched by the platform for it: through the web agent's address policy (no loopback, private or
// metadata addresses unless `web.allowed_private_targets` names them), with its time limit and
// redirect bound, image/* answers only, at most 10 MiB each.
import type { AppConfig } from '../../config/config.js';
import {
  safeFetchBinary,
  safeFetchOptionsFromConfig,
  WebFetchError,
  type SafeFetchOptions,
} from '../../net/safe-fetch.js';
import type { ImageFetcher } from './ai-sdk-target.js';

/** The largest image fetched for a provider. */
export const maxFetchedImageBytes = 10 * 1024 * 1024;

const imageAccept = {
  header: 'image/png, image/jpeg, image/webp, image/gif, image/*;q=0.8',
  accepts: (mediaType: string) => mediaType.startsWith('image/'),
  description: 'image/* content',
};

/** An image fetcher under these fetch options (the page limit replaced by the image limit). */
export function imageFetcher(
  options: Omit<SafeFetchOptions, 'signal' | 'onTooLarge' | 'maxBytes'>,
  maxBytes = maxFetchedImageBytes,
): ImageFetcher {
  return async (url, signal) => {
    try {
      const image = await safeFetchBinary(url, { ...options, maxBytes, signal }, imageAccept);
      return { data: image.data, mediaType: image.contentType };
    } catch (error) {
      if (error instanceof WebFetchError && error.reason === 'too_large') {
        throw new WebFetchError(
          'too_large',
          error.url,
          `The image is larger than ${maxBytes} bytes.`,
          { cause: error },
        );
      }
      throw error;
    }
  };
}

/** The fetcher configured by `web` (its allow-list parsed once, here). */
export function imageFetcherFromConfig(web: AppConfig['web']): ImageFetcher {
  return imageFetcher(safeFetchOptionsFromConfig(web));
}
