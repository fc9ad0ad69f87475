// An API key as the domain sees it: its record (never the key itself, only its hash) and owner.
import type { AccountKind } from './account.js';
import type { Scope } from '../../auth/scopes.js';

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  keyHash: string;
  displayKey: string;
  scopes: Scope[];
  tier: string;
  allowedIps: string[];
  expiresAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
  revokedAt: string | null;
}

/** A key record with its account's kind, as the authenticator needs it. */
export interface CredentialRecord extends ApiKeyRecord {
  accountKind: AccountKind;
  /** The tier of the account's rate-limit ceiling (null: none, the owner's account). */
  accountTier: string | null;
}

/** What open sockets re-check (the credential watch's question of a key). */
export type { KeyState } from '../../auth/credential-watch.js';
