// Key hashing: HMAC-SHA256 with the server secret when one is configured, otherwise SHA-256.
import { createHmac, hash, timingSafeEqual } from 'node:crypto';

export class KeyHasher {
  constructor(private readonly secret: string | null) {}

  /** The key's digest (32 bytes). */
  digest(key: string): Buffer {
    return this.secret === null
      ? hash('sha256', key, 'buffer')
      : createHmac('sha256', this.secret).update(key).digest();
  }

  /** The hex form stored in the database. */
  hash(key: string): string {
    return this.digest(key).toString('hex');
  }

  /** Constant-time comparison of a presented key's digest with a stored one. */
  static sameDigest(presented: Buffer, stored: Buffer): boolean {
    return presented.length === stored.length && timingSafeEqual(presented, stored);
  }
}
