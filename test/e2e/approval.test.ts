// Approving and rejecting a ToolAgent's tool call from the dashboard's execution page, in a real
// browser (Debian's Chromium through playwright-core) against the real service with the fake model
// upstream: the run pauses before its knowledge search, the page shows the waiting call (screenshot
// and axe), a person edits the arguments and approves, or rejects with a reason, and the page
// follows the run to its end. SQLite only: the page does not differ on PostgreSQL (the HTTP suite
// test/http/tool-agent.test.ts covers approval on both dialects).
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
  process.stdout.write(`\n[e2e] approval browser tests SKIPPED: ${unavailable}\n`);

interface Step {
  kind: 'model' | 'tool';
  name: string;
  arguments: Record<string, unknown> | null;
  status: string;
  decision: { decision: string; reason: string | null; edited: boolean } | null;
}

interface Execution {
  status: string;
  output: Record<string, unknown> | null;
  error_detail?: { code: string; reason?: string };
  steps: Step[];
  pending_approvals: Step[];
}

let served: ServedApp;
let browser: Browser;
let page: Page;
let problems: string[];
let agentId = '';

async function api<T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const response = await fetch(`${served.origin}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${served.adminKey}`,
      'content-type': 'application/json',
      ...init.headers,
    },
  });
  return { status: response.status, body: (await response.json()) as T };
}

const post = <T>(path: string, body: unknown) =>
  api<T>(path, { method: 'POST', body: JSON.stringify(body) });

async function execution(id: string): Promise<Execution> {
  const answer = await api<{ execution: Execution }>(`/v1/executions/${id}`);
  expect(answer.status).toBe(200);
  return answer.body.execution;
}

/** Screenshot, then axe: no serious or critical violation, and nothing broken in the console. */
async function checkPage(name: string): Promise<void> {
  await page.waitForLoadState('networkidle');
  await screenshot(page, name);
  const violations = await seriousViolations(page);
  expect(violations, `${name}:\n${describeViolations(violations)}`).toEqual([]);
  const seen = problems.splice(0);
  expect(seen, name).toEqual([]);
}

/** Runs the agent once its model proposes a knowledge search of `query`: the run waits for approval. */
async function pausedRun(query: string, answer: string): Promise<string> {
  served.upstream.enqueueFor(
    'chat',
    {
      kind: 'reply',
      toolCalls: [{ id: 'call_1', name: 'handbook', arguments: JSON.stringify({ query }) }],
    },
    { kind: 'reply', content: answer },
  );
  const run = await post<{ status: string; execution_id: string }>(
    `/v1/agents/${agentId}/execute`,
    { query: 'How long do refunds take?' },
  );
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  expect(run.body.status).toBe('waiting_for_approval');
  return run.body.execution_id;
}

const status = (value: string) =>
  page.locator(`[data-testid="execution-status"][data-status="${value}"]`);

describe.skipIf(unavailable !== null)('approving tool calls in Chromium', () => {
  beforeAll(async () => {
    served = await startServedApp(allDialects[0]!);
    const kb = await post<{ id: string }>('/v1/knowledge-bases', { name: 'Handbook' });
    expect(kb.status, JSON.stringify(kb.body)).toBe(201);
    const document = await post(`/v1/knowledge-bases/${kb.body.id}/documents`, {
      title: 'Refunds',
      content: 'Refunds are paid within 14 days of the return reaching the warehouse.',
    });
    expect(document.status, JSON.stringify(document.body)).toBe(201);
    const agent = await post<{ id: string }>('/v1/agents', {
      name: 'Support desk',
      agent_type: 'ToolAgent',
      configuration: {
        instructions: 'Answer from the handbook.',
        tools: [
          {
            type: 'knowledge_search',
            name: 'handbook',
            knowledge_base_ids: [kb.body.id],
            requires_approval: true,
          },
        ],
      },
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    agentId = agent.body.id;

    browser = await launchBrowser();
    ({ page, problems } = await openPage(browser));
    await logInWithKey(page, served.origin, served.adminKey);
  });

  // A failed step leaves a picture of what the page showed.
  screenshotFailures(() => page);

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('shows the waiting call, refuses invalid JSON, approves edited arguments and follows the run to its end', async () => {
    const id = await pausedRun('bread', 'Refunds take up to 14 days.');
    await page.goto(`${served.origin}/executions/${id}`);
    const pending = page.getByRole('region', { name: 'Approval needed: handbook' });
    await pending.waitFor();
    await status('waiting_for_approval').getByText('waiting for approval').waitFor();
    const box = pending.getByLabel('Arguments of handbook (JSON)');
    await expect(box.inputValue()).resolves.toBe(JSON.stringify({ query: 'bread' }, null, 2));
    // The model turn that proposed the call is a step already.
    await page.getByTestId('step-model').getByText('Proposed calls: handbook').waitFor();
    await checkPage('execution-waiting-for-approval');

    // Not JSON: said beside the box, and nothing is sent.
    await box.fill('{"query": ');
    await pending.getByRole('button', { name: 'Approve' }).click();
    await pending.getByText('The arguments are not valid JSON.').waitFor();
    await expect(box.getAttribute('aria-invalid')).resolves.toBe('true');
    expect((await execution(id)).status).toBe('waiting_for_approval');

    await box.fill('{"query": "refunds"}');
    await pending.getByRole('button', { name: 'Approve' }).click();
    await status('completed').waitFor();
    await pending.waitFor({ state: 'detached' });
    const toolStep = page.getByTestId('step-tool');
    await toolStep.getByTestId('step-arguments').getByText('"query": "refunds"').waitFor();
    await toolStep.getByText('Approved with edited arguments').waitFor();
    await toolStep
      .getByTestId('step-output')
      .getByText(/14 days of the return/)
      .waitFor();
    await page.getByText('Refunds take up to 14 days.').first().waitFor();
    await checkPage('execution-approved');

    const done = await execution(id);
    expect(done.status).toBe('completed');
    expect(done.output).toMatchObject({ answer: 'Refunds take up to 14 days.' });
    expect(done.steps.find((step) => step.kind === 'tool')).toMatchObject({
      name: 'handbook',
      status: 'completed',
      arguments: { query: 'refunds' },
      decision: { decision: 'approved', edited: true },
    });
  });

  it('rejects the call with a reason: the run ends failed, the reason shown', async () => {
    const id = await pausedRun('salaries', 'not used');
    await page.goto(`${served.origin}/executions/${id}`);
    const pending = page.getByRole('region', { name: 'Approval needed: handbook' });
    // The waiting call's colours hold in the dark scheme too (the page follows the system's).
    await page.emulateMedia({ colorScheme: 'dark' });
    await pending.waitFor();
    await checkPage('execution-waiting-for-approval-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await pending.getByLabel('Reason for rejecting (optional)').fill('not for this team');
    await pending.getByRole('button', { name: 'Reject' }).click();
    await status('failed').waitFor();
    await page
      .getByTestId('execution-error')
      .getByText(/not for this team/)
      .waitFor();
    await page
      .getByTestId('step-tool')
      .getByTestId('step-decision')
      .getByText(/^Rejected: not for this team/)
      .waitFor();
    await expect(page.getByTestId('pending-approval').count()).resolves.toBe(0);
    await checkPage('execution-rejected');
    await page.emulateMedia({ colorScheme: 'dark' });
    await checkPage('execution-rejected-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    const detail = await execution(id);
    expect(detail.error_detail).toMatchObject({
      code: 'approval_rejected',
      reason: 'not for this team',
    });
    expect(detail.steps.find((step) => step.kind === 'tool')).toMatchObject({
      status: 'rejected',
      arguments: { query: 'salaries' },
      decision: { decision: 'rejected', reason: 'not for this team', edited: false },
    });
  });
});
