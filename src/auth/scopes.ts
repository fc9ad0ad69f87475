// Permission scopes and the declarative access rule every route states.

export const scopes = [
  'chat:read',
  'chat:write',
  'models:read',
  'conversations:read',
  'conversations:write',
  'voice:read',
  'voice:write',
  'agents:read',
  'agents:write',
  'usage:read',
  'admin',
] as const;

export type Scope = (typeof scopes)[number];

/**
 * How a route is protected. Every route must state one; a route without a rule fails at start-up.
 * - `public`: no key needed.
 * - `key`: any valid key, whatever its scopes.
 * - `scopes`: a valid key holding every listed scope (`admin` holds them all); `ownerOnly` also
 *   requires the key to belong to the platform owner's account.
 */
export type RouteAccess =
  | { readonly kind: 'public' }
  | { readonly kind: 'key' }
  | { readonly kind: 'scopes'; readonly scopes: readonly Scope[]; readonly ownerOnly: boolean };

export const access = {
  public: (): RouteAccess => ({ kind: 'public' }),
  anyKey: (): RouteAccess => ({ kind: 'key' }),
  scopes: (...required: Scope[]): RouteAccess => ({
    kind: 'scopes',
    scopes: required,
    ownerOnly: false,
  }),
  owner: (): RouteAccess => ({ kind: 'scopes', scopes: ['admin'], ownerOnly: true }),
};

/** The first required scope the key lacks, or null when it has them all. */
export function missingScope(granted: readonly Scope[], required: readonly Scope[]): Scope | null {
  if (granted.includes('admin')) return null;
  return required.find((scope) => !granted.includes(scope)) ?? null;
}
