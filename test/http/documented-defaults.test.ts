// What the docs promise about defaults, held against the service on every dialect: the built-in
// prompt templates require no variable and fill each one left out with the default docs/api.md
// lists; an agent created without `model_id` shows null and runs on the catalog's default model
// of the moment, so a deployment that changes `default_model` moves it along.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects, type TestDatabase } from '../support/dialects.js';
import { repositoryRoot } from '../support/process.js';
import { bearer } from '../support/test-app.js';

interface VariableDetail {
  name: string;
  required: boolean;
  default: string | null;
}

/**
 * The template table of docs/api.md: template name → its variables, each with the default the
 * row gives (`name` (default: text)), or null where the row gives none.
 */
function documentedTemplates(): Map<string, Map<string, string | null>> {
  const page = readFileSync(path.join(repositoryRoot, 'docs', 'api.md'), 'utf8');
  const start = page.indexOf('## Prompt templates');
  const section = page.slice(start, page.indexOf('\n## ', start + 1));
  const templates = new Map<string, Map<string, string | null>>();
  for (const row of section.matchAll(/^\| `([a-z_]+)` +\| (.+?) +\|$/gm)) {
    const variables = new Map<string, string | null>();
    for (const variable of row[2]!.matchAll(/`([a-z_]+)`(?: \(default: ([^)]+)\))?/g)) {
      variables.set(variable[1]!, variable[2] ?? null);
    }
    templates.set(row[1]!, variables);
  }
  return templates;
}

describe.each(allDialects)('documented defaults on $name', (dialect) => {
  describe('prompt templates', () => {
    let harness: ChatHarness;
    const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
      harness.app.inject({
        method,
        url,
        headers: bearer(harness.adminKey),
        ...(payload === undefined ? {} : { payload }),
      });

    beforeAll(async () => {
      harness = await startChatHarness({ dialect });
    });
    afterAll(async () => {
      await harness?.close();
    });

    it('lists in docs/api.md exactly the built-in templates, their variables and defaults', async () => {
      const documented = documentedTemplates();
      expect([...documented.keys()]).toEqual([
        'standard_assistant',
        'expert_assistant',
        'customer_support_assistant',
      ]);
      for (const [name, variables] of documented) {
        const response = await call('GET', `/v1/templates/${name}`);
        expect(response.statusCode, response.body).toBe(200);
        const details = response.json<{ variable_details: VariableDetail[] }>().variable_details;
        expect(
          details.map((detail) => [detail.name, detail.required, detail.default]),
          name,
        ).toEqual([...variables].map(([variable, value]) => [variable, false, value]));
      }
    });

    it.each(['standard_assistant', 'expert_assistant', 'customer_support_assistant'])(
      'assigns %s without any variable, filling in the documented defaults',
      async (name) => {
        const created = await call('POST', '/v1/conversations', { user_id: 'dana' });
        const id = created.json<{ id: string }>().id;
        const assigned = await call('POST', `/v1/conversations/${id}/template`, {
          template_name: name,
        });
        expect(assigned.statusCode, assigned.body).toBe(200);
        const prompt = (await call('GET', `/v1/conversations/${id}`)).json<{
          system_prompt: string;
        }>().system_prompt;
        for (const value of documentedTemplates().get(name)!.values()) {
          if (value !== null) expect(prompt).toContain(value);
        }
        expect(prompt).not.toMatch(/\{\{/);
      },
    );
  });

  describe('an agent without model_id', () => {
    let database: TestDatabase;
    let harness: ChatHarness | undefined;
    const adminKeyHolder: { key?: string } = {};

    /** The service on the shared database, with `defaultModel` as the catalog's default. */
    async function start(defaultModel: string): Promise<ChatHarness> {
      await harness?.close();
      harness = await startChatHarness({
        dialect,
        database,
        ...(adminKeyHolder.key === undefined ? {} : { adminKey: adminKeyHolder.key }),
        overrides: { default_model: defaultModel },
      });
      adminKeyHolder.key = harness.adminKey;
      return harness;
    }
    const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
      harness!.app.inject({
        method,
        url,
        headers: bearer(harness!.adminKey),
        ...(payload === undefined ? {} : { payload }),
      });
    /** Runs the agent; answers the upstream model id its chat call named. */
    async function runOn(agentId: string): Promise<string> {
      harness!.upstream.reset();
      const run = await call('POST', `/v1/agents/${agentId}/execute`, { query: 'A haiku, please' });
      expect(run.statusCode, run.body).toBe(200);
      expect(run.json<{ success: boolean }>().success, run.body).toBe(true);
      const chats = harness!.upstream.requests.filter((request) => request.endpoint === 'chat');
      expect(chats.length).toBeGreaterThan(0);
      return (chats[0]!.body as { model: string }).model;
    }

    beforeAll(async () => {
      database = await dialect.create();
    });
    afterAll(async () => {
      await harness?.close();
      await database?.drop();
    });

    it("shows null, runs on the default model of each run's moment, and PATCH null returns to it", async () => {
      // fake-chat is the upstream's gpt-4o-mini, fake-backup its gpt-4o (test/support/chat-harness.ts).
      await start('fake-chat');
      const created = await call('POST', '/v1/agents', {
        name: 'poet',
        agent_type: 'GenerationAgent',
        configuration: {},
      });
      expect(created.statusCode, created.body).toBe(201);
      const agent = created.json<{ id: string; model_id: string | null }>();
      expect(agent.model_id).toBeNull();
      expect(await runOn(agent.id)).toBe('gpt-4o-mini');

      // The deployment changes its default model: the agent follows from its next run.
      await start('fake-backup');
      const read = await call('GET', `/v1/agents/${agent.id}`);
      expect(read.json<{ model_id: string | null }>().model_id).toBeNull();
      expect(await runOn(agent.id)).toBe('gpt-4o');

      // A model of its own, then null again: back on the default.
      const own = await call('PATCH', `/v1/agents/${agent.id}`, { model_id: 'fake-small' });
      expect(own.json<{ model_id: string | null }>().model_id).toBe('fake-small');
      const back = await call('PATCH', `/v1/agents/${agent.id}`, { model_id: null });
      expect(back.statusCode, back.body).toBe(200);
      expect(back.json<{ model_id: string | null }>().model_id).toBeNull();
      expect(await runOn(agent.id)).toBe('gpt-4o');
    });

    it('says so wherever /openapi.json describes model_id', async () => {
      const document = (await call('GET', '/openapi.json')).json<unknown>();
      const descriptions: unknown[] = [];
      const walk = (value: unknown): void => {
        if (Array.isArray(value)) value.forEach(walk);
        else if (value !== null && typeof value === 'object') {
          for (const [key, child] of Object.entries(value)) {
            if (key === 'model_id' && child !== null && typeof child === 'object') {
              descriptions.push((child as { description?: unknown }).description);
            }
            walk(child);
          }
        }
      };
      walk(document);
      // The agent as answered, and the create and update bodies (each at least once).
      expect(descriptions.length).toBeGreaterThanOrEqual(3);
      for (const description of descriptions) {
        expect(description).toContain("the catalog's default model at the time of each run");
      }
    });
  });
});
