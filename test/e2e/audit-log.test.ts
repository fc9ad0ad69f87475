// The dashboard's audit log page in a real browser (Debian's Chromium through playwright-core)
// against the real service: the records of changes made through the API are listed newest first,
// the action and target-type filters narrow them, a record's changes open, and the page passes axe
// with nothing broken in the console. SQLite only: the page does not differ on PostgreSQL (the HTTP
// suite test/http/audit-log.test.ts covers the log on both dialects).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { allDialects } from '../support/dialects.js';
import {
  browserUnavailableReason,
  describeViolations,
  launchBrowser,
  logInWithKey,
  openPage,
  screenshot,
  screenshotFailures,
  seriousViolations,
  startServedApp,
  type ServedApp,
} from '../support/browser.js';

const unavailable = await browserUnavailableReason();
if (unavailable !== null)
  process.stdout.write(`\n[e2e] audit log browser tests SKIPPED: ${unavailable}\n`);

let served: ServedApp;
let browser: Browser;
let page: Page;
let problems: string[];

async function post(path: string, body: unknown): Promise<{ id: string }> {
  const response = await fetch(`${served.origin}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${served.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string };
}

/** Chooses `option` in the Mantine select labelled `label`. */
async function pick(label: string, option: string): Promise<void> {
  await page.getByLabel(label, { exact: true }).and(page.locator('input')).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

describe.skipIf(unavailable !== null)('the audit log page in Chromium', () => {
  beforeAll(async () => {
    served = await startServedApp(allDialects[0]!);
    await post('/v1/budgets', { scope: 'account', limit_usd: 12, period: 'month' });
    await post('/v1/api-keys', { name: 'reporting', scopes: ['models:read'] });
    browser = await launchBrowser();
    ({ page, problems } = await openPage(browser));
    await logInWithKey(page, served.origin, served.adminKey);
  });

  screenshotFailures(() => page);

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('lists the records, filters them by action and target type, and shows a record’s changes', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const table = page.getByRole('table', { name: 'Audit records' });
    await table.getByText('budget.create').waitFor();
    await table.getByText('api_key.create').waitFor();
    // This session's own login is a record too.
    await table.getByText('auth.login', { exact: true }).waitFor();
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'audit-log');
    const violations = await seriousViolations(page);
    expect(violations, describeViolations(violations)).toEqual([]);

    await pick('Target type', 'budget');
    await table.getByText('api_key.create').waitFor({ state: 'detached' });
    await expect(table.getByText('budget.create').count()).resolves.toBe(1);
    await table.getByRole('button', { name: 'Show' }).click();
    await table.getByText('"limit_usd": 12').waitFor();

    await pick('Target type', 'api_key');
    await pick('Action', 'budget.delete');
    await page.getByText('No records match these filters.').waitFor();
    expect(problems.splice(0)).toEqual([]);
  });
});
