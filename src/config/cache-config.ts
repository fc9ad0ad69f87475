// The exact response cache (`cache` in the config file, and a model entry's own `cache`): off by
// default; when on, an answer is kept for `ttl_s` seconds, in Redis when REDIS_URL is set, else in
// this process within `max_bytes`. Requests that sample (a temperature above 0 without a seed)
// are cached only with `sampled: true`: their answers are meant to differ.
import type { Static } from 'typebox';
import Type from 'typebox';
import { Closed, OptionalInteger } from './config-kit.js';

const cacheFields = {
  enabled: Type.Optional(Type.Boolean()),
  ttl_s: OptionalInteger(1, 30 * 86_400),
  /** Cache requests that sample too (temperature above 0 and no seed). */
  sampled: Type.Optional(Type.Boolean()),
};

/** A model entry's `cache`: what it changes of the global settings. */
export const ModelCacheSchema = Closed(cacheFields);

export const CacheFileSchema = Closed({
  ...cacheFields,
  /** The in-process store's size (Redis' is its own `maxmemory`). */
  max_bytes: OptionalInteger(1024, 64 * 1024 ** 3),
  /** An answer larger than this is not kept. */
  max_entry_bytes: OptionalInteger(256, 64 * 1024 ** 2),
});

export type ModelCacheEntry = Static<typeof ModelCacheSchema>;
type CacheFile = Static<typeof CacheFileSchema>;

export function cacheConfig(file: CacheFile = {}) {
  return {
    enabled: file.enabled ?? false,
    ttlSeconds: file.ttl_s ?? 3600,
    sampled: file.sampled ?? false,
    maxBytes: file.max_bytes ?? 64 * 1024 ** 2,
    maxEntryBytes: file.max_entry_bytes ?? 1024 ** 2,
  };
}

export type CacheConfig = ReturnType<typeof cacheConfig>;
