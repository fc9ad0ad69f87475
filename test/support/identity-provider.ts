// A real OpenID Connect provider for the single sign-on tests: oidc-provider on a loopback port,
// with one confidential client (PKCE required), people with passwords and claims (an account id,
// roles), and a small username-and-password page of its own (consent is taken as given, as a
// company's provider does for its own applications). `signIn` drives it over HTTP as a browser
// would, following its redirects with a cookie jar, up to the redirect back to the client.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type OidcContext } from 'oidc-provider';

export interface ProviderPerson {
  password: string;
  claims: Record<string, unknown>;
}

export interface ProviderClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

export interface IdentityProvider {
  /** `http://127.0.0.1:<port>`: where it listens. */
  origin: string;
  /** The issuer its documents and tokens name (its origin unless told otherwise). */
  issuer: string;
  /** The people, by username; a test may change their claims between sign-ins. */
  people: Map<string, ProviderPerson>;
  /** Builds the provider (once the client's redirect URI is known). */
  start(client: ProviderClient, options?: { issuer?: string }): void;
  close(): Promise<void>;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.codePointAt(0)};`);
}

function loginPage(uid: string, error: string | null): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test identity provider</title></head>
<body><main><h1>Test identity provider</h1>
${error === null ? '' : `<p role="alert">${escapeHtml(error)}</p>`}
<form method="post" action="/interaction/${escapeHtml(uid)}/login">
<label>Username <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form></main></body></html>`;
}

async function readForm(request: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** The provider's own pages: the sign-in form, and its check of the password. */
async function interaction(
  provider: Provider,
  people: Map<string, ProviderPerson>,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const details = await provider.interactionDetails(request, response);
  if (request.method === 'GET') {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(loginPage(details.uid, null));
    return;
  }
  const form = await readForm(request);
  const username = form.get('username') ?? '';
  const person = people.get(username);
  if (person === undefined || person.password !== form.get('password')) {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(loginPage(details.uid, 'Wrong username or password.'));
    return;
  }
  await provider.interactionFinished(
    request,
    response,
    { login: { accountId: username } },
    { mergeWithLastSubmission: false },
  );
}

function providerConfiguration(client: ProviderClient, people: Map<string, ProviderPerson>) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: client.redirectUris,
        // Back to the dashboard's start page after the provider's own logout.
        post_logout_redirect_uris: client.redirectUris.map((uri) => `${new URL(uri).origin}/`),
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'test', use: 'sig' }] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      platform: ['platform_account', 'roles'],
    },
    features: { devInteractions: { enabled: false } },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    interactions: { url: (_ctx: unknown, found: { uid: string }) => `/interaction/${found.uid}` },
    findAccount: (_ctx: unknown, id: string) => {
      const person = people.get(id);
      if (person === undefined) return undefined;
      return { accountId: id, claims: () => ({ sub: id, ...person.claims }) };
    },
    // The client is the company's own: what it asks for is granted without a consent page.
    loadExistingGrant: async (ctx: OidcContext) => {
      const { oidc } = ctx;
      const grantId =
        oidc.result?.consent?.grantId ?? oidc.session.grantIdFor(oidc.client.clientId);
      if (grantId !== undefined) {
        const found = await oidc.provider.Grant.find(grantId);
        if (found !== undefined) {
          found.addOIDCScope([...oidc.requestParamScopes].join(' '));
          await found.save();
          return found;
        }
      }
      const grant = new oidc.provider.Grant({
        clientId: oidc.client.clientId,
        accountId: oidc.session.accountId,
      });
      grant.addOIDCScope([...oidc.requestParamScopes].join(' '));
      await grant.save();
      return grant;
    },
  };
}

/** Listens at once (so the service can be configured with its issuer); `start` builds it. */
export async function listenIdentityProvider(): Promise<IdentityProvider> {
  const people = new Map<string, ProviderPerson>();
  let provider: Provider | null = null;
  const server = http.createServer((request, response) => {
    if (provider === null) {
      response.writeHead(503).end('not started');
      return;
    }
    const current = provider;
    if ((request.url ?? '').startsWith('/interaction/')) {
      interaction(current, people, request, response).catch((error: unknown) => {
        response.writeHead(500).end(String(error));
      });
      return;
    }
    current.callback()(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const idp: IdentityProvider = {
    origin,
    issuer: origin,
    people,
    start(client, options = {}) {
      idp.issuer = options.issuer ?? origin;
      provider = new Provider(idp.issuer, providerConfiguration(client, people));
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return idp;
}

/** Cookies by name, as a browser keeps them for one site. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * Signs in at the provider as a browser would: from the authorization URL through the sign-in form
 * to the redirect back to the client, whose URL (with `code`, `state`, `iss`) it answers.
 */
export async function signIn(
  authorizationUrl: string,
  username: string,
  password: string,
  jar = new CookieJar(),
): Promise<URL> {
  let url = new URL(authorizationUrl);
  const providerOrigin = url.origin;
  for (let hop = 0; hop < 10; hop += 1) {
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.take(response);
    if (response.status === 200 && url.pathname.startsWith('/interaction/')) {
      await response.arrayBuffer();
      const posted = await fetch(new URL(`${url.pathname}/login`, providerOrigin), {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username, password }).toString(),
      });
      jar.take(posted);
      const next = posted.headers.get('location');
      if (next === null)
        throw new Error(`sign-in refused: ${posted.status} ${await posted.text()}`);
      url = new URL(next, providerOrigin);
      continue;
    }
    const location = response.headers.get('location');
    if (location === null) {
      throw new Error(
        `the provider stopped at ${url.href}: ${response.status} ${await response.text()}`,
      );
    }
    url = new URL(location, providerOrigin);
    if (url.origin !== providerOrigin) return url;
  }
  throw new Error('too many redirects at the provider');
}
