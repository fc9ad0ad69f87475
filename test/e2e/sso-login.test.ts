// Single sign-on in a real browser (Debian's Chromium through playwright-core): the service on a
// real port, a real OpenID Connect provider (oidc-provider) on another, and the whole sign-in done
// as a person does it — the login page's button, the provider's username and password form, the
// way back — ending on the dashboard as the account and with the scopes the claims map to. A person
// whose claims map to nothing sees why and gets no session; login with a key keeps working. SQLite
// only: the HTTP suite (test/http/sso.test.ts) covers both dialects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { allDialects } from '../support/dialects.js';
import {
  browserUnavailableReason,
  describeViolations,
  launchBrowser,
  openPage,
  screenshot,
  screenshotFailures,
  seriousViolations,
  startServedApp,
  type ServedApp,
} from '../support/browser.js';
import { listenIdentityProvider, type IdentityProvider } from '../support/identity-provider.js';
import { createAccount } from '../support/test-app.js';

const unavailable = await browserUnavailableReason();
if (unavailable !== null)
  process.stdout.write(`\n[e2e] single sign-on browser tests SKIPPED: ${unavailable}\n`);

const clientSecret = 'browser-test-client-secret';

let idp: IdentityProvider;
let served: ServedApp;
let team: { id: string };
let browser: Browser;
let context: BrowserContext;
let page: Page;
let problems: string[];

interface MeJson {
  authenticated_by: string;
  account: { id: string; name: string };
  scopes: string[];
  user: { email: string } | null;
}

/** Signs in at the provider's own page, from the dashboard's login page. */
async function signInWithProvider(username: string, password: string): Promise<void> {
  await page.getByRole('link', { name: 'Sign in with Company IdP' }).click();
  await page.getByRole('heading', { name: 'Test identity provider' }).waitFor();
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe.skipIf(unavailable !== null)('single sign-on in Chromium', () => {
  beforeAll(async () => {
    idp = await listenIdentityProvider();
    served = await startServedApp(allDialects[0]!, {
      env: { SSO_CLIENT_SECRET: clientSecret },
      overrides: {
        auth: {
          oidc: {
            issuer: idp.issuer,
            client_id: 'dashboard',
            client_secret_env: 'SSO_CLIENT_SECRET',
            scopes: ['openid', 'email', 'profile', 'platform'],
            account_claim: 'platform_account',
            role_claim: 'roles',
            role_scopes: { analysts: ['usage:read', 'conversations:read', 'models:read'] },
            display_name: 'Company IdP',
          },
        },
      },
    });
    // The redirect URL is the service's own origin's callback (no redirect_url configured).
    idp.start({
      clientId: 'dashboard',
      clientSecret,
      redirectUris: [`${served.origin}/v1/auth/oidc/callback`],
    });
    team = await createAccount(served.app, served.adminKey, 'analytics team');
    idp.people.set('dana', {
      password: 'correct horse',
      claims: {
        email: 'dana@example.com',
        name: 'Dana',
        platform_account: team.id,
        roles: ['analysts'],
      },
    });
    idp.people.set('eve', {
      password: 'battery staple',
      claims: { email: 'eve@example.com', platform_account: team.id, roles: ['guests'] },
    });
    browser = await launchBrowser();
    ({ context, page, problems } = await openPage(browser));
  });

  screenshotFailures(() => page, 'failed-sso');

  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await idp?.close();
  });

  it('signs in through the provider and lands on the dashboard as the mapped account and scopes', async () => {
    await page.goto(`${served.origin}/usage`);
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await page.getByRole('link', { name: 'Sign in with Company IdP' }).waitFor();
    await screenshot(page, 'sso-login');
    const violations = await seriousViolations(page);
    expect(violations, describeViolations(violations)).toEqual([]);

    await signInWithProvider('dana', 'correct horse');
    // Back on the page that was asked for, signed in.
    await page.getByText('analytics team · dana@example.com (single sign-on)').waitFor();
    expect(new URL(page.url()).pathname).toBe('/usage');
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'sso-signed-in');

    // The page's own session (its cookie) is the person's: the account and scopes of the claims.
    const me = await page.evaluate<MeJson>(
      "fetch('/v1/auth/me').then((response) => response.json())",
    );
    expect(me).toMatchObject({
      authenticated_by: 'sso',
      account: { id: team.id, name: 'analytics team' },
      user: { email: 'dana@example.com' },
    });
    expect([...me.scopes].sort()).toEqual(['conversations:read', 'models:read', 'usage:read']);
    const cookies = await context.cookies();
    expect(cookies.find((cookie) => cookie.name === 'platform_session')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });
    // The sign-in's own cookie is gone once used.
    expect(cookies.find((cookie) => cookie.name === 'platform_sso')).toBeUndefined();
    // Nothing broke (CSP, errors); the only refusals are of what the person's scopes do not
    // include (the usage page asks for the budgets, which need admin).
    expect(problems.splice(0).filter((problem) => !problem.includes('status of 403'))).toEqual([]);
  });

  it('logs out here and at the provider, and login with a key still works', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    // The provider's own logout (RP-initiated), which sends the browser back to the dashboard.
    await page.waitForURL((url) => url.origin === idp.origin);
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    expect(new URL(page.url()).origin).toBe(served.origin);
    await page.getByLabel('API key').fill(served.adminKey);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    const me = await page.evaluate<MeJson>(
      "fetch('/v1/auth/me').then((response) => response.json())",
    );
    expect(me).toMatchObject({ authenticated_by: 'session', user: null });
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
  });

  it('refuses a person whose claims map to no scope, saying why, with no session', async () => {
    // Another browser: the first one is still signed in at the provider, which would not ask again.
    await context.close();
    ({ context, page } = await openPage(browser));
    await page.goto(`${served.origin}/`);
    await signInWithProvider('eve', 'battery staple');
    await page.getByRole('heading', { name: 'Sign-in refused' }).waitFor();
    await expect(page.locator('#sso-error').textContent()).resolves.toMatch(
      /may not use this dashboard: none of your roles \('guests'\) grants a scope here/,
    );
    const cookies = await context.cookies();
    expect(cookies.find((cookie) => cookie.name === 'platform_session')).toBeUndefined();
    await page.getByRole('link', { name: 'Back to the login page' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
  });
});
