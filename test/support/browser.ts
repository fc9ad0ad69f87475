// Real-browser tests: Debian's Chromium driven by playwright-core, the service listening on a real
// port with the fake model upstream, axe-core for accessibility and screenshots under test-results/.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterEach } from 'vitest';
import type { DialectUnderTest } from './dialects.js';
import { startChatHarness, type ChatHarness, type ChatHarnessOptions } from './chat-harness.js';
import { webBundleBuilt } from './web-bundle.js';

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const screenshotDirectory = path.resolve('test-results');

const baseArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

/** Why browser tests cannot run here, or null when they can (once the bundle's build has ended). */
export async function browserUnavailableReason(): Promise<string | null> {
  if (!existsSync(chromiumPath)) {
    return `Chromium is not installed at ${chromiumPath} (apt-get install -y chromium, or set CHROMIUM_PATH); .ci/run installs it.`;
  }
  if (!(await webBundleBuilt())) {
    return "The web app is not built (web/dist/index.html is missing): run 'npm run build:web' (npm test does it first).";
  }
  return null;
}

export function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: [...baseArgs, ...extraArgs],
    headless: true,
  });
}

export interface ServedApp extends ChatHarness {
  origin: string;
}

/** The real service (with the fake upstream) listening on an ephemeral port of 127.0.0.1. */
export async function startServedApp(
  dialect: DialectUnderTest,
  options: Omit<ChatHarnessOptions, 'dialect'> = {},
): Promise<ServedApp> {
  const harness = await startChatHarness({
    dialect,
    ...options,
    env: { LOGIN_ATTEMPTS_PER_MINUTE: '1000', ...options.env },
  });
  await harness.app.listen({ host: '127.0.0.1', port: 0 });
  const address = harness.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { ...harness, origin: `http://127.0.0.1:${address.port}` };
}

const axeSource = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/** Runs axe-core in the page (evaluated through the DevTools protocol, so the page's CSP allows it). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  // A string is evaluated in the page, where `axe` and `document` exist (this file has no DOM types).
  const violations = await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations)",
  );
  return (violations as AxeViolation[]).filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
}

export function describeViolations(violations: AxeViolation[]): string {
  return violations
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help}\n${violation.nodes
          .slice(0, 5)
          .map((node) => `    ${JSON.stringify(node.target)} ${node.failureSummary ?? ''}`)
          .join('\n')}`,
    )
    .join('\n');
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDirectory, { recursive: true });
  await page.screenshot({ path: path.join(screenshotDirectory, `${name}.png`), fullPage: true });
}

/**
 * Collects what the page reports as broken: CSP violations, uncaught errors, console errors. The
 * browser's own lines for expected refusals (401 before login, 404 from an absent /v1/layout) are
 * not problems.
 */
export function watchPageProblems(page: Page): string[] {
  const problems: string[] = [];
  // The violation event says where the refused code is, which the console line does not.
  void page.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) => {
      console.error('CSP violation of ' + event.violatedDirective + ' at ' + event.sourceFile + ':' +
        event.lineNumber + ':' + event.columnNumber + ': ' + event.sample);
    });`,
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    const text = message.text();
    if (message.type() !== 'error') return;
    if (/Failed to load resource: the server responded with a status of (401|404)/.test(text))
      return;
    problems.push(`console: ${text}`);
  });
  return problems;
}

/** A page in a new context of `browser` (1280×900, light), 60 s per step, its problems watched. */
export async function openPage(
  browser: Browser,
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    colorScheme: 'light',
  });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  return { context, page, problems: watchPageProblems(page) };
}

/** Logs the dashboard in with `key` from its start page, up to the overview. */
export async function logInWithKey(page: Page, origin: string, key: string): Promise<void> {
  await page.goto(`${origin}/`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

/** After each failed test of the file, a picture of what its page showed (`prefix` names it). */
export function screenshotFailures(pageOf: () => Page | undefined, prefix = 'failed'): void {
  afterEach(async (test) => {
    const page = pageOf();
    if (test.task.result?.state === 'fail' && page !== undefined) {
      await screenshot(page, `${prefix}-${test.task.name.slice(0, 40).replace(/\W+/g, '-')}`);
    }
  });
}
