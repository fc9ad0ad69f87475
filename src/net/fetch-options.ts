// What a safe fetch is given: where it may go (the allow-list and how names resolve), its deadline
// and byte cap — shared by the fetch (safe-fetch.ts) and its target and body checks.
import type { TargetAllowList } from './address-policy.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Host-name resolution: every address the name has. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface SafeFetchOptions {
  allowList: TargetAllowList;
  /** Deadline for the whole fetch: DNS, every redirect hop and the body. */
  timeoutMs: number;
  /** Body bytes kept, after content decoding (gzip, br, deflate). */
  maxBytes: number;
  maxRedirects: number;
  userAgent: string;
  /**
   * What to do with a body larger than `maxBytes`: `truncate` (default) keeps the first `maxBytes`
   * and sets `truncated` (the start of a page is what extraction needs); `refuse` throws `too_large`.
   */
  onTooLarge?: 'truncate' | 'refuse';
  signal?: AbortSignal;
  /** Defaults to the system resolver (`dns.promises.lookup(host, { all: true })`). */
  resolve?: Resolver;
}

/** The operator's web settings a fetch's options are read from (`config.web`). */
export interface WebFetchSettings {
  readonly allowedPrivateTargets: readonly string[];
  readonly fetchTimeoutMs: number;
  readonly maxPageBytes: number;
  readonly maxRedirects: number;
  readonly userAgent: string;
}
