// What a routing decision weighs, gathered before any stage decides: the message's classification
// and draft intent, the account's router and candidates, the policies that hold, the chat models
// allowed and ranked, what the account taught that resembles the message, and the alternatives.
import type { ModelDefinition } from '../../config/config.js';
import {
  capabilityMatches,
  modelTarget,
  policyTarget,
  targetAllowed,
  targetOfKey,
  type Candidates,
} from './candidates.js';
import type { Classification } from './intent-classifier.js';
import { draftIntent } from './intent-records.js';
import { rankModels, type RankedModel, type RoutingStrategy } from './model-selection.js';
import {
  emptyOutcome,
  evaluatePolicies,
  modelRestriction,
  type EvaluatedPolicies,
} from './policies.js';
import type { AccountRouter } from './router-cache.js';
import type { RouteScore } from './router-index.js';
import type { RoutingContext } from './routing-context.js';
import {
  routeKey,
  type Intent,
  type RouteRequest,
  type RouteTarget,
  type RoutingCaller,
} from './types.js';

export interface RouteAlternative {
  readonly target: RouteTarget;
  readonly confidence: number;
}

export interface Deliberation {
  readonly caller: RoutingCaller;
  readonly request: RouteRequest;
  /** Only models may be chosen (a chat request's `model: "auto"`). */
  readonly modelsOnly: boolean;
  readonly classification: Classification;
  /** The intent as it will be stored, its route still to be set. */
  readonly draft: Intent;
  readonly router: AccountRouter;
  readonly candidates: Candidates;
  readonly outcome: EvaluatedPolicies;
  readonly strategy: RoutingStrategy;
  readonly chatModels: readonly ModelDefinition[];
  /** Told to the caller with the decision, in the order they arose. */
  readonly notices: string[];
  /** Whether the policies (and `modelsOnly`) let the message go to a target. */
  readonly allowed: (target: RouteTarget) => boolean;
}

/** The chat models the message may go to: the request's preferred ones first, then by strategy. */
export interface ModelChoices {
  readonly preferred: readonly ModelDefinition[];
  readonly ranked: readonly RankedModel[];
}

/** Taught routes that the policies allow, best first, with how each was scored. */
export interface LearnedRoutes {
  readonly entries: readonly { readonly score: RouteScore; readonly target: RouteTarget }[];
  /** `lexical`, or `lexical+embedding:<model>` when an embedding model took part. */
  readonly method: string;
  readonly threshold: number;
  /** The confidence of the entry at `index`: its share of the top three, by its closeness. */
  confidence(index: number): number;
}

export function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

export async function deliberate(
  context: RoutingContext,
  caller: RoutingCaller,
  request: RouteRequest,
  modelsOnly: boolean,
): Promise<Deliberation> {
  const classification = context.dependencies.classifier.classify(request.message);
  const draft = draftIntent(context, {
    accountId: caller.accountId,
    message: request.message,
    conversationId: request.conversationId,
    classification,
    route: null,
  });
  const { router, candidates } = await context.account(caller.accountId);
  const chatModels = context.chatModels();
  const outcome: EvaluatedPolicies = context.features.policy_engine
    ? evaluatePolicies(
        router.policies,
        {
          message: request.message,
          category: () => classification.category,
          tier: caller.tier,
          scopes: caller.scopes,
        },
        (action) => policyTarget(action, candidates, chatModels),
      )
    : { ...emptyOutcome, reasons: new Map() };
  const allowed = (target: RouteTarget): boolean => {
    if (modelsOnly && target.type !== 'model') return false;
    return targetAllowed(target, candidates, outcome, context.dependencies.models);
  };
  return {
    caller,
    request,
    modelsOnly,
    classification,
    draft,
    router,
    candidates,
    outcome,
    strategy: request.strategy ?? 'balanced',
    chatModels,
    notices: [],
    allowed,
  };
}

/**
 * The allowed chat models, among the available ones while any is, ranked by strategy and the
 * message's complexity; a preferred model that is not among them is skipped with a notice.
 */
export function chooseModels(context: RoutingContext, deliberation: Deliberation): ModelChoices {
  const { outcome, notices, request } = deliberation;
  const needed = request.capabilities ?? [];
  const allowedModels = deliberation.chatModels.filter(
    (definition) =>
      modelRestriction(outcome, definition) === null &&
      needed.every((capability) => definition.capabilities.includes(capability)),
  );
  const availableAllowed = allowedModels.filter((definition) =>
    context.isAvailable(definition.name),
  );
  const pool = availableAllowed.length > 0 ? availableAllowed : allowedModels;
  if (availableAllowed.length === 0 && allowedModels.length > 0) {
    notices.push('No allowed chat model is available right now; the choice ignores availability.');
  }
  const ranked = rankModels(
    pool,
    deliberation.strategy,
    deliberation.draft.metadata.complexity,
    context.dependencies.models.defaultModel,
  );
  const preferred = request.preferredModels
    .map((name) => pool.find((definition) => definition.name === name))
    .filter((definition): definition is ModelDefinition => definition !== undefined);
  for (const name of request.preferredModels) {
    if (!pool.some((definition) => definition.name === name)) {
      notices.push(
        `Preferred model '${name}' is not an allowed, available chat model of the catalog; it was skipped.`,
      );
    }
  }
  return { preferred, ranked };
}

/** Preferred models first, then the others by rank. */
export function modelOrder(choices: ModelChoices): RankedModel[] {
  return [
    ...choices.preferred.map((definition) => ({ definition, fit: 1, facts: 'preferred' })),
    ...choices.ranked.filter((entry) => !choices.preferred.includes(entry.definition)),
  ];
}

/** The message's embedding when the router holds embedded examples; a failure is a notice. */
async function queryEmbedding(
  context: RoutingContext,
  deliberation: Deliberation,
): Promise<{ model: string; vector: Float32Array } | null> {
  const { router, request } = deliberation;
  if (router.embeddingModel === null || router.index.size === 0) return null;
  try {
    const vector = await context.embed(
      router.embeddingModel,
      request.message,
      request.signal,
      deliberation.caller.accountId,
    );
    return { model: router.embeddingModel, vector };
  } catch (error) {
    deliberation.notices.push(
      `The embedding model '${router.embeddingModel}' failed (${error instanceof Error ? error.message : 'error'}); routing used the lexical model alone.`,
    );
    return null;
  }
}

export async function learnedRoutes(
  context: RoutingContext,
  deliberation: Deliberation,
): Promise<LearnedRoutes> {
  const { router, candidates, chatModels, allowed } = deliberation;
  const embedding = await queryEmbedding(context, deliberation);
  const entries = router.index
    .score(deliberation.request.message, embedding?.vector ?? null)
    .map((score) => ({ score, target: targetOfKey(score.route, candidates, chatModels) }))
    .filter(
      (entry): entry is { score: RouteScore; target: RouteTarget } =>
        entry.target !== null && allowed(entry.target),
    );
  const threshold = context.config.routing.minScore;
  return {
    entries,
    method: embedding === null ? 'lexical' : `lexical+embedding:${embedding.model}`,
    threshold,
    confidence(index) {
      const entry = entries[index]!;
      const top = entries.slice(0, 3).reduce((sum, item) => sum + item.score.score, 0);
      const relative = top === 0 ? 0 : entry.score.score / top;
      const absolute = Math.min(
        1,
        Math.max(0, (entry.score.nearest - threshold) / (1 - threshold) + 0.5),
      );
      return round(Math.min(0.99, relative * absolute));
    },
  };
}

/** Agents and pipelines that serve the intent (none when only models may be chosen). */
export function capableTargets(deliberation: Deliberation): RouteTarget[] {
  if (deliberation.modelsOnly) return [];
  return capabilityMatches(
    deliberation.classification.category,
    deliberation.request.message,
    deliberation.candidates,
    deliberation.allowed,
  );
}

/** Taught routes, then capable agents and pipelines, then the first three models; each once. */
export function alternativesOf(
  deliberation: Deliberation,
  learned: LearnedRoutes,
  capable: readonly RouteTarget[],
  models: readonly RankedModel[],
  limit: number,
): RouteAlternative[] {
  const alternatives: RouteAlternative[] = [];
  const add = (target: RouteTarget, confidence: number) => {
    if (!alternatives.some((entry) => routeKey(entry.target) === routeKey(target))) {
      alternatives.push({ target, confidence: round(confidence) });
    }
  };
  learned.entries.forEach((entry, index) => {
    if (index < limit) add(entry.target, learned.confidence(index));
  });
  capable.forEach((target) => add(target, deliberation.classification.confidence * 0.7));
  models.slice(0, 3).forEach((entry) => add(modelTarget(entry.definition), 0.3 * entry.fit));
  return alternatives;
}
