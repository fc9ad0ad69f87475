// Routing policies: declarative per-account rules evaluated in priority order before the learned
// router. Conditions (all that are given must hold): intent category, keywords, a regular
// expression (RE2 syntax, linear-time), the key's tier or scopes. Actions: route to a target,
// forbid models or providers, require a provider, cap max_tokens.
import { RE2JS } from 're2js';
import type { Scope } from '../../auth/scopes.js';
import type { ModelDefinition } from '../../config/config.js';
import { InvalidParameterError } from '../../errors/app-error.js';
import { normalizeText, wordsOf } from './text-features.js';
import type { IntentCategory } from './taxonomy.js';
import type { RouteTarget, RouteType } from './types.js';

export interface PolicyConditions {
  intent_categories?: IntentCategory[];
  keywords?: string[];
  pattern?: string;
  tiers?: string[];
  scopes?: Scope[];
}

export interface PolicyRouteAction {
  type: RouteType;
  /** The agent or pipeline id, or the model name (resolved from a name when the policy is saved). */
  target: string;
}

export interface PolicyActions {
  route_to?: PolicyRouteAction;
  forbid_models?: string[];
  forbid_providers?: string[];
  require_provider?: string;
  max_tokens?: number;
}

export interface RoutingPolicy {
  id: string;
  accountId: string;
  name: string;
  description: string;
  /** Lower numbers are evaluated first. */
  priority: number;
  enabled: boolean;
  conditions: PolicyConditions;
  actions: PolicyActions;
  createdAt: string;
  updatedAt: string;
}

/** Patterns are matched against the start of a message, which bounds their cost. */
export const patternScanLimit = 2000;

export function compilePattern(pattern: string, param: string): RE2JS {
  try {
    return RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'invalid';
    throw new InvalidParameterError(
      param,
      `'${param}' is not a valid regular expression (RE2 syntax: no back-references or look-arounds): ${reason}`,
    );
  }
}

/** Who is asking and about what: what policy conditions look at. */
export interface PolicySubject {
  readonly message: string;
  /** Computed on demand: only policies with category conditions need the classifier. */
  readonly category: () => IntentCategory;
  readonly tier: string;
  readonly scopes: readonly Scope[];
}

/** A model-level restriction and the policy that imposed it. */
export interface Restriction<T> {
  readonly value: T;
  readonly policy: RoutingPolicy;
}

export interface PolicyOutcome {
  /** Enabled policies whose conditions held, in priority order. */
  readonly matched: readonly RoutingPolicy[];
  /** The first matched policy with a route_to action, and its target. */
  readonly route: Restriction<RouteTarget> | null;
  readonly forbiddenModels: ReadonlyMap<string, RoutingPolicy>;
  /** Lower-cased provider names (a model's maker or connection). */
  readonly forbiddenProviders: ReadonlyMap<string, RoutingPolicy>;
  readonly requiredProvider: Restriction<string> | null;
  readonly maxTokens: Restriction<number> | null;
}

export const emptyOutcome: PolicyOutcome = {
  matched: [],
  route: null,
  forbiddenModels: new Map(),
  forbiddenProviders: new Map(),
  requiredProvider: null,
  maxTokens: null,
};

/** A policy with its pattern compiled and keywords tokenised once (policies are cached). */
export class CompiledPolicy {
  private readonly pattern: RE2JS | null;
  private readonly keywords: string[][];
  /** Rough bytes held (the policy's JSON twice over, for strings and the compiled pattern). */
  readonly approximateBytes: number;

  constructor(readonly policy: RoutingPolicy) {
    this.approximateBytes = 256 + 2 * JSON.stringify(policy).length;
    this.pattern =
      policy.conditions.pattern === undefined
        ? null
        : compilePattern(policy.conditions.pattern, 'conditions.pattern');
    this.keywords = (policy.conditions.keywords ?? []).map((keyword) => wordsOf(keyword));
  }

  /** Which conditions held; null when one did not. */
  matches(subject: PolicySubject, words: () => string[]): string[] | null {
    const { conditions } = this.policy;
    const reasons: string[] = [];
    if (conditions.tiers !== undefined) {
      if (!conditions.tiers.includes(subject.tier)) return null;
      reasons.push(`tier ${subject.tier}`);
    }
    if (conditions.scopes !== undefined) {
      const held = conditions.scopes.filter(
        (scope) => subject.scopes.includes('admin') || subject.scopes.includes(scope),
      );
      if (held.length === 0) return null;
      reasons.push(`scope ${held[0]!}`);
    }
    if (this.keywords.length > 0) {
      const messageWords = words();
      const found = this.keywords.findIndex(
        (keyword) => keyword.length > 0 && containsSequence(messageWords, keyword),
      );
      if (found < 0) return null;
      reasons.push(`keyword '${conditions.keywords![found]!}'`);
    }
    if (this.pattern !== null) {
      const sample = normalizeText(subject.message.slice(0, patternScanLimit));
      if (!this.pattern.matcher(sample).find()) return null;
      reasons.push(`pattern /${conditions.pattern!}/`);
    }
    if (conditions.intent_categories !== undefined) {
      const category = subject.category();
      if (!conditions.intent_categories.includes(category)) return null;
      reasons.push(`intent ${category}`);
    }
    return reasons;
  }
}

function containsSequence(words: readonly string[], sequence: readonly string[]): boolean {
  outer: for (let start = 0; start + sequence.length <= words.length; start += 1) {
    for (let offset = 0; offset < sequence.length; offset += 1) {
      if (words[start + offset] !== sequence[offset]) continue outer;
    }
    return true;
  }
  return false;
}

export interface EvaluatedPolicies extends PolicyOutcome {
  /** Why each matched policy matched, by policy id. */
  readonly reasons: ReadonlyMap<string, string[]>;
}

/**
 * Evaluates enabled policies in priority order (then creation order). `resolveRoute` turns a
 * route_to action into a current target, or null when it no longer exists (that policy's routing
 * is then skipped, its other actions still apply).
 */
export function evaluatePolicies(
  policies: readonly CompiledPolicy[],
  subject: PolicySubject,
  resolveRoute: (action: PolicyRouteAction) => RouteTarget | null,
): EvaluatedPolicies {
  let words: string[] | undefined;
  const lazyWords = () => (words ??= wordsOf(subject.message));
  const matched: RoutingPolicy[] = [];
  const reasons = new Map<string, string[]>();
  let route: Restriction<RouteTarget> | null = null;
  const forbiddenModels = new Map<string, RoutingPolicy>();
  const forbiddenProviders = new Map<string, RoutingPolicy>();
  let requiredProvider: Restriction<string> | null = null;
  let maxTokens: Restriction<number> | null = null;
  for (const compiled of policies) {
    const { policy } = compiled;
    if (!policy.enabled) continue;
    const held = compiled.matches(subject, lazyWords);
    if (held === null) continue;
    matched.push(policy);
    reasons.set(policy.id, held);
    const { actions } = policy;
    if (route === null && actions.route_to !== undefined) {
      const target = resolveRoute(actions.route_to);
      if (target !== null) route = { value: target, policy };
    }
    for (const model of actions.forbid_models ?? []) {
      if (!forbiddenModels.has(model)) forbiddenModels.set(model, policy);
    }
    for (const provider of actions.forbid_providers ?? []) {
      const key = provider.toLowerCase();
      if (!forbiddenProviders.has(key)) forbiddenProviders.set(key, policy);
    }
    if (requiredProvider === null && actions.require_provider !== undefined) {
      requiredProvider = { value: actions.require_provider.toLowerCase(), policy };
    }
    if (
      actions.max_tokens !== undefined &&
      (maxTokens === null || actions.max_tokens < maxTokens.value)
    ) {
      maxTokens = { value: actions.max_tokens, policy };
    }
  }
  return {
    matched,
    reasons,
    route,
    forbiddenModels,
    forbiddenProviders,
    requiredProvider,
    maxTokens,
  };
}

/** Whether a model's maker or connection is `provider` (compared without case). */
export function modelHasProvider(definition: ModelDefinition, provider: string): boolean {
  const wanted = provider.toLowerCase();
  return definition.maker.toLowerCase() === wanted || definition.provider === wanted;
}

/** Why the outcome forbids `definition`, or null when it is allowed. */
export function modelRestriction(
  outcome: PolicyOutcome,
  definition: ModelDefinition,
): { policy: RoutingPolicy; reason: string } | null {
  const byModel = outcome.forbiddenModels.get(definition.name);
  if (byModel !== undefined) {
    return {
      policy: byModel,
      reason: `policy '${byModel.name}' forbids model '${definition.name}'`,
    };
  }
  for (const [provider, policy] of outcome.forbiddenProviders) {
    if (modelHasProvider(definition, provider)) {
      return {
        policy,
        reason: `policy '${policy.name}' forbids provider '${provider}' (model '${definition.name}' is ${definition.maker} via ${definition.provider})`,
      };
    }
  }
  const required = outcome.requiredProvider;
  if (required !== null && !modelHasProvider(definition, required.value)) {
    return {
      policy: required.policy,
      reason: `policy '${required.policy.name}' requires provider '${required.value}' (model '${definition.name}' is ${definition.maker} via ${definition.provider})`,
    };
  }
  return null;
}
