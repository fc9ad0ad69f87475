// An account as the domain sees it: a tenant that owns keys and everything they create.

/** The platform owner's account administers the others; every other account is a member. */
export type AccountKind = 'owner' | 'member';

export interface Account {
  id: string;
  name: string;
  kind: AccountKind;
  createdAt: string;
}
