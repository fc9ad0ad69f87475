// The route decider on its own, on each dialect: real storage through the module's repository and
// router cache, the real model registry, intent classifier and policies, and agents and pipelines
// read from their tables. No app, no HTTP, and no model is called: the catalog's models only have
// facts (quality, cost, latency) and an API key that is set, or not.
import type { Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../agents/agent.js';
import { summarizationAgent } from '../agents/types/summarization-agent.js';
import type { AppConfig } from '../../config/config.js';
import { ConversationService } from '../conversations/conversation-service.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import { AgentsRepository } from '../agents/agents.repository.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { PipelinesRepository } from '../pipelines/pipelines.repository.js';
import { newId } from '../../ids.js';
import { TemplateCatalog } from '../templates/template-catalog.js';
import { allDialects } from '../../../test/support/dialects.js';
import { unitModelRegistry, type UnitModels } from '../../../test/support/unit/models.js';
import {
  insertAccount,
  openUnitStorage,
  type UnitStorage,
} from '../../../test/support/unit/storage.js';
import { RouteDecider } from './decider.js';
import { IntentClassifier } from './intent-classifier.js';
import { PolicyManager } from './policy-management.js';
import { RouterCache } from './router-cache.js';
import { RoutingContext, type RoutingDependencies } from './routing-context.js';
import { RoutingRepository } from './routing.repository.js';
import type { RouteRequest, RoutingCaller } from './types.js';

/**
 * `swift` (the default) is cheap and fast, `sage` good and dear; `dormant` beats both on every
 * fact but its API key is not set, so it is unavailable. None is ever called.
 */
function catalog() {
  const model = (name: string, facts: Record<string, number>, keyEnv = 'ROUTING_UNIT_KEY') => ({
    name,
    provider: 'openai-compatible' as const,
    base_url: 'http://127.0.0.1:9/v1',
    api_key_env: keyEnv,
    model: 'gpt-4o-mini',
    max_tokens: 256,
    context_length: 4096,
    max_retries: 0,
    ...facts,
  });
  return {
    default_model: 'swift',
    models: [
      model('swift', {
        quality: 40,
        input_cost_per_million: 0.1,
        output_cost_per_million: 0.4,
        typical_latency_ms: 200,
      }),
      model('sage', {
        quality: 90,
        input_cost_per_million: 5,
        output_cost_per_million: 15,
        typical_latency_ms: 900,
      }),
      model(
        'dormant',
        {
          quality: 99,
          input_cost_per_million: 0.05,
          output_cost_per_million: 0.1,
          typical_latency_ms: 100,
        },
        'ROUTING_UNIT_ABSENT_KEY',
      ),
    ],
    speech: { builtin_engines: false },
  };
}

const complexMessage =
  'Compare the pros and cons of three database designs step by step, then explain why one is better. You must keep it short and you should avoid jargon. What are the trade-offs? Which one would you pick?';

function request(message: string, extra: Partial<RouteRequest> = {}): RouteRequest {
  return {
    message,
    conversationId: null,
    history: [],
    preferredModels: [],
    strategy: null,
    signal: new AbortController().signal,
    ...extra,
  };
}

/** Routing's dependencies over `unit`'s database, with `config` and `models` as given. */
function dependencies(
  unit: UnitStorage,
  config: AppConfig,
  models: ModelRegistry,
  logger: Logger,
): RoutingDependencies {
  const repository = new RoutingRepository(unit.storage.db);
  const agents = new AgentsRepository(unit.storage.db);
  const pipelines = new PipelinesRepository(unit.storage.db);
  return {
    config,
    repository,
    cache: new RouterCache({ repository, maxBytes: 16 * 1024 * 1024, logger }),
    classifier: new IntentClassifier(models),
    models,
    // What AgentService.list and PipelineService.list read, from the same tables.
    agents: { list: (accountId, page) => agents.listVisible(accountId, page) },
    pipelines: { list: (accountId, page) => pipelines.list(accountId, page) },
    agentCatalog: { list: () => [summarizationAgent] },
    conversations: new ConversationService({
      conversations: new ConversationsRepository(unit.storage.db),
      models,
      templates: new TemplateCatalog(config.templates),
    }),
    logger,
  };
}

describe.each(allDialects)('the route decider on $name', (dialect) => {
  let unit: UnitStorage;
  let registry: UnitModels;
  let context: RoutingContext;
  let decider: RouteDecider;
  let policies: PolicyManager;

  beforeAll(async () => {
    unit = await openUnitStorage(dialect, {
      env: { ROUTING_UNIT_KEY: 'sk-routing-unit-key' },
      overrides: catalog(),
    });
    registry = await unitModelRegistry(unit.config, unit.logger);
    context = new RoutingContext(dependencies(unit, unit.config, registry.models, unit.logger));
    decider = new RouteDecider(context);
    policies = new PolicyManager(context);
  });
  afterAll(async () => {
    await registry.close();
    await unit.close();
  });

  /** A fresh account, as the key of a tier with every scope asks. */
  async function newCaller(): Promise<RoutingCaller> {
    const account = await insertAccount(unit.storage);
    return { accountId: account.id, tier: 'standard', scopes: ['admin'] };
  }

  it('lets the first matched policy that routes decide, in priority order', async () => {
    const caller = await newCaller();
    const later = await policies.create(caller.accountId, {
      name: 'to sage',
      priority: 20,
      conditions: { keywords: ['invoice'] },
      actions: { route_to: { target: 'sage' } },
    });
    await policies.create(caller.accountId, {
      name: 'to swift',
      priority: 10,
      conditions: { keywords: ['invoice'] },
      actions: { route_to: { target: 'swift' } },
    });
    await policies.create(caller.accountId, {
      name: 'refunds',
      priority: 1,
      conditions: { keywords: ['refund'] },
      actions: { route_to: { target: 'sage' } },
    });
    const message = 'where is my invoice from march';

    const first = await decider.decide(caller, request(message), false);
    expect(first).toMatchObject({
      decidedBy: 'policy',
      target: { type: 'model', ref: 'swift' },
      confidence: 1,
      policy: { name: 'to swift' },
    });
    expect(first.rationale).toBe(
      "Policy 'to swift' (priority 10) matched (keyword 'invoice') and routes to model 'swift'.",
    );
    expect(first.intent.route).toEqual({ type: 'model', ref: 'swift', name: 'swift' });

    await policies.update(caller.accountId, later.id, { priority: 5 });
    const raised = await decider.decide(caller, request(message), false);
    expect(raised).toMatchObject({ target: { ref: 'sage' }, policy: { name: 'to sage' } });

    await policies.update(caller.accountId, later.id, { enabled: false });
    const disabled = await decider.decide(caller, request(message), false);
    expect(disabled.policy?.name).toBe('to swift');
  });

  it('holds a policy on intent categories only for messages of those intents', async () => {
    const caller = await newCaller();
    await policies.create(caller.accountId, {
      name: 'greetings to sage',
      conditions: { intent_categories: ['GREETING'] },
      actions: { route_to: { target: 'sage' } },
    });

    const greeting = await decider.decide(
      caller,
      request('good morning, hope you are having a great day'),
      false,
    );
    expect(greeting.intent.category).toBe('GREETING');
    expect(greeting).toMatchObject({ decidedBy: 'policy', target: { ref: 'sage' } });
    expect(greeting.rationale).toContain('matched (intent GREETING)');

    const code = await decider.decide(
      caller,
      request('write a python script that removes duplicate lines from a file'),
      false,
    );
    expect(code.intent.category).toBe('CODE');
    expect(code.decidedBy).toBe('model');
    expect(code.policy).toBeNull();
  });

  it("weighs the message's complexity in the balanced strategy, and one fact in the others", async () => {
    const caller = await newCaller();
    const simple = await decider.decide(caller, request('hi there'), false);
    expect(simple.intent.metadata.complexity).toBe('simple');
    expect(simple).toMatchObject({ decidedBy: 'model', strategy: 'balanced' });
    expect(simple.target.ref).toBe('swift');
    expect(simple.rationale).toContain('chosen by strategy balanced (complexity simple;');

    const complex = await decider.decide(caller, request(complexMessage), false);
    expect(complex.intent.metadata.complexity).toBe('complex');
    expect(complex.target.ref).toBe('sage');
    expect(complex.rationale).toContain('chosen by strategy balanced (complexity complex;');

    const byStrategy = async (strategy: RouteRequest['strategy']) =>
      (await decider.decide(caller, request('hi there', { strategy }), false)).target.ref;
    expect(await byStrategy('quality')).toBe('sage');
    expect(await byStrategy('cost')).toBe('swift');
    expect(await byStrategy('latency')).toBe('swift');

    // The unavailable model is neither chosen nor offered while another is available.
    for (const decision of [simple, complex]) {
      expect(decision.notices).toEqual([]);
      expect(decision.alternatives.map((entry) => entry.target.ref)).not.toContain('dormant');
    }
  });

  it('skips a preferred model that is unavailable or not in the catalog, with a notice', async () => {
    const caller = await newCaller();
    const skipped = await decider.decide(
      caller,
      request('hi there', { preferredModels: ['dormant', 'nowhere'] }),
      false,
    );
    expect(skipped.target.ref).toBe('swift');
    expect(skipped.notices).toEqual([
      "Preferred model 'dormant' is not an allowed, available chat model of the catalog; it was skipped.",
      "Preferred model 'nowhere' is not an allowed, available chat model of the catalog; it was skipped.",
    ]);

    const preferred = await decider.decide(
      caller,
      request('hi there', { preferredModels: ['nowhere', 'sage'] }),
      false,
    );
    expect(preferred.target.ref).toBe('sage');
    expect(preferred.rationale).toContain('chosen by the request’s preferred_models');
  });

  it('routes by policy to an unavailable model (its call falls back), and past one no longer in the catalog', async () => {
    const caller = await newCaller();
    await policies.create(caller.accountId, {
      name: 'asleep',
      conditions: { keywords: ['archive'] },
      actions: { route_to: { target: 'dormant' } },
    });
    const asleep = await decider.decide(caller, request('open the archive'), false);
    expect(asleep).toMatchObject({ decidedBy: 'policy', target: { ref: 'dormant' } });

    await policies.create(caller.accountId, {
      name: 'to sage, capped',
      conditions: { keywords: ['report'] },
      actions: { route_to: { target: 'sage' }, max_tokens: 64 },
    });
    // The operator removed sage from the catalog: the same database, another configuration.
    const config: AppConfig = {
      ...unit.config,
      models: {
        ...unit.config.models,
        definitions: unit.config.models.definitions.filter((model) => model.name !== 'sage'),
      },
    };
    const shrunk = await unitModelRegistry(config, unit.logger);
    try {
      const without = new RouteDecider(
        new RoutingContext(dependencies(unit, config, shrunk.models, unit.logger)),
      );
      const gone = await without.decide(caller, request('write the report'), false);
      expect(gone).toMatchObject({ decidedBy: 'model', target: { ref: 'swift' }, policy: null });
      // The policy still matched: its other actions apply.
      expect(gone.maxTokens).toBe(64);
      expect(gone.rationale).toContain(
        "Also applied: policy 'to sage, capped' caps max_tokens at 64.",
      );
    } finally {
      await shrunk.close();
    }
  });

  it('ignores availability when only unavailable models are allowed, and refuses when none is', async () => {
    const caller = await newCaller();
    await policies.create(caller.accountId, {
      name: 'off the usual models',
      conditions: { keywords: ['secret'] },
      actions: { forbid_models: ['swift', 'sage'] },
    });
    const secret = await decider.decide(caller, request('tell me the secret'), false);
    expect(secret).toMatchObject({ decidedBy: 'model', target: { ref: 'dormant' } });
    expect(secret.notices).toEqual([
      'No allowed chat model is available right now; the choice ignores availability.',
    ]);
    expect(secret.rationale).toContain(
      "Also applied: policy 'off the usual models' forbids swift, sage.",
    );

    await policies.create(caller.accountId, {
      name: 'nothing at all',
      conditions: { keywords: ['classified'] },
      actions: { forbid_models: ['swift', 'sage', 'dormant'] },
    });
    await expect(
      decider.decide(caller, request('a classified matter'), false),
    ).rejects.toMatchObject({
      code: 'model_unavailable',
      message: 'Every chat model of the catalog is forbidden by a routing policy for this message.',
    });
  });

  it('sends an intent to an agent with its capability, a follow-up after it, and models-only to a model', async () => {
    const caller = await newCaller();
    const created = new Date(context.now()).toISOString();
    const agent: Agent = {
      id: newId('agent'),
      accountId: caller.accountId,
      name: 'meeting summarizer',
      description: 'Summaries of meeting transcripts',
      agentType: summarizationAgent.id,
      modelId: null,
      isPublic: false,
      exposeAsTool: false,
      configuration: {},
      createdAt: created,
      updatedAt: created,
    };
    await new AgentsRepository(unit.storage.db).insert(agent);
    const summary = 'give me a short summary of the meeting transcript below';

    const capable = await decider.decide(caller, request(summary), false);
    expect(capable.intent.category).toBe('SUMMARIZATION');
    expect(capable).toMatchObject({
      decidedBy: 'capability',
      target: { type: 'agent', ref: agent.id, name: 'meeting summarizer' },
    });
    expect(capable.rationale).toContain('nothing has been taught yet');

    const followUp = await decider.decide(
      caller,
      request('make it shorter', { history: [{ role: 'user', content: summary }] }),
      false,
    );
    expect(followUp).toMatchObject({ decidedBy: 'follow_up', target: { ref: agent.id } });
    expect(followUp.rationale).toContain('the previous user message routes there by capability');

    const modelsOnly = await decider.decide(caller, request(summary), true);
    expect(modelsOnly.decidedBy).toBe('model');
    expect(modelsOnly.target.type).toBe('model');
    expect(modelsOnly.alternatives.every((entry) => entry.target.type === 'model')).toBe(true);
  });
});
