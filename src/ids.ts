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
  | 'rsv';

/** 22 base62 characters carry 130 bits. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(22)}`;
}
