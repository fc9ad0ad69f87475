// Routing through the HTTP API on each dialect: intent classification on messages outside the
// shipped training set, routes taught only through the feedback endpoint (shared by instances and
// kept across restarts), follow-ups, policies (each condition and action, priority), "auto" and
// forbidden models in chat and completions, bad input, other accounts, and the feature switches.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readIntentTrainingSet } from '../../src/modules/routing/intent-training-set.js';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import {
  bearer,
  createAccount,
  createKey,
  startTestApp,
  type TestApp,
} from '../support/test-app.js';

interface RouteJson {
  success: boolean;
  route_to: string;
  route_type: 'agent' | 'pipeline' | 'model';
  route_id: string;
  confidence: number;
  intent: { id: string; category: string; confidence: number };
  rationale: string;
  alternative_routes: {
    route_to: string;
    route_type: string;
    route_id: string;
    confidence: number;
  }[];
  decided_by: string;
  policy: { id: string; name: string } | null;
  max_tokens: number | null;
}

interface ErrorJson {
  error: { message: string; type: string; code: string; param: string | null };
}

type Caller = (
  method: string,
  url: string,
  payload?: unknown,
  key?: string,
) => Promise<{
  statusCode: number;
  body: string;
  json<T>(): T;
}>;

function caller(app: TestApp['app'], defaultKey: string): Caller {
  return (method, url, payload, key) =>
    app.inject({
      method: method as 'GET',
      url,
      headers: bearer(key ?? defaultKey),
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
}

/** Messages of each taught route: the first four teach, the rest are new paraphrases. */
const taught = {
  billing: [
    'I was charged twice on my last invoice',
    'why is my bill higher this month',
    'I need a copy of my invoice for march',
    'update the credit card used for my subscription payments',
    'there is a wrong amount on my invoice',
    'can you send me the invoice again, the charge looks off',
  ],
  'tech-support': [
    'the app crashes when I open the settings page',
    'I get an error 500 when uploading a file',
    'the sync keeps failing on my laptop',
    'login page shows a blank screen',
    'uploading files gives me an error every time',
    'the application crashes on startup',
  ],
  'travel-desk': [
    'book me a flight to berlin next monday',
    'I need a hotel room in madrid for two nights',
    'change my train ticket to a later departure',
    'reserve a rental car at the airport',
    'can you find me a flight to rome',
    'I need a hotel in paris for the conference',
  ],
} as const;

describe.each(allDialects)('routing on $name', (dialect) => {
  let harness: ChatHarness;
  let call: Caller;
  const agents: Record<string, string> = {};

  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
    call = caller(harness.app, harness.adminKey);
    for (const name of Object.keys(taught)) {
      const response = await call('POST', '/v1/agents', {
        name,
        agent_type: 'GenerationAgent',
        configuration: {},
      });
      expect(response.statusCode, response.body).toBe(201);
      agents[name] = response.json<{ id: string }>().id;
    }
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  it('reports the three features enabled', async () => {
    const response = await call('GET', '/v1/features');
    const features = response.json<{ features: { id: string; enabled: boolean }[] }>().features;
    for (const id of ['autonomous_routing', 'policy_engine', 'dynamic_layout_engine']) {
      expect(features.find((feature) => feature.id === id)?.enabled).toBe(true);
    }
  });

  it('classifies messages that are not in the shipped training set', async () => {
    const training = new Set(readIntentTrainingSet().map((example) => example.text.toLowerCase()));
    const cases: [string, string][] = [
      ['good morning, hope you are having a great day', 'GREETING'],
      ['write a python script that removes duplicate lines from a file', 'CODE'],
      ['translate this paragraph into italian please', 'TRANSLATION'],
      ['give me a short summary of the meeting transcript below', 'SUMMARIZATION'],
      ['what is the latest news about the stock market today?', 'WEB_SEARCH'],
      ['what does our company handbook say about remote work?', 'KNOWLEDGE_LOOKUP'],
      ['my package arrived broken and I want my money back', 'COMPLAINT'],
      ['solve for y: 2y - 4 = 10', 'REASONING'],
      ['write a short poem about the mountains in winter', 'CREATIVE_WRITING'],
      ['calculate the average revenue per region from this spreadsheet', 'DATA_ANALYSIS'],
    ];
    let correct = 0;
    for (const [message, expected] of cases) {
      expect(training.has(message)).toBe(false);
      const response = await call('POST', '/v1/routing/intent', { message });
      expect(response.statusCode, response.body).toBe(200);
      const { intent } = response.json<{ intent: { category: string } }>();
      if (intent.category === expected) correct += 1;
    }
    expect(correct).toBeGreaterThanOrEqual(9);
  });

  it('stores the intent with its entities and complexity', async () => {
    const response = await call('POST', '/v1/routing/intent', {
      message:
        'Email alice@example.com the report from https://example.com/q3 before next Friday and transfer $450 to Barack Obama in Paris',
      user_id: 'alice',
    });
    expect(response.statusCode, response.body).toBe(200);
    const { success, intent } = response.json<{
      success: boolean;
      intent: {
        id: string;
        category: string;
        timestamp: string;
        metadata: {
          detected_entities: string[];
          entities: { type: string; text: string; value: string | number }[];
          complexity: string;
        };
      };
    }>();
    expect(success).toBe(true);
    expect(intent.id).toMatch(/^int_/);
    const types = new Map(intent.metadata.entities.map((entity) => [entity.text, entity.type]));
    expect(types.get('alice@example.com')).toBe('email');
    expect(types.get('https://example.com/q3')).toBe('url');
    expect(types.get('$450')).toBe('money');
    expect(types.get('next Friday')).toBe('date');
    expect(types.get('Barack Obama')).toBe('person');
    expect(types.get('Paris')).toBe('place');
    expect(intent.metadata.detected_entities).toContain('next Friday');

    const stored = await call('GET', `/v1/routing/intents/${intent.id}`);
    expect(stored.statusCode).toBe(200);
    expect(stored.json<{ intent: { id: string; text: string } }>().intent.id).toBe(intent.id);

    const simple = await call('POST', '/v1/routing/intent', { message: 'hi' });
    expect(
      simple.json<{ intent: { metadata: { complexity: string } } }>().intent.metadata.complexity,
    ).toBe('simple');
    const complex = await call('POST', '/v1/routing/intent', {
      message:
        'Compare three database designs for our billing system step by step. Explain the trade-offs in detail, and make sure each design handles at least 10,000 writes per second without losing data. Which one would you choose, and why? Also outline a migration plan.',
    });
    expect(
      complex.json<{ intent: { metadata: { complexity: string } } }>().intent.metadata.complexity,
    ).toBe('complex');
  });

  it('classifies with a chat model when one is named', async () => {
    harness.upstream.enqueueFor('chat', {
      kind: 'reply',
      content: '{"category":"DATA_ANALYSIS","confidence":0.93}',
    });
    const response = await call('POST', '/v1/routing/intent', {
      message: 'what do these numbers tell us',
      model: 'fake-chat',
    });
    expect(response.statusCode, response.body).toBe(200);
    const { intent } = response.json<{
      intent: { category: string; confidence: number; metadata: { method: string } };
    }>();
    expect(intent).toMatchObject({ category: 'DATA_ANALYSIS', confidence: 0.93 });
    expect(intent.metadata.method).toBe('model:fake-chat');
  });

  it('degrades when the named model answers outside the schema: a category read from its text, else the shipped classifier', async () => {
    type IntentJson = {
      intent: { category: string; metadata: { method: string; notice?: string } };
    };
    // Two plain-text answers (the first, and the one to the repair request) naming a category.
    harness.upstream.enqueueFor(
      'chat',
      { kind: 'reply', content: 'That is a TASK.' },
      { kind: 'reply', content: 'I would say TASK.' },
    );
    const named = await call('POST', '/v1/routing/intent', {
      message: 'please book a table for two tonight',
      model: 'fake-chat',
    });
    expect(named.statusCode, named.body).toBe(200);
    expect(named.json<IntentJson>().intent).toMatchObject({
      category: 'TASK',
      metadata: { method: 'model:fake-chat' },
    });
    expect(named.json<IntentJson>().intent.metadata.notice).toMatch(/read from the plain text/);
    // Answers that name no category: the shipped classifier's, with the reason.
    harness.upstream.enqueueFor(
      'chat',
      { kind: 'reply', content: 'Hmm.' },
      { kind: 'reply', content: 'Not sure.' },
    );
    const fallback = await call('POST', '/v1/routing/intent', {
      message: 'please book a table for two tonight',
      model: 'fake-chat',
    });
    expect(fallback.statusCode, fallback.body).toBe(200);
    const intent = fallback.json<IntentJson>().intent;
    expect(intent.metadata.method).toBe('classifier');
    expect(intent.metadata.notice).toMatch(/did not match the expected structure/);
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: [string, unknown, string][] = [
      ['/v1/routing/intent', {}, 'message'],
      ['/v1/routing/intent', { message: 'x'.repeat(20_001) }, 'message'],
      [
        '/v1/routing/route',
        { message: 'hi', context: { preferences: { routing_strategy: 'fastest' } } },
        'context.preferences.routing_strategy',
      ],
      ['/v1/routing/route', { message: 'hi', context: { history: 'nope' } }, 'context.history'],
      ['/v1/routing/feedback', { message: 'hi' }, 'selected_route'],
      [
        '/v1/routing/feedback',
        { message: 'hi', selected_route: 'no-such-route' },
        'selected_route',
      ],
      [
        '/v1/routing/feedback',
        { message: 'hi', selected_route: 'billing', route_type: 'robot' },
        'route_type',
      ],
    ];
    for (const [url, payload, param] of cases) {
      const response = await call('POST', url, payload);
      expect(response.statusCode, `${url} ${JSON.stringify(payload).slice(0, 80)}`).toBe(400);
      expect(response.json<ErrorJson>().error.param).toBe(param);
    }
  });

  it('routes to an agent whose type serves the intent before anything is taught', async () => {
    const kb = await call('POST', '/v1/knowledge-bases', { name: 'Handbook' });
    expect(kb.statusCode, kb.body).toBe(201);
    const retrieval = await call('POST', '/v1/agents', {
      name: 'HR handbook',
      agent_type: 'RetrievalAgent',
      configuration: { knowledge_base_ids: [kb.json<{ id: string }>().id] },
    });
    expect(retrieval.statusCode, retrieval.body).toBe(201);
    const route = await call('POST', '/v1/routing/route', {
      message: 'what does our employee handbook say about parental leave?',
    });
    expect(route.statusCode, route.body).toBe(200);
    const decision = route.json<RouteJson>();
    expect(decision).toMatchObject({
      route_to: 'HR handbook',
      route_type: 'agent',
      route_id: retrieval.json<{ id: string }>().id,
      decided_by: 'capability',
    });
    expect(decision.intent.category).toBe('KNOWLEDGE_LOOKUP');
    expect(decision.rationale).toContain('knowledge_base_search');

    const greeting = await call('POST', '/v1/routing/route', { message: 'hello there!' });
    expect(greeting.json<RouteJson>()).toMatchObject({
      route_type: 'model',
      route_to: 'fake-chat',
      decided_by: 'model',
    });
    await call('DELETE', `/v1/agents/${retrieval.json<{ id: string }>().id}`);
  });

  it('learns routes from feedback alone and routes new paraphrases', async () => {
    for (const [name, messages] of Object.entries(taught)) {
      for (const message of messages.slice(0, 4)) {
        const response = await call('POST', '/v1/routing/feedback', {
          message,
          selected_route: name,
        });
        expect(response.statusCode, response.body).toBe(200);
        const body = response.json<{ success: boolean; feedback_id: string; route_id: string }>();
        expect(body.success).toBe(true);
        expect(body.feedback_id).toMatch(/^rfb_/);
        expect(body.route_id).toBe(agents[name]);
      }
    }
    for (const [name, messages] of Object.entries(taught)) {
      for (const message of messages.slice(4)) {
        const response = await call('POST', '/v1/routing/route', { message });
        expect(response.statusCode, response.body).toBe(200);
        const decision = response.json<RouteJson>();
        expect(decision.route_to, message).toBe(name);
        expect(decision.decided_by).toBe('learned');
        expect(decision.rationale).toContain('Taught examples decided');
        expect(decision.alternative_routes.length).toBeGreaterThan(0);
        expect(decision.alternative_routes.some((route) => route.route_to === name)).toBe(false);
      }
    }
  });

  it('says so when a message is unlike anything taught', async () => {
    const response = await call('POST', '/v1/routing/route', {
      message: 'explain photosynthesis in plants',
    });
    const decision = response.json<RouteJson>();
    expect(decision.decided_by).not.toBe('learned');
    expect(decision.route_type).toBe('model');
    expect(decision.confidence).toBeLessThanOrEqual(0.5);
    expect(decision.rationale).toMatch(/nothing taught resembles it/);
  });

  it('sends a follow-up where the previous turn went', async () => {
    const byHistory = await call('POST', '/v1/routing/route', {
      message: 'and for two people?',
      context: {
        history: [
          { role: 'user', content: 'I need a hotel room in lisbon for three nights' },
          { role: 'assistant', content: 'Sure, which dates?' },
        ],
      },
    });
    expect(byHistory.json<RouteJson>()).toMatchObject({
      route_to: 'travel-desk',
      decided_by: 'follow_up',
    });

    const conversation = await call('POST', '/v1/conversations', { user_id: 'bob' });
    const conversationId = conversation.json<{ id: string }>().id;
    const first = await call('POST', '/v1/routing/route', {
      message: 'the app crashes when I open my profile',
      conversation_id: conversationId,
    });
    expect(first.json<RouteJson>().route_to).toBe('tech-support');
    const followUp = await call('POST', '/v1/routing/route', {
      message: 'and in French?',
      conversation_id: conversationId,
    });
    expect(followUp.json<RouteJson>()).toMatchObject({
      route_to: 'tech-support',
      decided_by: 'follow_up',
    });
    expect(followUp.json<RouteJson>().rationale).toContain('recorded for this conversation');
  });

  it('shares what was taught with other instances at once, and keeps it across restarts', async () => {
    const second = await startTestApp({
      dialect,
      database: harness.database,
      adminKey: harness.adminKey,
      env: { FAKE_UPSTREAM_KEY: 'unused' },
      overrides: {
        rate_limits: {
          default_tier: 'test',
          tiers: { test: { per_minute: 100_000, per_day: 1_000_000 } },
        },
      },
    });
    try {
      const other = caller(second.app, harness.adminKey);
      // Warm the second instance's cache, then teach on the first.
      await other('POST', '/v1/routing/route', { message: 'warm up' });
      const message = 'my smart fridge firmware will not update over the network';
      const before = await other('POST', '/v1/routing/route', { message });
      expect(before.json<RouteJson>().route_to).not.toBe('tech-support');
      const taughtResponse = await call('POST', '/v1/routing/feedback', {
        message: 'the firmware update of my fridge fails on the network',
        selected_route: agents['tech-support'],
      });
      expect(taughtResponse.statusCode).toBe(200);
      const after = await other('POST', '/v1/routing/route', { message });
      expect(after.json<RouteJson>()).toMatchObject({
        route_to: 'tech-support',
        decided_by: 'learned',
      });
    } finally {
      await second.close();
    }
    const restarted = await startTestApp({
      dialect,
      database: harness.database,
      adminKey: harness.adminKey,
      overrides: {
        rate_limits: {
          default_tier: 'test',
          tiers: { test: { per_minute: 100_000, per_day: 1_000_000 } },
        },
      },
    });
    try {
      const response = await caller(restarted.app, harness.adminKey)('POST', '/v1/routing/route', {
        message: 'I was billed twice for the same invoice',
      });
      expect(response.json<RouteJson>()).toMatchObject({
        route_to: 'billing',
        decided_by: 'learned',
      });
    } finally {
      await restarted.close();
    }
  });

  it('keeps accounts apart: routes, feedback and policies', async () => {
    const account = await createAccount(harness.app, harness.adminKey, 'Other team');
    const otherCall = caller(harness.app, account.admin_key);
    await call('PATCH', `/v1/agents/${agents.billing}`, { is_public: true });
    // Another account's agents, even public ones, are no candidates and cannot be taught.
    const feedback = await otherCall('POST', '/v1/routing/feedback', {
      message: 'I was charged twice',
      selected_route: agents.billing,
    });
    expect(feedback.statusCode).toBe(400);
    expect(feedback.json<ErrorJson>().error.param).toBe('selected_route');
    const route = await otherCall('POST', '/v1/routing/route', {
      message: taught.billing[4],
    });
    expect(route.json<RouteJson>().route_type).toBe('model');
    expect(route.json<RouteJson>().decided_by).not.toBe('learned');
    await call('PATCH', `/v1/agents/${agents.billing}`, { is_public: false });

    const policy = await call('POST', '/v1/routing/policies', {
      name: 'private',
      actions: { max_tokens: 100 },
    });
    const policyId = policy.json<{ id: string }>().id;
    expect((await otherCall('GET', `/v1/routing/policies/${policyId}`)).statusCode).toBe(404);
    expect(
      (await otherCall('PATCH', `/v1/routing/policies/${policyId}`, { enabled: false })).statusCode,
    ).toBe(404);
    expect((await otherCall('DELETE', `/v1/routing/policies/${policyId}`)).statusCode).toBe(404);
    expect(
      (await otherCall('GET', '/v1/routing/policies')).json<{ policies: unknown[] }>().policies,
    ).toEqual([]);
    const intent = await call('POST', '/v1/routing/intent', { message: 'hello' });
    const intentId = intent.json<{ intent: { id: string } }>().intent.id;
    expect((await otherCall('GET', `/v1/routing/intents/${intentId}`)).statusCode).toBe(404);
    const conversation = await call('POST', '/v1/conversations', { user_id: 'carol' });
    const foreign = await otherCall('POST', '/v1/routing/route', {
      message: 'hello',
      conversation_id: conversation.json<{ id: string }>().id,
    });
    expect(foreign.statusCode).toBe(404);
    await call('DELETE', `/v1/routing/policies/${policyId}`);
  });

  describe('policies', () => {
    const created: string[] = [];
    const createPolicy = async (body: Record<string, unknown>) => {
      const response = await call('POST', '/v1/routing/policies', body);
      expect(response.statusCode, response.body).toBe(201);
      const policy = response.json<{ id: string }>();
      created.push(policy.id);
      return policy;
    };
    beforeEach(async () => {
      for (const id of created.splice(0)) await call('DELETE', `/v1/routing/policies/${id}`);
    });

    it('refuses invalid rules with a 400 naming the field', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ name: 'x', actions: {} }, 'actions'],
        [
          { name: 'x', conditions: { pattern: '(a)\\1' }, actions: { max_tokens: 5 } },
          'conditions.pattern',
        ],
        [
          { name: 'x', conditions: { tiers: ['gold'] }, actions: { max_tokens: 5 } },
          'conditions.tiers[0]',
        ],
        [
          {
            name: 'x',
            conditions: { intent_categories: ['SHOPPING'] },
            actions: { max_tokens: 5 },
          },
          'conditions.intent_categories[0]',
        ],
        [{ name: 'x', actions: { route_to: { target: 'nobody' } } }, 'actions.route_to.target'],
        [{ name: 'x', actions: { forbid_models: ['no-such-model'] } }, 'actions.forbid_models[0]'],
        [{ name: 'x', actions: { require_provider: 'acme-ai' } }, 'actions.require_provider'],
        [{ name: 'x', actions: { max_tokens: 0 } }, 'actions.max_tokens'],
        [{ name: 'x', priority: -1, actions: { max_tokens: 5 } }, 'priority'],
        [{ actions: { max_tokens: 5 } }, 'name'],
        [
          {
            name: 'x',
            actions: { route_to: { target: 'fake-chat' }, forbid_models: ['fake-chat'] },
          },
          'actions.route_to.target',
        ],
      ];
      for (const [body, param] of cases) {
        const response = await call('POST', '/v1/routing/policies', body);
        expect(response.statusCode, JSON.stringify(body)).toBe(400);
        expect(response.json<ErrorJson>().error.param, JSON.stringify(body)).toBe(param);
      }
    });

    it('lists, reads, changes and deletes policies', async () => {
      const policy = await createPolicy({
        name: 'billing words',
        priority: 5,
        conditions: { keywords: ['refund'] },
        actions: { route_to: { type: 'agent', target: 'billing' } },
      });
      const read = await call('GET', `/v1/routing/policies/${policy.id}`);
      expect(read.json()).toMatchObject({
        name: 'billing words',
        priority: 5,
        enabled: true,
        actions: { route_to: { type: 'agent', target: agents.billing, name: 'billing' } },
      });
      const changed = await call('PATCH', `/v1/routing/policies/${policy.id}`, { enabled: false });
      expect(changed.json<{ enabled: boolean }>().enabled).toBe(false);
      const list = await call('GET', '/v1/routing/policies');
      expect(
        list.json<{ policies: { id: string }[] }>().policies.map((entry) => entry.id),
      ).toContain(policy.id);
    });

    it('route_to decides before the learned router, in priority order, and is named in the rationale', async () => {
      const low = await createPolicy({
        name: 'refunds to tech',
        priority: 20,
        conditions: { keywords: ['refund'] },
        actions: { route_to: { target: agents['tech-support'] } },
      });
      const high = await createPolicy({
        name: 'refunds to billing',
        priority: 10,
        conditions: { keywords: ['refund'] },
        actions: { route_to: { target: 'billing' } },
      });
      const response = await call('POST', '/v1/routing/route', {
        message: 'the app crashes when I ask for a refund',
      });
      const decision = response.json<RouteJson>();
      expect(decision).toMatchObject({ route_to: 'billing', decided_by: 'policy', confidence: 1 });
      expect(decision.policy?.id).toBe(high.id);
      expect(decision.rationale).toContain("Policy 'refunds to billing'");
      expect(decision.rationale).toContain("keyword 'refund'");
      await call('PATCH', `/v1/routing/policies/${high.id}`, { priority: 30 });
      const again = await call('POST', '/v1/routing/route', {
        message: 'the app crashes when I ask for a refund',
      });
      expect(again.json<RouteJson>().policy?.id).toBe(low.id);
    });

    it('applies each condition: category, pattern, tier and scopes', async () => {
      await createPolicy({
        name: 'code to backup',
        conditions: { intent_categories: ['CODE'] },
        actions: { route_to: { target: 'fake-backup' } },
      });
      await createPolicy({
        name: 'orders',
        conditions: { pattern: 'order\\s+#?\\d{4,}' },
        actions: { route_to: { target: 'fake-small' } },
      });
      const code = await call('POST', '/v1/routing/route', {
        message: 'write a javascript function that sorts an array of numbers',
      });
      expect(code.json<RouteJson>()).toMatchObject({
        route_to: 'fake-backup',
        decided_by: 'policy',
      });
      const order = await call('POST', '/v1/routing/route', { message: 'where is order #12345' });
      expect(order.json<RouteJson>()).toMatchObject({
        route_to: 'fake-small',
        decided_by: 'policy',
      });

      await createPolicy({
        name: 'free tier',
        conditions: { tiers: ['free'] },
        actions: { route_to: { target: 'fake-slow' } },
      });
      await createPolicy({
        name: 'writers',
        priority: 200,
        conditions: { scopes: ['agents:write'] },
        actions: { route_to: { target: 'fake-backup' } },
      });
      const freeKey = await createKey(harness.app, harness.adminKey, {
        scopes: ['chat:write'],
        tier: 'free',
      });
      const writerKey = await createKey(harness.app, harness.adminKey, {
        scopes: ['chat:write', 'agents:write'],
        tier: 'test',
      });
      const readerKey = await createKey(harness.app, harness.adminKey, {
        scopes: ['chat:write'],
        tier: 'test',
      });
      const message = 'hello there';
      const free = await call('POST', '/v1/routing/route', { message }, freeKey.key);
      expect(free.json<RouteJson>()).toMatchObject({ route_to: 'fake-slow', decided_by: 'policy' });
      const writer = await call('POST', '/v1/routing/route', { message }, writerKey.key);
      expect(writer.json<RouteJson>()).toMatchObject({
        route_to: 'fake-backup',
        decided_by: 'policy',
      });
      const reader = await call('POST', '/v1/routing/route', { message }, readerKey.key);
      expect(reader.json<RouteJson>().decided_by).not.toBe('policy');
    });

    it('forbids models and providers, requires a provider, caps max_tokens', async () => {
      await createPolicy({
        name: 'no default model',
        conditions: { keywords: ['confidential'] },
        actions: { forbid_models: ['fake-chat'], max_tokens: 42 },
      });
      const forbidden = await call('POST', '/v1/routing/route', {
        message: 'summarize this confidential memo in a sentence: hello',
      });
      const decision = forbidden.json<RouteJson>();
      expect(decision.route_to).not.toBe('fake-chat');
      expect(decision.max_tokens).toBe(42);
      expect(decision.alternative_routes.some((route) => route.route_to === 'fake-chat')).toBe(
        false,
      );
      expect(decision.rationale).toContain("policy 'no default model' forbids fake-chat");

      await createPolicy({
        name: 'makers',
        conditions: { keywords: ['forbidden'] },
        actions: { require_provider: 'OpenAI' },
      });
      const required = await call('POST', '/v1/routing/route', { message: 'forbidden topic' });
      expect(required.statusCode, required.body).toBe(200);
      await createPolicy({
        name: 'no OpenAI-made models',
        conditions: { keywords: ['forbidden'] },
        actions: { forbid_providers: ['openai'] },
      });
      const byProvider = await call('POST', '/v1/routing/route', { message: 'forbidden topic' });
      expect(byProvider.statusCode).toBe(503);
      expect(byProvider.json<ErrorJson>().error.code).toBe('model_unavailable');
    });

    it('routes "model": "auto" in chat and completions, and refuses forbidden models with 403', async () => {
      await createPolicy({
        name: 'keep secrets off the default',
        conditions: { keywords: ['secret'] },
        actions: { forbid_models: ['fake-chat'], max_tokens: 17 },
      });
      for (const url of ['/v1/chat', '/chat/completions']) {
        const extra = url === '/v1/chat' ? { user_id: 'dana' } : {};
        const refused = await call('POST', url, {
          ...extra,
          model: 'fake-chat',
          messages: [{ role: 'user', content: 'tell me the secret plan' }],
        });
        expect(refused.statusCode, refused.body).toBe(403);
        expect(refused.json<ErrorJson>().error).toMatchObject({
          code: 'model_forbidden',
          type: 'permission_error',
          param: 'model',
        });
        harness.upstream.reset();
        const routed = await call('POST', url, {
          ...extra,
          model: 'auto',
          messages: [{ role: 'user', content: 'tell me the secret plan' }],
        });
        expect(routed.statusCode, routed.body).toBe(200);
        const answeredBy = routed.json<{ model: string }>().model;
        expect(answeredBy).not.toBe('fake-chat');
        expect(answeredBy).not.toBe('auto');
        const upstreamBody = harness.upstream.requests.at(-1)?.body as Record<string, unknown>;
        expect(upstreamBody.max_tokens ?? upstreamBody.max_completion_tokens).toBe(17);
        const plain = await call('POST', url, {
          ...extra,
          model: 'auto',
          messages: [{ role: 'user', content: 'hello, how are you?' }],
        });
        expect(plain.statusCode, plain.body).toBe(200);
        expect(plain.json<{ model: string }>().model).toBe('fake-chat');
      }
    });

    it('applies a policy at once on the instance that saved it, and within a second on another', async () => {
      let secondClock = Date.now();
      const second = await startChatHarness({
        dialect,
        database: harness.database,
        adminKey: harness.adminKey,
        services: { now: () => secondClock },
      });
      try {
        const other = caller(second.app, harness.adminKey);
        const ask = (via: Caller) =>
          via('POST', '/chat/completions', {
            model: 'fake-chat',
            messages: [{ role: 'user', content: 'summarise the classified memo' }],
          });
        // The other instance has read the account's (empty) policies and keeps them briefly.
        expect((await ask(other)).statusCode).toBe(200);
        await createPolicy({
          name: 'classified stays off the default',
          conditions: { keywords: ['classified'] },
          actions: { forbid_models: ['fake-chat'] },
        });
        expect((await ask(call)).statusCode).toBe(403);
        // The other instance re-reads the account's policy version once its copy is 500 ms old
        // by its clock.
        secondClock += 1000;
        expect((await ask(other)).statusCode).toBe(403);
      } finally {
        await second.close();
      }
    });
  });
});

describe.each(allDialects)('routing switched off on $name', (dialect) => {
  let harness: ChatHarness;
  beforeAll(async () => {
    harness = await startChatHarness({
      dialect,
      overrides: {
        features: { autonomous_routing: false, policy_engine: false, dynamic_layout_engine: false },
      },
    });
  });
  afterAll(async () => {
    await harness.close();
  });

  it('answers 403 feature_disabled on every routing and layout route', async () => {
    const call = caller(harness.app, harness.adminKey);
    const features = (await call('GET', '/v1/features')).json<{
      features: { id: string; enabled: boolean }[];
    }>().features;
    for (const id of ['autonomous_routing', 'policy_engine', 'dynamic_layout_engine']) {
      expect(features.find((feature) => feature.id === id)?.enabled).toBe(false);
    }
    const requests: [string, string, unknown][] = [
      ['POST', '/v1/routing/intent', { message: 'hi' }],
      ['POST', '/v1/routing/route', { message: 'hi' }],
      ['POST', '/v1/routing/feedback', { message: 'hi', selected_route: 'fake-chat' }],
      ['GET', '/v1/routing/policies', undefined],
      ['POST', '/v1/routing/policies', { name: 'x', actions: { max_tokens: 5 } }],
      ['POST', '/v1/layout', { message: '# Hi' }],
      [
        'POST',
        '/v1/chat',
        { user_id: 'u', model: 'auto', messages: [{ role: 'user', content: 'hi' }] },
      ],
    ];
    for (const [method, url, payload] of requests) {
      const response = await call(method, url, payload);
      expect(response.statusCode, `${method} ${url}`).toBe(403);
      expect(response.json<ErrorJson>().error.code).toBe('feature_disabled');
    }
    const chat = await call('POST', '/v1/chat', {
      user_id: 'u',
      model: 'fake-chat',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(chat.statusCode).toBe(200);
  });
});

describe.each(allDialects)('model strategies over the built-in catalog on $name', (dialect) => {
  let app: TestApp;
  let call: Caller;
  beforeAll(async () => {
    app = await startTestApp({ dialect });
    call = caller(app.app, app.adminKey);
  });
  afterAll(async () => {
    await app.close();
  });

  const route = async (message: string, preferences?: Record<string, unknown>) => {
    const response = await call('POST', '/v1/routing/route', {
      message,
      ...(preferences === undefined ? {} : { context: { preferences } }),
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<RouteJson>();
  };

  it('chooses by strategy and preference from the catalog facts', async () => {
    const message = 'tell me something nice';
    expect((await route(message, { routing_strategy: 'quality' })).route_to).toBe(
      'gemini-2.0-flash',
    );
    expect((await route(message, { routing_strategy: 'cost' })).route_to).toBe(
      'qwen2.5-0.5b-instruct',
    );
    expect((await route(message, { routing_strategy: 'latency' })).route_to).toBe(
      'qwen2.5-0.5b-instruct',
    );
    const preferred = await route(message, { preferred_models: ['claude-3-5-haiku'] });
    expect(preferred.route_to).toBe('claude-3-5-haiku');
    expect(preferred.rationale).toContain('preferred_models');
    const balanced = await route(message);
    expect(balanced.rationale).toContain('strategy balanced');
    const models = await call('GET', '/v1/models/gpt-4o-mini');
    expect(models.json()).toMatchObject({
      input_cost_per_million: 0.15,
      output_cost_per_million: 0.6,
      quality: 70,
      typical_latency_ms: 500,
    });
  });

  it('requires and forbids providers by maker or connection', async () => {
    const policy = await call('POST', '/v1/routing/policies', {
      name: 'anthropic only',
      conditions: { keywords: ['contract'] },
      actions: { require_provider: 'anthropic' },
    });
    expect(policy.statusCode, policy.body).toBe(201);
    const decision = await route('review this contract clause', { routing_strategy: 'quality' });
    expect(decision.route_to).toBe('claude-3-5-haiku');
    expect(decision.rationale).toContain('requires provider anthropic');
    const forbid = await call('POST', '/v1/routing/policies', {
      name: 'no Google',
      actions: { forbid_providers: ['Google'] },
    });
    expect(forbid.statusCode).toBe(201);
    expect((await route('anything at all', { routing_strategy: 'quality' })).route_to).not.toBe(
      'gemini-2.0-flash',
    );
  });
});
