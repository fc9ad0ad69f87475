// Single sign-on for the dashboard (`auth.oidc` in the config file): the OpenID Connect provider
// (its issuer, found through its own discovery document), this service's client at it, and how the
// claims of a person who signed in map to an account and scopes. Absent: single sign-on is off.
// The client secret is never part of the configuration: only the name of the environment variable
// holding it is, and the secret is read from it when a sign-in needs it.
import Type, { type Static } from 'typebox';
import {
  Closed,
  EnvironmentVariableName,
  HttpUrl,
  type Env,
  type Problems,
} from '../../../config/config-kit.js';

const ClaimName = () =>
  Type.String({ minLength: 1, maxLength: 200, message: 'a claim name of 1 to 200 characters' });

export const OidcFileSchema = Closed({
  /** The issuer identifier, exactly as the provider's discovery document names it. */
  issuer: HttpUrl(),
  client_id: Type.String({ minLength: 1, maxLength: 512 }),
  /** The environment variable holding the client secret. */
  client_secret_env: EnvironmentVariableName(
    'the name of an environment variable (letters, digits, _)',
  ),
  /** Where the provider sends the browser back: this service's /v1/auth/oidc/callback. */
  redirect_url: Type.Optional(HttpUrl()),
  scopes: Type.Optional(
    Type.Array(
      Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,100}$', message: 'a scope token' }),
      { minItems: 1, maxItems: 30 },
    ),
  ),
  /** The claim whose value is the id of the account (`acct_…`) the person belongs to. */
  account_claim: Type.Optional(ClaimName()),
  /** The claim holding the person's roles: a string or a list of strings. */
  role_claim: Type.Optional(ClaimName()),
  /** Role → the scopes it grants; a person gets the union over their roles. */
  role_scopes: Type.Optional(
    Type.Record(
      Type.String({ pattern: '^[^\\x00-\\x1f]{1,200}$' }),
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 }),
    ),
  ),
  /**
   * Where the provider sends the browser after signing it out there (register it at the provider);
   * default: the dashboard's start page on the redirect URL's origin.
   */
  post_logout_redirect_url: Type.Optional(HttpUrl()),
  /** The provider's name on the login page's button ("Sign in with …"). */
  display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 60 })),
  /** Allows an `http:` issuer that is not a loopback address (never in production). */
  allow_http: Type.Optional(Type.Boolean()),
});

export const AuthFileSchema = Closed({
  oidc: Type.Optional(OidcFileSchema),
});

type OidcFile = Static<typeof OidcFileSchema>;

/** The single sign-on settings the service runs with (`auth.oidc`); null when it is off. */
export interface OidcConfig {
  readonly issuer: string;
  readonly clientId: string;
  /** The environment variable the client secret is read from when a sign-in needs it. */
  readonly clientSecretEnv: string;
  /** null: `PUBLIC_URL` (else the request's own origin) + `/v1/auth/oidc/callback`. */
  readonly redirectUrl: string | null;
  /** null: the redirect URL's origin (else `PUBLIC_URL`'s, else the request's) + `/`. */
  readonly postLogoutRedirectUrl: string | null;
  readonly scopes: readonly string[];
  /** null: every person belongs to the platform owner's account. */
  readonly accountClaim: string | null;
  readonly roleClaim: string;
  readonly roleScopes: Readonly<Record<string, readonly string[]>>;
  readonly displayName: string;
  /** Whether the issuer (and so every endpoint it names) may be reached over plain HTTP. */
  readonly allowHttp: boolean;
}

/** Whether a URL's host is a loopback address or `localhost` (plain HTTP stays on the machine). */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

function checkIssuer(file: OidcFile, where: string, problems: Problems): boolean {
  const issuer = new URL(file.issuer);
  const plainHttp = issuer.protocol === 'http:';
  if (plainHttp && !isLoopbackHost(issuer.hostname) && file.allow_http !== true) {
    problems.push(
      `${where}.issuer: '${file.issuer}' is plain HTTP; the issuer must be https:// (http is taken only for a loopback address, or with auth.oidc.allow_http: true on a network you trust)`,
    );
  }
  if (issuer.search !== '' || issuer.hash !== '' || issuer.pathname.includes('/.well-known/')) {
    problems.push(
      `${where}.issuer: give the issuer identifier itself (as the provider's discovery document names it), without a query, fragment or /.well-known/ path`,
    );
  }
  return plainHttp;
}

/** `role_scopes`: every scope must be a scope of the API; a role granting none is a mistake. */
function checkRoleScopes(
  roleScopes: Record<string, string[]>,
  knownScopes: readonly string[],
  where: string,
  problems: Problems,
): void {
  for (const [role, granted] of Object.entries(roleScopes)) {
    const unknown = granted.filter((scope) => !knownScopes.includes(scope));
    if (unknown.length > 0) {
      problems.push(
        `${where}.role_scopes.${role}: ${unknown.map((scope) => `'${scope}'`).join(', ')} ${unknown.length === 1 ? 'is not a scope' : 'are not scopes'} of the API (${knownScopes.join(', ')})`,
      );
    }
  }
}

/**
 * The settings of `auth.oidc`, checked beyond its schema: an https issuer (http only for loopback
 * or with `allow_http`), the client secret's variable set, known scopes in `role_scopes`.
 */
export function oidcConfig(
  file: OidcFile | undefined,
  context: { label: string; problems: Problems; env: Env; knownScopes: readonly string[] },
): OidcConfig | null {
  if (file === undefined) return null;
  const where = `${context.label}: auth.oidc`;
  const plainHttp = checkIssuer(file, where, context.problems);
  const secret = context.env[file.client_secret_env];
  if (secret === undefined || secret === '') {
    context.problems.push(
      `${where}.client_secret_env: the environment variable ${file.client_secret_env} (the OpenID Connect client secret) is not set`,
    );
  }
  const roleScopes = file.role_scopes ?? {};
  checkRoleScopes(roleScopes, context.knownScopes, where, context.problems);
  const scopes = file.scopes ?? ['openid', 'email', 'profile'];
  if (!scopes.includes('openid')) {
    context.problems.push(`${where}.scopes: must include 'openid' (this is OpenID Connect)`);
  }
  return {
    issuer: file.issuer,
    clientId: file.client_id,
    clientSecretEnv: file.client_secret_env,
    redirectUrl: file.redirect_url ?? null,
    postLogoutRedirectUrl: file.post_logout_redirect_url ?? null,
    scopes,
    accountClaim: file.account_claim ?? null,
    roleClaim: file.role_claim ?? 'roles',
    roleScopes,
    displayName: file.display_name ?? new URL(file.issuer).host,
    allowHttp: plainHttp,
  };
}
