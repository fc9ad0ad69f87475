// Key hashing: HMAC-SHA256 with the server secret when one is configured, otherwise SHA-256.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export class KeyHasher {
  constructor(private readonly secret: string | null) {}

  hash(key: string): string {
    return this.secret === null
      ? createHash('sha256').update(key).digest('hex')
      : createHmac('sha256', this.secret).update(key).digest('hex');
  }

  /** Constant-time comparison of a presented key with a stored hash. */
  matches(key: string, storedHash: string): boolean {
    const presented = Buffer.from(this.hash(key), 'hex');
    const stored = Buffer.from(storedHash, 'hex');
    return presented.length === stored.length && timingSafeEqual(presented, stored);
  }
}
