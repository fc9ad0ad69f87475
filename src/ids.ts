// Prefixed, unguessable identifiers (128 random bits) for every object the service makes.
import { randomBase62 } from './auth/api-key-format.js';

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
  | 'inst';

/** 22 base62 characters carry 130 bits. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(22)}`;
}
