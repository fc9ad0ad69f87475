// The dashboard in a real browser (Debian's Chromium through playwright-core) against the real
// service on a real port with the fake model upstream: every page is screenshotted and checked with
// axe-core, and each flow of the issue is driven as a person would. SQLite only: the pages do not
// behave differently on PostgreSQL (the HTTP suites cover both dialects).
import { createServer } from 'node:net';
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

const unavailable = await browserUnavailableReason();
if (unavailable !== null)
  process.stdout.write(`\n[e2e] dashboard browser tests SKIPPED: ${unavailable}\n`);

let served: ServedApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let problems: string[];

interface JsonBody {
  error: { code: string };
  pipeline: { visual_layout: { nodes: unknown[] } };
  features: { name: string; enabled: boolean }[];
}

async function api(path: string, init: RequestInit = {}, key = served.adminKey) {
  const response = await fetch(`${served.origin}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      ...init.headers,
    },
  });
  return { status: response.status, body: (await response.json()) as JsonBody };
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

async function pick(
  label: string,
  option: string | RegExp,
  scope: Page | ReturnType<Page['getByTestId']> = page,
) {
  // A required field's label ends with Mantine's asterisk.
  await scope
    .getByLabel(new RegExp(`^${label}( \\*)?$`))
    .and(scope.locator('input'))
    .click();
  await page.getByRole('option', { name: option }).first().click();
}

async function featureOn(name: string): Promise<boolean> {
  const features = await api('/v1/features');
  return features.body.features.some((feature) => feature.name === name && feature.enabled);
}

interface BadgeBox {
  text: string;
  root: [number, number];
  label: [number, number];
}

/**
 * Every badge of the page shows its whole word: neither the badge nor its label is narrower than
 * its content (Mantine clips a squeezed badge with an ellipsis: 'AC…', 'COMPLET…').
 */
async function expectWholeBadges(expected: readonly string[]): Promise<void> {
  const badges = await page.evaluate<BadgeBox[]>(
    `[...document.querySelectorAll('.mantine-Badge-root')].map((badge) => {
      const label = badge.querySelector('.mantine-Badge-label') ?? badge;
      return {
        text: badge.textContent,
        root: [badge.scrollWidth, badge.clientWidth],
        label: [label.scrollWidth, label.clientWidth],
      };
    })`,
  );
  expect(badges.map((badge) => badge.text)).toEqual(expect.arrayContaining([...expected]));
  for (const badge of badges) {
    expect(badge.root[0], `badge '${badge.text}'`).toBeLessThanOrEqual(badge.root[1]);
    expect(badge.label[0], `badge '${badge.text}' label`).toBeLessThanOrEqual(badge.label[1]);
  }
}

/** A loopback port nothing listens on (connections to it are refused). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.skipIf(unavailable !== null)('the dashboard in Chromium', () => {
  beforeAll(async () => {
    const refused = await closedPort();
    // A model of two deployments, the heavier one down: the overview shows their health.
    served = await startServedApp(allDialects[0]!, {
      extraModels: (baseUrl) => [
        {
          name: 'spread-chat',
          display_name: 'Spread chat',
          provider: 'openai-compatible',
          base_url: baseUrl,
          api_key_env: 'FAKE_UPSTREAM_KEY',
          model: 'gpt-4o-mini',
          deployments: [
            { name: 'down-region', base_url: `http://127.0.0.1:${refused}/v1`, weight: 1000 },
            { name: 'up-region', weight: 1 },
          ],
        },
      ],
    });
    browser = await launchBrowser();
    ({ context, page, problems } = await openPage(browser));
  });

  // A failed step leaves a picture of what the page showed.
  screenshotFailures(() => page);

  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('logs in with a key, which is exchanged for an HttpOnly session cookie', async () => {
    await page.goto(`${served.origin}/`);
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await checkPage('login');
    await page.getByLabel('API key').fill('sk-wrong');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'malformed' }).waitFor();
    await page.getByLabel('API key').fill(served.adminKey);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('cell', { name: 'Fake chat' }).waitFor();
    const cookies = await context.cookies();
    expect(cookies.find((cookie) => cookie.name === 'platform_session')).toMatchObject({
      httpOnly: true,
      sameSite: 'Strict',
    });
    // The key is not kept by the page.
    const stored = await page.evaluate<string>(
      'JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })',
    );
    expect(stored).not.toContain(served.adminKey);
    await checkPage('overview');
  });

  it("lists a model's deployments with their health on the overview", async () => {
    // Requests until one has tried the deployment that is down (it is drawn first nearly always):
    // each still answers, from the other one.
    const models = async () =>
      (await (
        await fetch(`${served.origin}/v1/models`, {
          headers: { authorization: `Bearer ${served.adminKey}` },
        })
      ).json()) as { models: { name: string; deployments: { name: string; health: string }[] }[] };
    const downHealth = async () =>
      (await models()).models
        .find((model) => model.name === 'spread-chat')!
        .deployments.find((deployment) => deployment.name === 'down-region')!.health;
    while ((await downHealth()) !== 'cooling') {
      const answer = await api('/v1/chat/completions', {
        method: 'POST',
        body: JSON.stringify({ model: 'spread-chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(answer.status).toBe(200);
    }
    await page.reload();
    const list = page.getByRole('list', { name: 'Deployments of Spread chat' });
    await list
      .getByText(/^up-region \(openai-compatible gpt-4o-mini, weight 1\): healthy$/)
      .waitFor();
    await list
      .getByText(
        /^down-region \(openai-compatible gpt-4o-mini, weight 1000\): cooling down after 1 failure, until /,
      )
      .waitFor();
    await checkPage('overview-deployments');
  });

  it('creates a key shown once, revokes it through the confirmation, and the API refuses it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByLabel(/^Name/).fill('e2e key');
    // The tiers, with their limits, come from GET /v1/rate-limits/tiers.
    await pick('Tier', /^basic \(60\/min, 1\D?000\/day\)$/);
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-key-secret').textContent()) ?? '';
    expect(secret).toMatch(/^sk-[A-Za-z0-9]{40,}$/);
    expect((await api('/v1/features', {}, secret)).status).toBe(200);
    await page
      .getByRole('row')
      .filter({ hasText: 'e2e key' })
      .getByRole('cell', { name: 'basic', exact: true })
      .waitFor();
    await checkPage('keys');
    await page.reload();
    await page.getByRole('cell', { name: 'e2e key', exact: true }).waitFor();
    await expect(page.getByTestId('new-key-secret').count()).resolves.toBe(0);
    expect(await page.content()).not.toContain(secret);

    await page.getByRole('button', { name: 'Revoke e2e key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.getByText('cannot be undone').waitFor();
    await expect(dialog.textContent()).resolves.toContain('e2e key');
    await screenshot(page, 'keys-revoke-dialog');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByText('revoked', { exact: true }).waitFor();
    const refused = await api('/v1/features', {}, secret);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('revoked_api_key');
  });

  it('hides the new secret once that key is revoked, or the page is left; status badges show whole words', async () => {
    // Long scopes and address lists squeeze the Status column.
    const everyScope = [
      'chat:read',
      'chat:write',
      'models:read',
      'conversations:read',
      'conversations:write',
      'voice:read',
      'voice:write',
      'agents:read',
      'agents:write',
    ];
    const wide = await api('/v1/api-keys', {
      method: 'POST',
      body: JSON.stringify({
        name: 'a key holding every scope but admin',
        scopes: everyScope,
        allowed_ips: ['10.0.0.0/8', '192.168.0.0/16', '172.16.0.0/12', '127.0.0.1'],
      }),
    });
    expect(wide.status).toBe(201);
    await page.reload();
    await page
      .getByRole('cell', { name: 'a key holding every scope but admin', exact: true })
      .waitFor();
    await page.getByLabel(/^Name/).fill('short-lived key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-key-secret').textContent()) ?? '';
    expect(secret).toMatch(/^sk-/);
    await page.getByRole('cell', { name: 'short-lived key', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Revoke short-lived key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page
      .getByRole('button', { name: 'Revoke short-lived key' })
      .waitFor({ state: 'detached' });
    await expect(page.getByTestId('new-key-secret').count()).resolves.toBe(0);
    expect(await page.content()).not.toContain(secret);
    await expectWholeBadges(['active', 'revoked']);
    await screenshot(page, 'keys-badges');

    // Another key's banner goes when the page is left, and does not come back.
    await page.getByLabel(/^Name/).fill('kept key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const kept = (await page.getByTestId('new-key-secret').textContent()) ?? '';
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('cell', { name: 'kept key', exact: true }).waitFor();
    await expect(page.getByTestId('new-key-secret').count()).resolves.toBe(0);
    expect(await page.content()).not.toContain(kept);
    await checkPage('keys-after');
  });

  it('chats in the playground: streamed answer, a rendered table, and rating changes the summary', async () => {
    served.upstream.enqueueFor('chat', {
      kind: 'reply',
      content:
        'Here are the cities:\n\n| City | Population |\n| --- | --- |\n| Paris | 2.1 million |\n| Rome | 2.8 million |\n',
    });
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByLabel('Message').fill('Which cities are large?');
    await page.getByRole('button', { name: 'Send' }).click();
    const answer = page.locator('[data-testid="assistant-answer"][data-final="true"]').last();
    await answer.waitFor();
    await answer.getByRole('cell', { name: 'Paris' }).waitFor();
    await expect(answer.getByRole('columnheader', { name: 'Population' }).count()).resolves.toBe(1);
    const summary = page.getByTestId('feedback-summary');
    await summary.getByText('0 positive').waitFor();
    await page.getByRole('button', { name: 'Thumbs up' }).click();
    await summary.getByText('1 positive').waitFor();
    await checkPage('playground');

    // Continue the conversation: the second turn goes to the same conversation.
    await page.getByLabel('Message').fill('And Madrid?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page
      .locator('[data-testid="assistant-answer"][data-final="true"]')
      .nth(1)
      .getByText('Echo: And Madrid?')
      .waitFor();
    await summary.getByText('of 4 messages').waitFor();
  });

  it('lists conversations and shows one with its messages and feedback', async () => {
    await page.getByRole('link', { name: 'Conversations' }).click();
    await page.getByRole('link', { name: 'Which cities are large?' }).click();
    await page.getByText('1 positive').waitFor();
    await page.getByText('Echo: And Madrid?').waitFor();
    await checkPage('conversation-detail');
    await page.getByRole('button', { name: 'Archive' }).click();
    await page.getByText('archived', { exact: true }).waitFor();
    await page.getByRole('link', { name: 'Conversations' }).click();
    await page.getByText('No conversations.').waitFor();
    await page.locator('label[for$="-archived"]').click();
    await page.getByRole('link', { name: 'Which cities are large?' }).waitFor();
    await checkPage('conversations');
  });

  it('finds conversations of every user, those made through the API too, and filters by one', async () => {
    for (const [title, userId] of [
      ['Made through the API', 'api-user-7'],
      ['Another user of the API', 'api-user-8'],
    ]) {
      const created = await api('/v1/conversations', {
        method: 'POST',
        body: JSON.stringify({ title, user_id: userId }),
      });
      expect(created.status).toBe(201);
    }
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('link', { name: 'Conversations' }).click();
    // Every user by default: the API's users and the dashboard's own (archived) conversation.
    await expect(page.getByLabel('User').inputValue()).resolves.toBe('');
    await page.getByRole('link', { name: 'Made through the API' }).waitFor();
    await page.getByRole('link', { name: 'Another user of the API' }).waitFor();
    await page.locator('label[for$="-all"]').click();
    await page.getByRole('link', { name: 'Which cities are large?' }).waitFor();
    await page.getByRole('button', { name: 'api-user-7' }).click();
    await expect(page.getByLabel('User').inputValue()).resolves.toBe('api-user-7');
    await page
      .getByRole('link', { name: 'Another user of the API' })
      .waitFor({ state: 'detached' });
    await expect(page.getByRole('link', { name: 'Which cities are large?' }).count()).resolves.toBe(
      0,
    );
    await page.getByRole('link', { name: 'Made through the API' }).waitFor();
    await checkPage('conversations-one-user');
    await page.getByLabel('User').fill('dashboard');
    await page.getByRole('link', { name: 'Which cities are large?' }).waitFor();
    await expect(page.getByRole('link', { name: 'Made through the API' }).count()).resolves.toBe(0);
    await page.getByLabel('User').fill('');
    await page.getByRole('link', { name: 'Made through the API' }).waitFor();
    await page.getByRole('link', { name: 'Which cities are large?' }).waitFor();
  });

  it('creates an agent from its type’s schema form and executes it', async () => {
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('heading', { name: 'Create an agent' }).waitFor();
    await page.getByLabel(/^Name/).fill('Writer');
    // A ToolAgent cannot be public (the API refuses it): its form offers no such switch.
    await pick('Type', 'Tool agent');
    await page.getByLabel(/^Offer as a tool/).waitFor();
    expect(await page.getByLabel(/^Public/).count()).toBe(0);
    await pick('Type', 'Generation agent');
    await page.getByLabel(/^Public/).waitFor();
    await page.getByLabel(/^Offer as a tool/).check();
    await page
      .getByRole('heading', { name: 'Configuration' })
      .or(page.getByText('Configuration'))
      .first()
      .waitFor();
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: 'Execute Writer' }).waitFor();
    await page.getByLabel('Query').fill('Write a haiku about tides');
    await page.getByRole('button', { name: 'Execute' }).click();
    await page.getByTestId('agent-result').getByText('"success": true').waitFor();
    await page.getByRole('heading', { name: 'Runs in this session' }).waitFor();
    const listed = (await api('/v1/agents?limit=100')).body as unknown as {
      agents: { name: string; expose_as_tool: boolean }[];
    };
    expect(listed.agents.find((agent) => agent.name === 'Writer')?.expose_as_tool).toBe(true);
    await checkPage('agents');
  });

  it('builds a two-stage pipeline by adding and connecting nodes, saves, runs it and watches both stages complete', async () => {
    const second = await api('/v1/agents', {
      method: 'POST',
      body: JSON.stringify({ name: 'Polisher', agent_type: 'GenerationAgent', configuration: {} }),
    });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    await page.getByRole('link', { name: 'Pipelines' }).click();
    await page.getByRole('link', { name: 'New pipeline' }).click();
    await page.getByLabel('Pipeline name').fill('Write and polish');
    await page.getByRole('button', { name: 'Add stage' }).click();
    await page.getByRole('button', { name: 'Add stage' }).click();
    const first = page.getByTestId('stage-node-stage_1');
    const next = page.getByTestId('stage-node-stage_2');
    await pick('Agent', /^Writer/, first);

    // Saved without an agent on stage_2: the refusal is shown on that node.
    await page.getByRole('button', { name: 'Save pipeline' }).click();
    await next.getByTestId('stage-error').waitFor();
    await expect(first.getByTestId('stage-error').count()).resolves.toBe(0);
    await screenshot(page, 'pipeline-editor-error');
    problems.splice(0); // the browser logs the refused save (400), which was the point
    await pick('Agent', /^Polisher/, next);
    await expect(next.getByTestId('stage-error').count()).resolves.toBe(0);

    const source = await page
      .locator('.react-flow__node', { has: first })
      .locator('.react-flow__handle.source')
      .boundingBox();
    const target = await page
      .locator('.react-flow__node', { has: next })
      .locator('.react-flow__handle.target')
      .boundingBox();
    if (source === null || target === null) throw new Error('handles not found');
    await page.mouse.move(source.x + source.width / 2, source.y + source.height / 2);
    await page.mouse.down();
    await page.mouse.move(target.x + target.width / 2, target.y + target.height / 2, { steps: 12 });
    await page.mouse.up();
    await page.locator('.react-flow__edge').first().waitFor({ state: 'attached' });
    await expect(next.getByLabel('Input mapping path 1 of stage_2').inputValue()).resolves.toBe(
      '$.stages.stage_1.text',
    );

    await page.getByRole('button', { name: 'Save pipeline' }).click();
    await page.getByText('Saved.').waitFor();
    await page.waitForURL(/\/pipelines\/pipe_/);
    await page.getByLabel('Inputs (JSON)').fill('{"question": "Tell me about tides"}');
    await page.getByRole('button', { name: 'Save and run' }).click();
    await page.locator('[data-testid="stage-node-stage_1"][data-status="completed"]').waitFor();
    await page.locator('[data-testid="stage-node-stage_2"][data-status="completed"]').waitFor();
    await page.getByTestId('run-status').getByText('completed').waitFor();
    await checkPage('pipeline-editor');
    await expectWholeBadges(['completed', 'completed']);

    const pipelineId = /pipelines\/(pipe_\w+)/.exec(page.url())?.[1] ?? '';
    const stored = await api(`/v1/pipelines/${pipelineId}`);
    expect(stored.body.pipeline.visual_layout.nodes).toHaveLength(2);
    await page
      .getByRole('link', { name: /^exec_/ })
      .first()
      .click();
    await page.getByRole('heading', { name: '2. stage_2' }).waitFor();
    await checkPage('execution');
    await page.getByRole('link', { name: 'Pipelines' }).click();
    await page.getByRole('link', { name: 'Write and polish' }).waitFor();
    await checkPage('pipelines');
  });

  it("pre-fills the Run box with the inputs the pipeline's stages read", async () => {
    const agents = (await (
      await fetch(`${served.origin}/v1/agents?limit=100`, {
        headers: { authorization: `Bearer ${served.adminKey}` },
      })
    ).json()) as { agents: { id: string; name: string }[] };
    const writer = agents.agents.find((agent) => agent.name === 'Writer')!;
    const created = (await api('/v1/pipelines', {
      method: 'POST',
      body: JSON.stringify({
        name: 'Inputs of its own',
        stages: [
          { name: 'draft', agent_id: writer.id, input_mapping: { query: '$.input.topic' } },
          {
            name: 'again',
            agent_id: writer.id,
            input_mapping: {
              query: '$.stages.draft.text',
              'parameters.audience': '$.input["audience"]',
            },
          },
        ],
      }),
    })) as unknown as { status: number; body: { pipeline_id: string } };
    expect(created.status).toBe(201);
    await page.goto(`${served.origin}/pipelines/${created.body.pipeline_id}`);
    await page.getByTestId('stage-node-again').waitFor();
    const runBox = page.getByLabel('Inputs (JSON)');
    const runInputs = async () => JSON.parse(await runBox.inputValue()) as unknown;
    await expect.poll(runInputs).toEqual({ topic: '', audience: '' });
    // It follows the mappings until it is edited.
    await page
      .getByTestId('stage-node-draft')
      .getByLabel('Input mapping path 1 of draft')
      .fill('$.input.subject');
    await expect.poll(runInputs).toEqual({ subject: '', audience: '' });
    await runBox.fill('{"subject": "tides", "audience": "children"}');
    await page
      .getByTestId('stage-node-draft')
      .getByLabel('Input mapping path 1 of draft')
      .fill('$.input.topic');
    await expect(runInputs()).resolves.toEqual({ subject: 'tides', audience: 'children' });
    await checkPage('pipeline-run-inputs');
  });

  it('uploads a document to a knowledge base and finds it', async () => {
    await page.getByRole('link', { name: 'Knowledge' }).click();
    await page.getByLabel('New knowledge base').fill('Handbook');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Upload documents' }).waitFor();
    await page.locator('input[type="file"]').setInputFiles({
      name: 'leave.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from('# Leave\n\nEmployees have 25 days of paid leave every year.\n'),
    });
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByRole('cell', { name: 'leave', exact: true }).waitFor();
    await page.getByLabel('Query').fill('paid leave days');
    await page.getByRole('button', { name: 'Search' }).click();
    await page
      .getByTestId('search-results')
      .getByText(/score \d/)
      .first()
      .waitFor();
    await checkPage('knowledge');
  });

  it('routes a message and teaches the router', async () => {
    await page.getByRole('link', { name: 'Routing' }).click();
    await page.getByRole('heading', { name: 'Policies' }).waitFor();
    await checkPage('routing');
    expect(await featureOn('autonomous_routing')).toBe(true);
    const message = 'Please summarise this quarterly report for me';
    await page.getByRole('textbox', { name: 'Message' }).fill(message);
    await page.getByRole('button', { name: 'Route', exact: true }).click();
    await page.getByTestId('route-to').waitFor();
    await pick('Where it should go', /agent: Writer/);
    await page.getByRole('button', { name: 'Teach the router' }).click();
    await page.getByText(/Taught:/).waitFor();
    await page.getByRole('button', { name: 'Route', exact: true }).click();
    await page.getByTestId('route-to').getByText('Writer').waitFor();
    await checkPage('routing-taught');
  });

  it('offers an example policy that routes to a model of the catalog, and saves it', async () => {
    const models = (await (
      await fetch(`${served.origin}/v1/models`, {
        headers: { authorization: `Bearer ${served.adminKey}` },
      })
    ).json()) as { models: { name: string; type: string }[] };
    const chatModels = models.models.filter((model) => model.type === 'chat').map((m) => m.name);
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('link', { name: 'Routing' }).click();
    const box = page.getByLabel('New policy (JSON)');
    await expect.poll(async () => (await box.inputValue()).length).toBeGreaterThan(0);
    const example = JSON.parse(await box.inputValue()) as {
      name: string;
      actions: { route_to: { type: string; target: string } };
    };
    expect(example.actions.route_to.type).toBe('model');
    expect(chatModels).toContain(example.actions.route_to.target);
    expect(example.actions.route_to.target).not.toBe('gpt-4o');
    await page.getByRole('button', { name: 'Create policy' }).click();
    await page.getByRole('cell', { name: example.name, exact: true }).waitFor();
    const stored = (await (
      await fetch(`${served.origin}/v1/routing/policies`, {
        headers: { authorization: `Bearer ${served.adminKey}` },
      })
    ).json()) as { policies: { id: string; name: string }[] };
    const policy = stored.policies.find((entry) => entry.name === example.name);
    expect(policy).toBeDefined();
    await checkPage('routing-policy');
    // Gone again, so that later routing is not steered by it.
    await page.getByRole('button', { name: 'Delete' }).click();
    await page
      .getByRole('cell', { name: example.name, exact: true })
      .waitFor({ state: 'detached' });
  });

  it('shows spend and usage per key, per model and per end user, and the budgets', async () => {
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByTestId('usage-charts').locator('svg').first().waitFor();
    const requests = Number(await page.getByTestId('usage-requests').textContent());
    expect(requests).toBeGreaterThanOrEqual(4);
    // The fake models have no price: their calls show as unpriced, not as a guessed cost.
    expect(await page.getByTestId('usage-spend').textContent()).toMatch(/^\$0 \+ \d+ unpriced$/);
    await page.getByRole('cell', { name: 'fake-chat' }).first().waitFor();
    // Each part of the page once: the charts (spend by default), and a table per grouping.
    await expect(page.getByTestId('usage-charts').count()).resolves.toBe(1);
    await page
      .getByRole('figure', { name: 'Per end user: spend in US dollars over time' })
      .waitFor();
    for (const region of ['By key', 'By model', 'By end user', 'Budgets']) {
      await expect(page.getByRole('region', { name: region }).count(), region).resolves.toBe(1);
    }
    // A budget for the account: added, shown with its bar, changed, and deleted again (the fake
    // models have no price, so later calls under it would be refused).
    const budgets = page.getByRole('region', { name: 'Budgets' });
    const form = budgets.getByRole('form', { name: 'New budget' });
    await form.getByLabel(/^Limit \(USD\)/).fill('5');
    await form.getByLabel('Soft limit (USD)').fill('4');
    await form.getByRole('button', { name: 'Add budget' }).click();
    const budget = budgets.getByRole('article', { name: 'Budget: The account · month' });
    await budget.getByText('$0 spent and $0 reserved of $5.00 · soft limit $4.00').waitFor();
    await checkPage('usage');
    await budget.getByRole('button', { name: 'Edit' }).click();
    const change = budget.getByRole('form', { name: 'Change the budget' });
    await change.getByLabel(/^Limit \(USD\)/).fill('7');
    await change.getByLabel('Soft limit (USD)').fill('');
    await change.getByRole('button', { name: 'Save' }).click();
    await budget.getByText(/^\$0 spent and \$0 reserved of \$7\.00 · resets /).waitFor();
    const listed = await context.request.get(`${served.origin}/v1/budgets`);
    expect((await listed.json()) as unknown).toMatchObject({
      budgets: [{ scope: 'account', limit_usd: 7, soft_limit_usd: null, period: 'month' }],
    });
    await budget.getByRole('button', { name: 'Delete the budget: The account · month' }).click();
    await budgets.getByText('No budgets yet.').waitFor();
    // The records of the range as CSV, downloaded with the session.
    const href = await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href');
    expect(href).toMatch(/^\/v1\/usage\/export\?from=/);
    const csv = await context.request.get(`${served.origin}${href}`);
    expect(csv.status()).toBe(200);
    const lines = (await csv.text()).split('\r\n').filter((line) => line !== '');
    expect(lines[0]).toMatch(/^id,created_at,api_key_id,/);
    expect(lines.length - 1).toBe(requests);

    // The overview names each run's agent and the model its calls used.
    await page.getByRole('link', { name: 'Overview' }).click();
    await page
      .getByRole('cell', { name: /^agent Writer · fake-chat/ })
      .first()
      .waitFor();
    // The keys page shows each key's spend this month.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('columnheader', { name: 'Spend this month' }).waitFor();
  });

  it('has no serious accessibility violation in dark mode either', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    for (const [path, name] of [
      ['/', 'overview-dark'],
      ['/playground', 'playground-dark'],
      ['/voice', 'voice'],
    ] as const) {
      await page.goto(`${served.origin}${path}`);
      await page.getByRole('heading', { level: 2 }).first().waitFor();
      await checkPage(name);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('logs out, and the old session is refused', async () => {
    const cookie = (await context.cookies()).find((item) => item.name === 'platform_session');
    expect(cookie).toBeDefined();
    await page.goto(`${served.origin}/`);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    expect(
      (await context.cookies()).find((item) => item.name === 'platform_session'),
    ).toBeUndefined();
    const response = await fetch(`${served.origin}/v1/auth/me`, {
      headers: { cookie: `platform_session=${cookie?.value ?? ''}` },
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'invalid_session',
    );
    await page.goto(`${served.origin}/keys`);
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
  });
});
