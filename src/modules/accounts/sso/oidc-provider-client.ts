// This service as an OpenID Connect client, through openid-client: the provider's metadata found
// from the configured issuer alone (its discovery document must name that very issuer), kept for an
// hour, and the library's failures turned into the contract's errors. Every check of the answer —
// state, PKCE, the issuer of the response and of the ID token, audience, nonce, signature, expiry —
// is openid-client's.
import type * as Oidc from 'openid-client';
import type { Logger } from 'pino';
import type { SecretSource } from '../../../config/config.js';
import { AppError } from '../../../errors/app-error.js';
import type { OidcConfig } from './sso.config.js';

let loading: Promise<typeof Oidc> | null = null;

/** openid-client, loaded on the first sign-in (a service without single sign-on never loads it). */
export function openidClient(): Promise<typeof Oidc> {
  return (loading ??= import('openid-client'));
}

/** How long the provider's metadata (and its signing keys' cache) is reused before it is read again. */
const metadataTtlMs = 3_600_000;
/** Seconds one request to the provider may take. */
const requestTimeoutSeconds = 10;

/** An error of a sign-in the provider's answer failed. */
export function ssoFailed(reason: string): AppError {
  return new AppError(
    'sso_failed',
    `Single sign-on failed: ${reason}. Start again from the login page.`,
  );
}

/** Whether a character is a C0 control character or DEL. */
export function isControlCharacter(character: string): boolean {
  const code = character.charCodeAt(0);
  return code <= 0x1f || code === 0x7f;
}

/** Text with its control characters replaced by `replacement`. */
export function withoutControlCharacters(text: string, replacement: string): string {
  return [...text]
    .map((character) => (isControlCharacter(character) ? replacement : character))
    .join('');
}

/** Text the provider chose (an error description), bounded and on one line. */
export function providerText(text: unknown): string {
  if (typeof text !== 'string') return '';
  return withoutControlCharacters(text.slice(0, 300), ' ');
}

/**
 * The contract's error for what openid-client refused (never the secret, never a token); null for
 * a failure of this service's own (a database error), which stays an internal error.
 */
export function translateOidcError(
  error: unknown,
  issuer: string,
  oidc: typeof Oidc,
): AppError | null {
  if (error instanceof AppError) return error;
  if (error instanceof oidc.AuthorizationResponseError || error instanceof oidc.ResponseBodyError) {
    const description = providerText(error.error_description);
    const what =
      error instanceof oidc.AuthorizationResponseError ? 'the sign-in' : 'the authorization code';
    return ssoFailed(
      `the identity provider refused ${what} (${providerText(error.error)}${description === '' ? '' : `: ${description}`})`,
    );
  }
  const code = (error as { code?: unknown }).code;
  if (error instanceof Error && typeof code === 'string' && code.startsWith('OAUTH_')) {
    // openid-client's message is general ("invalid response encountered"); oauth4webapi's, its
    // cause's, names the check (`unexpected ID Token "nonce" claim value`), never a value.
    const detail = error.cause instanceof Error ? error.cause.message : error.message;
    return ssoFailed(`the identity provider's answer failed a check: ${providerText(detail)}`);
  }
  const unreachable =
    error instanceof Error &&
    ((error instanceof TypeError && error.message === 'fetch failed') ||
      error.name === 'TimeoutError' ||
      error.name === 'AbortError');
  if (!unreachable) return null;
  return new AppError(
    'service_unavailable',
    `The identity provider at ${issuer} could not be reached; try again later.`,
    { cause: error },
  );
}

export class OidcProviderClient {
  private discovered: { configuration: Oidc.Configuration; atMs: number } | null = null;
  private pending: Promise<Oidc.Configuration> | null = null;

  constructor(
    private readonly config: OidcConfig,
    private readonly secrets: SecretSource,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /** The client's configuration at the provider, discovered on first use and every hour after. */
  async configuration(): Promise<Oidc.Configuration> {
    const known = this.discovered;
    if (known !== null && this.now() - known.atMs < metadataTtlMs) return known.configuration;
    this.pending ??= this.discover().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  private async discover(): Promise<Oidc.Configuration> {
    const oidc = await openidClient();
    const secret = this.secrets.get(this.config.clientSecretEnv);
    if (secret === undefined) {
      throw new AppError(
        'service_unavailable',
        `Single sign-on cannot run: the environment variable ${this.config.clientSecretEnv} (the client secret) is not set.`,
      );
    }
    const execute = this.config.allowHttp ? [oidc.allowInsecureRequests] : [];
    let found: Oidc.Configuration;
    try {
      found = await oidc.discovery(
        new URL(this.config.issuer),
        this.config.clientId,
        undefined,
        undefined,
        {
          execute,
          timeout: requestTimeoutSeconds,
        },
      );
    } catch (error) {
      this.logger.warn(
        { err: error, issuer: this.config.issuer },
        'OpenID Connect discovery failed',
      );
      const code = (error as { code?: unknown }).code;
      if (code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') {
        throw ssoFailed(
          `the discovery document at ${this.config.issuer} names another issuer, so it is not the configured identity provider`,
        );
      }
      throw translateOidcError(error, this.config.issuer, oidc) ?? error;
    }
    const metadata = found.serverMetadata();
    // client_secret_basic is the default of the specification; post where only it is offered.
    const methods = metadata.token_endpoint_auth_methods_supported;
    const clientAuth =
      methods !== undefined &&
      !methods.includes('client_secret_basic') &&
      methods.includes('client_secret_post')
        ? oidc.ClientSecretPost(secret)
        : oidc.ClientSecretBasic(secret);
    const configuration = new oidc.Configuration(metadata, this.config.clientId, {}, clientAuth);
    configuration.timeout = requestTimeoutSeconds;
    for (const extension of execute) extension(configuration);
    this.discovered = { configuration, atMs: this.now() };
    return configuration;
  }
}
