// API key format: `sk-` + 42 random base62 characters + a 6-character checksum of them.
import { createHash } from 'node:crypto';
import { base62Alphabet as alphabet, randomBase62 } from '../../ids.js';

const prefix = 'sk-';
const bodyLength = 42;
const checksumLength = 6;
// Bounded, so that hashing a presented key costs a known amount of work.
const keyPattern = /^sk-[A-Za-z0-9]{46,120}$/;

function checksumOf(body: string): string {
  const digest = createHash('sha256').update(body).digest();
  let out = '';
  for (let index = 0; index < checksumLength; index += 1) out += alphabet[digest[index]! % 62];
  return out;
}

export function generateApiKey(): string {
  const body = randomBase62(bodyLength);
  return `${prefix}${body}${checksumOf(body)}`;
}

/** True when the key has the prefix, alphabet and length of a key (its checksum unchecked). */
export function hasKeyShape(key: string): boolean {
  return keyPattern.test(key);
}

/** True when the key has the right shape and its checksum matches: no database read needed. */
export function isWellFormedApiKey(key: string): boolean {
  if (!keyPattern.test(key)) return false;
  const body = key.slice(prefix.length, key.length - checksumLength);
  return checksumOf(body) === key.slice(key.length - checksumLength);
}

/** The short form shown in listings: `sk-…` and the last four characters. */
export function displayFormOf(key: string): string {
  return `sk-…${key.slice(-4)}`;
}
