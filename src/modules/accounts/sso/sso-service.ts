// Single sign-on for the dashboard: the authorization-code flow with PKCE at the OpenID Connect
// provider, ended in a session like a key login's. A sign-in under way is kept server-side (its PKCE
// verifier, state, nonce and return path), found by the hash of a random value in the browser's
// short-lived cookie and taken once. The person's claims map to an account and scopes (deny by
// default); they are provisioned on first sign-in with a key minted for them (never shown), whose
// scopes follow their claims at every sign-in, and the session is opened on that key — so it has
// the key login's cookie, CSRF, limits and revocation rules, and revoking the key logs them out.
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { SecretSource } from '../../../config/config.js';
import { AppError } from '../../../errors/app-error.js';
import type { OpenedSession, SessionService } from '../session-service.js';
import { mapClaims, type ClaimSet } from './claim-mapping.js';
import {
  isControlCharacter,
  OidcProviderClient,
  openidClient,
  ssoFailed,
  translateOidcError,
  withoutControlCharacters,
} from './oidc-provider-client.js';
import type { SsoProvisioning } from './sso-provisioning.js';
import type { SsoUserRecord, SsoUsersRepository } from './sso-users.repository.js';
import type { OidcConfig } from './sso.config.js';

/** How long a sign-in may take at the provider. */
export const loginTtlMs = 10 * 60_000;
export const callbackPath = '/v1/auth/oidc/callback';

export interface SsoServiceOptions {
  config: OidcConfig;
  secrets: SecretSource;
  /** `PUBLIC_URL`'s origin, the default redirect URL's; null: the request's own origin. */
  publicOrigin: string | null;
  users: SsoUsersRepository;
  provisioning: SsoProvisioning;
  sessions: SessionService;
  logger: Logger;
  now: () => number;
}

export interface StartedSignIn {
  /** The browser cookie's value: only its hash is stored. */
  cookieValue: string;
  authorizationUrl: string;
}

export interface FinishedSignIn {
  opened: OpenedSession;
  user: SsoUserRecord;
  returnTo: string;
}

/** A refused sign-in: its error, and what is known of the person (for the audit log). */
export class SignInFailure extends Error {
  constructor(
    readonly error: AppError,
    readonly subject: string | null,
    readonly email: string | null,
  ) {
    super(error.message);
    this.name = 'SignInFailure';
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * A dashboard path to go to after signing in: a local path only (`/keys?x=1`), never another
 * origin (`//evil.example`, `/\evil.example`, `https://…`); anything else is `/`.
 */
export function safeReturnPath(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 1000) return '/';
  if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return '/';
  if ([...value].some(isControlCharacter)) return '/';
  const base = 'http://dashboard.invalid';
  const resolved = new URL(value, base);
  if (resolved.origin !== base || resolved.pathname.startsWith('/v1/auth/oidc')) return '/';
  // Dot segments can fold into `//` (`/.//evil.example`): a scheme-relative URL, another host.
  const path = `${resolved.pathname}${resolved.search}${resolved.hash}`;
  return path.startsWith('//') ? '/' : path;
}

/** A profile claim as stored: a string, control characters dropped, bounded. */
function boundedText(value: unknown, max: number): string | null {
  if (typeof value !== 'string') return null;
  const text = withoutControlCharacters(value, '').trim();
  return text === '' ? null : text.slice(0, max);
}

export class SsoService {
  private readonly client: OidcProviderClient;

  constructor(private readonly options: SsoServiceOptions) {
    this.client = new OidcProviderClient(
      options.config,
      options.secrets,
      options.logger,
      options.now,
    );
  }

  get displayName(): string {
    return this.options.config.displayName;
  }

  /** Where the provider sends the browser back: configured, else this service's callback. */
  private redirectUri(requestOrigin: string): string {
    const { config, publicOrigin } = this.options;
    return config.redirectUrl ?? `${publicOrigin ?? requestOrigin}${callbackPath}`;
  }

  /**
   * Where to send the browser to sign the person out at the provider too (OpenID Connect
   * RP-initiated logout), when the provider offers it; null otherwise. No ID token is kept, so the
   * request names this client (`client_id`) and where to come back.
   */
  async endSessionUrl(requestOrigin: string): Promise<string | null> {
    const { config } = this.options;
    const configuration = await this.client.configuration();
    if (configuration.serverMetadata().end_session_endpoint === undefined) return null;
    const origin = new URL(this.redirectUri(requestOrigin)).origin;
    const oidc = await openidClient();
    return oidc.buildEndSessionUrl(configuration, {
      client_id: config.clientId,
      post_logout_redirect_uri: config.postLogoutRedirectUrl ?? `${origin}/`,
    }).href;
  }

  /** Starts a sign-in: the provider's authorization URL, and the cookie that binds it to this browser. */
  async begin(returnTo: unknown, requestOrigin: string): Promise<StartedSignIn> {
    const { config, users, now } = this.options;
    const oidc = await openidClient();
    const configuration = await this.client.configuration();
    const redirectUri = this.redirectUri(requestOrigin);
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const cookieValue = randomBytes(32).toString('base64url');
    const at = now();
    await users.insertLoginState({
      id: sha256(cookieValue),
      state,
      nonce,
      codeVerifier,
      redirectUri,
      returnTo: safeReturnPath(returnTo),
      createdAt: new Date(at).toISOString(),
      expiresAt: new Date(at + loginTtlMs).toISOString(),
    });
    // Sign-ins never finished are removed as new ones begin.
    users
      .deleteExpiredLoginStates(new Date(at).toISOString())
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error }, 'could not remove expired sign-ins'),
      );
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: config.scopes.join(' '),
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { cookieValue, authorizationUrl: url.href };
  }

  /**
   * Ends a sign-in: the provider's answer (the callback's query) checked against the sign-in this
   * browser started, the code exchanged, the claims mapped, the person provisioned, a session opened.
   * Failures are `SignInFailure`s (thrown), with what is known of the person.
   */
  async finish(
    cookieValue: string | undefined,
    query: string,
    client: { address: string; userAgent: string },
  ): Promise<FinishedSignIn> {
    const identity: { subject: string | null; email: string | null } = {
      subject: null,
      email: null,
    };
    try {
      const { claims, returnTo } = await this.exchange(cookieValue, query);
      identity.subject = typeof claims.sub === 'string' ? claims.sub.slice(0, 255) : null;
      identity.email = boundedText(claims.email, 320);
      return { ...(await this.signIn(claims, client)), returnTo };
    } catch (error) {
      const translated = translateOidcError(
        error,
        this.options.config.issuer,
        await openidClient(),
      );
      if (translated === null) throw error;
      throw new SignInFailure(translated, identity.subject, identity.email);
    }
  }

  /** The sign-in's checks and the code's exchange; the person's claims (ID token, then userinfo). */
  private async exchange(
    cookieValue: string | undefined,
    query: string,
  ): Promise<{ claims: ClaimSet; returnTo: string }> {
    const noSignIn = ssoFailed(
      `no sign-in was started in this browser, it was already used, or it took longer than ${loginTtlMs / 60_000} minutes`,
    );
    if (cookieValue === undefined || cookieValue === '' || cookieValue.length > 100) throw noSignIn;
    const started = await this.options.users.takeLoginState(sha256(cookieValue));
    if (started === undefined || Date.parse(started.expiresAt) <= this.options.now()) {
      throw noSignIn;
    }
    const oidc = await openidClient();
    const configuration = await this.client.configuration();
    const currentUrl = new URL(started.redirectUri);
    currentUrl.search = query;
    const tokens = await oidc.authorizationCodeGrant(configuration, currentUrl, {
      pkceCodeVerifier: started.codeVerifier,
      expectedState: started.state,
      expectedNonce: started.nonce,
      idTokenExpected: true,
    });
    const idClaims = tokens.claims();
    if (idClaims === undefined) throw ssoFailed('the identity provider sent no ID token');
    const { accountClaim, roleClaim } = this.options.config;
    const lacking = [accountClaim, roleClaim, 'email'].some(
      (name) => name !== null && !Object.hasOwn(idClaims, name.split('.')[0]!),
    );
    if (!lacking || configuration.serverMetadata().userinfo_endpoint === undefined) {
      return { claims: idClaims, returnTo: started.returnTo };
    }
    // The ID token lacks a claim the mapping reads: the userinfo endpoint has the rest (it must
    // be about the same subject, which openid-client checks). The ID token's own claims win.
    const userinfo = await oidc.fetchUserInfo(configuration, tokens.access_token, idClaims.sub);
    return { claims: { ...userinfo, ...idClaims }, returnTo: started.returnTo };
  }

  /** Maps the claims (deny by default), provisions the person and opens their session. */
  private async signIn(
    claims: ClaimSet,
    client: { address: string; userAgent: string },
  ): Promise<Omit<FinishedSignIn, 'returnTo'>> {
    const { config, provisioning } = this.options;
    if (typeof claims.sub !== 'string' || claims.sub === '' || claims.sub.length > 255) {
      throw ssoFailed('the ID token has no usable subject');
    }
    const mapping = mapClaims(claims, config);
    if (!mapping.granted) {
      throw new AppError(
        'sso_denied',
        `You signed in at the identity provider, but may not use this dashboard: ${mapping.reason}. Ask an administrator to give you a role that grants access.`,
      );
    }
    const { user, credential } = await provisioning.provision({
      issuer: config.issuer,
      subject: claims.sub,
      accountId: mapping.accountId,
      email: boundedText(claims.email, 320),
      name: boundedText(claims.name ?? claims.preferred_username, 200),
      roles: mapping.roles,
      scopes: mapping.scopes,
    });
    const opened = await this.options.sessions.loginWithCredential(
      credential,
      client.address,
      client.userAgent,
    );
    return { opened, user };
  }
}
