// Prefixed, unguessable identifiers (128 random bits) for every object the service makes, and the
// random base62 text they (and API keys) are made of.
import { randomFillSync } from 'node:crypto';

export const base62Alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn from the system a pool at a time: one call per id costs more than the
// id itself at request rates. Bytes are used once, then the pool is refilled.
const pool = Buffer.allocUnsafe(4096);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** Uniformly random base62 text (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += base62Alphabet[byte % 62];
  }
  return out;
}

export type IdPrefix =
  | 'acct'
  | 'key'
  | 'conv'
  | 'msg'
  | 'fb'
  | 'agent'
  | 'pipe'
  | 'stage'
  | 'exec'
  | 'kb'
  | 'doc'
  | 'chunk'
  | 'vs'
  | 'req'
  | 'inst'
  | 'sess'
  | 'int'
  | 'rfb'
  | 'pol'
  | 'step'
  | 'use'
  | 'bud'
  | 'rsv'
  | 'aud'
  | 'ssou';

/** 22 base62 characters carry 130 bits. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(22)}`;
}

/** Base62 digits of a millisecond time: nine reach the year 430,000. */
const timeDigits = 9;

/**
 * An id that sorts by the time it was made (to the millisecond; 77 random bits after it), for
 * rows written at a high rate — usage records. Each new row's key lands at the end of its index
 * instead of on a random page of it, so a batch dirties a few pages rather than one per row.
 * Same form as newId's: the prefix and 22 base62 characters.
 */
export function newTimeOrderedId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  let time = '';
  let rest = Math.max(0, Math.floor(nowMs));
  for (let digit = 0; digit < timeDigits; digit += 1) {
    time = base62Alphabet[rest % 62]! + time;
    rest = Math.floor(rest / 62);
  }
  return `${prefix}_${time}${randomBase62(22 - timeDigits)}`;
}
