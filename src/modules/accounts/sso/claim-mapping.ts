// From the claims of a person who signed in to what they may do here: the account their
// `account_claim` names (by account id), and the union of the scopes `role_scopes` gives the roles
// their `role_claim` lists. Deny by default: no account, or no scope, and there is no login.
import type { Scope } from '../../../auth/scopes.js';
import type { OidcConfig } from './sso.config.js';

/** Roles a claim may list, and the length of one, past which the rest are not read. */
const maxRoles = 200;
const maxRoleLength = 200;

export type ClaimSet = Readonly<Record<string, unknown>>;

/**
 * A claim's value: the claim of that exact name (`https://example.com/roles` is one claim name),
 * else, for a dotted name, the path through nested objects (Keycloak's `realm_access.roles`).
 * Only own properties are read, so no name reaches an object's prototype.
 */
export function claimValue(claims: ClaimSet, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  if (!name.includes('.')) return undefined;
  let value: unknown = claims;
  for (const part of name.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    if (!Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The roles of a claim holding one string or a list of strings (other values name none). */
export function rolesOf(value: unknown): string[] {
  const listed = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  const roles = listed
    .slice(0, maxRoles)
    .filter(
      (role): role is string =>
        typeof role === 'string' && role.length > 0 && role.length <= maxRoleLength,
    );
  return [...new Set(roles)];
}

export type ClaimMapping =
  | {
      readonly granted: true;
      /** null: the platform owner's account (no `account_claim` configured). */
      readonly accountId: string | null;
      readonly roles: string[];
      readonly scopes: Scope[];
    }
  | { readonly granted: false; readonly reason: string; readonly roles: string[] };

/** The account and scopes the claims map to, or why they map to nothing. */
export function mapClaims(
  claims: ClaimSet,
  config: Pick<OidcConfig, 'accountClaim' | 'roleClaim' | 'roleScopes'>,
): ClaimMapping {
  const roles = rolesOf(claimValue(claims, config.roleClaim));
  let accountId: string | null = null;
  if (config.accountClaim !== null) {
    const value = claimValue(claims, config.accountClaim);
    if (typeof value !== 'string' || value.length === 0 || value.length > 64) {
      return {
        granted: false,
        roles,
        reason: `the identity provider gave no account for you (claim '${config.accountClaim}' is ${value === undefined ? 'missing' : 'not an account id'})`,
      };
    }
    accountId = value;
  }
  const table = new Map(Object.entries(config.roleScopes));
  const scopes = new Set<Scope>();
  for (const role of roles) for (const scope of table.get(role) ?? []) scopes.add(scope as Scope);
  if (scopes.size === 0) {
    return {
      granted: false,
      roles,
      reason:
        roles.length === 0
          ? `the identity provider gave you no role (claim '${config.roleClaim}'), so no scope is granted`
          : `none of your roles (${roles
              .slice(0, 10)
              .map((role) => `'${role}'`)
              .join(', ')}) grants a scope here`,
    };
  }
  return { granted: true, accountId, roles, scopes: [...scopes] };
}
