// Policy evaluation: every condition kind, priority order, and model restrictions.
import { describe, expect, it } from 'vitest';
import type { ModelDefinition } from '../../config/config.js';
import {
  CompiledPolicy,
  evaluatePolicies,
  modelRestriction,
  type RoutingPolicy,
} from './policies.js';

function policy(overrides: Partial<RoutingPolicy>): CompiledPolicy {
  return new CompiledPolicy({
    id: overrides.name ?? 'p',
    accountId: 'acct',
    name: 'p',
    description: '',
    priority: 100,
    enabled: true,
    conditions: {},
    actions: {},
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    ...overrides,
  });
}

const subject = (
  message: string,
  tier = 'free',
  scopes: ('chat:write' | 'agents:write' | 'admin')[] = ['chat:write'],
) => ({
  message,
  category: () => 'CODE' as const,
  tier,
  scopes,
});

const model = (name: string, maker: string, provider: 'openai' | 'local'): ModelDefinition =>
  ({ name, maker, provider, type: 'chat' }) as unknown as ModelDefinition;

describe('evaluatePolicies', () => {
  const route = (target: string) => ({ type: 'model' as const, ref: target, name: target });

  it('takes the first routing policy in the given (priority) order', () => {
    const outcome = evaluatePolicies(
      [
        policy({ name: 'first', actions: { route_to: { type: 'model', target: 'a' } } }),
        policy({ name: 'second', actions: { route_to: { type: 'model', target: 'b' } } }),
      ],
      subject('anything'),
      (action) => route(action.target),
    );
    expect(outcome.route?.value.ref).toBe('a');
    expect(outcome.matched.map((entry) => entry.name)).toEqual(['first', 'second']);
  });

  it('checks keywords as whole words, patterns, tiers, scopes and categories', () => {
    const match = (
      compiled: CompiledPolicy,
      message: string,
      tier?: string,
      scopes?: ('chat:write' | 'agents:write' | 'admin')[],
    ) =>
      evaluatePolicies([compiled], subject(message, tier, scopes), () => null).matched.length === 1;
    const keyword = policy({
      conditions: { keywords: ['refund', 'money back'] },
      actions: { max_tokens: 1 },
    });
    expect(match(keyword, 'I want a REFUND now')).toBe(true);
    expect(match(keyword, 'I want my money back')).toBe(true);
    expect(match(keyword, 'refunds are great')).toBe(false);
    const pattern = policy({
      conditions: { pattern: 'order\\s+#?\\d{4,}' },
      actions: { max_tokens: 1 },
    });
    expect(match(pattern, 'Where is ORDER #12345?')).toBe(true);
    expect(match(pattern, 'where is order 12')).toBe(false);
    const tier = policy({ conditions: { tiers: ['pro'] }, actions: { max_tokens: 1 } });
    expect(match(tier, 'x', 'pro')).toBe(true);
    expect(match(tier, 'x', 'free')).toBe(false);
    const scopes = policy({ conditions: { scopes: ['agents:write'] }, actions: { max_tokens: 1 } });
    expect(match(scopes, 'x', 'free', ['chat:write'])).toBe(false);
    expect(match(scopes, 'x', 'free', ['admin'])).toBe(true);
    const category = policy({
      conditions: { intent_categories: ['CODE'] },
      actions: { max_tokens: 1 },
    });
    expect(match(category, 'x')).toBe(true);
    const disabled = policy({ enabled: false, actions: { max_tokens: 1 } });
    expect(match(disabled, 'x')).toBe(false);
  });

  it('collects forbidden models and providers, the first required provider and the lowest cap', () => {
    const outcome = evaluatePolicies(
      [
        policy({ name: 'a', actions: { forbid_models: ['m1'], max_tokens: 500 } }),
        policy({
          name: 'b',
          actions: { forbid_providers: ['Google'], require_provider: 'openai', max_tokens: 200 },
        }),
        policy({ name: 'c', actions: { require_provider: 'local', max_tokens: 300 } }),
      ],
      subject('x'),
      () => null,
    );
    expect(outcome.maxTokens?.value).toBe(200);
    expect(outcome.requiredProvider?.value).toBe('openai');
    expect(modelRestriction(outcome, model('m1', 'OpenAI', 'openai'))?.policy.name).toBe('a');
    expect(modelRestriction(outcome, model('g', 'Google', 'openai'))?.policy.name).toBe('b');
    expect(modelRestriction(outcome, model('q', 'Alibaba', 'local'))?.reason).toContain(
      "requires provider 'openai'",
    );
    expect(modelRestriction(outcome, model('m2', 'OpenAI', 'openai'))).toBeNull();
  });
});
