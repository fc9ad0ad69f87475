// Where the exact response cache keeps answers: this process's memory (an LRU bounded in bytes,
// lru-cache) or Redis (shared by every instance; entries expire by their time to live, and the
// server's `maxmemory` bounds the whole). Keys are hashes: what a request said is never a key.
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { GenerationResult, StreamPart } from '../spec.js';

/** A kept answer: the result, and the parts it was streamed in when it was streamed. */
export interface CachedAnswer {
  readonly result: GenerationResult;
  readonly parts?: readonly StreamPart[] | undefined;
}

export interface ResponseStore {
  get(key: string): Promise<CachedAnswer | null>;
  set(key: string, answer: CachedAnswer, ttlMs: number): Promise<void>;
  close(): Promise<void>;
}

/** An answer as stored (its JSON), or null when larger than `maxEntryBytes`. */
export function serialised(answer: CachedAnswer, maxEntryBytes: number): string | null {
  const text = JSON.stringify(answer);
  return Buffer.byteLength(text) > maxEntryBytes ? null : text;
}

export class MemoryResponseStore implements ResponseStore {
  private readonly entries: LRUCache<string, string>;

  constructor(
    maxBytes: number,
    private readonly maxEntryBytes: number,
  ) {
    this.entries = new LRUCache<string, string>({
      maxSize: maxBytes,
      // Two bytes per UTF-16 unit, and the key.
      sizeCalculation: (value, key) => (value.length + key.length) * 2,
      // Entries' ages read from the clock at each lookup, with no 1 ms timer per reading.
      ttlResolution: 0,
    });
  }

  get(key: string): Promise<CachedAnswer | null> {
    const text = this.entries.get(key);
    return Promise.resolve(text === undefined ? null : (JSON.parse(text) as CachedAnswer));
  }

  set(key: string, answer: CachedAnswer, ttlMs: number): Promise<void> {
    const text = serialised(answer, this.maxEntryBytes);
    if (text !== null) this.entries.set(key, text, { ttl: ttlMs });
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.entries.clear();
    return Promise.resolve();
  }
}

export class RedisResponseStore implements ResponseStore {
  constructor(
    private readonly client: Redis,
    private readonly prefix: string,
    private readonly maxEntryBytes: number,
  ) {}

  async get(key: string): Promise<CachedAnswer | null> {
    const text = await this.client.get(`${this.prefix}:${key}`);
    return text === null ? null : (JSON.parse(text) as CachedAnswer);
  }

  async set(key: string, answer: CachedAnswer, ttlMs: number): Promise<void> {
    const text = serialised(answer, this.maxEntryBytes);
    if (text !== null) await this.client.set(`${this.prefix}:${key}`, text, 'PX', ttlMs);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
