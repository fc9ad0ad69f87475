// An account as the domain sees it: a tenant that owns keys and everything they create.

/** The platform owner's account administers the others; every other account is a member. */
export type AccountKind = 'owner' | 'member';

export interface Account {
  id: string;
  name: string;
  kind: AccountKind;
  createdAt: string;
  /**
   * The rate-limit tier of the account's ceiling (all its keys together): the tier of the admin
   * key it was created with. Null or absent for none (the owner's account): no ceiling above its
   * keys' own limits.
   */
  tier?: string | null;
}
