// The decider: where a message should go. Stages in order, the first that applies decides: a
// policy that routes, a follow-up going where the previous turn went, what the account taught,
// the intent and the agent types' capabilities (cold start), and last a chat model by preference
// or strategy. Every decision names the signal that decided and the alternatives.
import { AppError } from '../../errors/app-error.js';
import { modelTarget, targetOfKey } from './candidates.js';
import {
  alternativesOf,
  capableTargets,
  chooseModels,
  deliberate,
  learnedRoutes,
  modelOrder,
  round,
  type Deliberation,
  type LearnedRoutes,
  type ModelChoices,
  type RouteAlternative,
} from './deliberation.js';
import { looksLikeFollowUp, previousTarget } from './follow-up.js';
import type { RankedModel, RoutingStrategy } from './model-selection.js';
import type { EvaluatedPolicies, RoutingPolicy } from './policies.js';
import type { RoutingContext } from './routing-context.js';
import { taxonomy } from './taxonomy.js';
import {
  routeKey,
  type Intent,
  type RouteRequest,
  type RouteTarget,
  type RoutingCaller,
} from './types.js';

export type DecidedBy = 'policy' | 'follow_up' | 'learned' | 'capability' | 'model';

export interface RouteDecision {
  readonly target: RouteTarget;
  readonly confidence: number;
  readonly intent: Intent;
  readonly rationale: string;
  readonly decidedBy: DecidedBy;
  readonly policy: RoutingPolicy | null;
  readonly alternatives: RouteAlternative[];
  /** A policy's cap on max_tokens, when one applies. */
  readonly maxTokens: number | null;
  readonly strategy: RoutingStrategy;
  /** `lexical`, or `lexical+embedding:<model>` when an embedding model took part. */
  readonly method: string;
  readonly notices: string[];
}

/** What a stage decided, before the alternatives and restrictions are added. */
interface Verdict {
  readonly target: RouteTarget;
  readonly confidence: number;
  readonly decidedBy: DecidedBy;
  readonly rationale: string;
  readonly policy: RoutingPolicy | null;
}

/** Alternatives a decision lists, and taught routes that count as alternatives. */
const alternativesLimit = 5;

function describeTarget(target: RouteTarget): string {
  return `${target.type} '${target.name}'`;
}

/** What the matched policies other than the deciding one did ('' when nothing). */
function describeRestrictions(
  outcome: EvaluatedPolicies,
  decidingPolicy: RoutingPolicy | null,
): string {
  const parts: string[] = [];
  for (const policy of outcome.matched) {
    if (policy === decidingPolicy) continue;
    const actions: string[] = [];
    if (policy.actions.forbid_models !== undefined)
      actions.push(`forbids ${policy.actions.forbid_models.join(', ')}`);
    if (policy.actions.forbid_providers !== undefined)
      actions.push(`forbids provider ${policy.actions.forbid_providers.join(', ')}`);
    if (policy.actions.require_provider !== undefined)
      actions.push(`requires provider ${policy.actions.require_provider}`);
    if (policy.actions.max_tokens !== undefined)
      actions.push(`caps max_tokens at ${policy.actions.max_tokens}`);
    if (actions.length > 0) parts.push(`policy '${policy.name}' ${actions.join(' and ')}`);
  }
  return parts.length === 0 ? '' : `Also applied: ${parts.join('; ')}.`;
}

function decisionOf(
  deliberation: Deliberation,
  verdict: Verdict,
  alternatives: readonly RouteAlternative[],
  method: string,
): RouteDecision {
  const { target } = verdict;
  const others = alternatives
    .filter((entry) => routeKey(entry.target) !== routeKey(target))
    .sort((a, b) => b.confidence - a.confidence)
    .slice(0, alternativesLimit);
  const restrictions = describeRestrictions(deliberation.outcome, verdict.policy);
  return {
    target,
    confidence: round(verdict.confidence),
    intent: { ...deliberation.draft, route: target },
    rationale: restrictions === '' ? verdict.rationale : `${verdict.rationale} ${restrictions}`,
    decidedBy: verdict.decidedBy,
    policy: verdict.policy,
    alternatives: others,
    maxTokens: deliberation.outcome.maxTokens?.value ?? null,
    strategy: deliberation.strategy,
    method,
    notices: deliberation.notices,
  };
}

/** 1. The first matched policy that routes, to a target it allows. */
function byPolicy(deliberation: Deliberation): Verdict | null {
  const { route, reasons } = deliberation.outcome;
  if (route === null || !deliberation.allowed(route.value)) return null;
  const { policy, value } = route;
  const why = reasons.get(policy.id) ?? [];
  const matched = why.length > 0 ? ` matched (${why.join(', ')})` : ' applies to every message';
  return {
    target: value,
    confidence: 1,
    decidedBy: 'policy',
    rationale: `Policy '${policy.name}' (priority ${policy.priority})${matched} and routes to ${describeTarget(value)}.`,
    policy,
  };
}

/** 3. The best taught route, when it scores at least the threshold. */
function byLearned(learned: LearnedRoutes): Verdict | null {
  const [best, runnerUp] = learned.entries;
  if (best === undefined || best.score.score < learned.threshold) return null;
  const next =
    runnerUp === undefined
      ? ''
      : `; next ${round(runnerUp.score.score)} for ${describeTarget(runnerUp.target)}`;
  const examples = `${best.score.examples} example${best.score.examples === 1 ? '' : 's'}`;
  return {
    target: best.target,
    confidence: learned.confidence(0),
    decidedBy: 'learned',
    rationale: `Taught examples decided: ${describeTarget(best.target)} scores ${round(best.score.score)} (threshold ${learned.threshold}${next}) over its ${examples}; the closest is "${best.score.nearestText ?? ''}" (similarity ${round(best.score.nearest)}).`,
    policy: null,
  };
}

/** Why the taught examples did not decide. */
function declinedBecause(deliberation: Deliberation, learned: LearnedRoutes): string {
  const best = learned.entries[0];
  if (best !== undefined) {
    return `nothing taught resembles it (best score ${round(best.score.score)} < ${learned.threshold})`;
  }
  return deliberation.router.index.size === 0
    ? 'nothing has been taught yet'
    : 'no taught route is allowed here';
}

/** 4. An agent or pipeline whose capabilities serve a confidently classified intent. */
function byCapability(
  deliberation: Deliberation,
  capable: readonly RouteTarget[],
  declined: string,
): Verdict | null {
  const { classification } = deliberation;
  const capability = capable[0];
  if (capability === undefined || classification.confidence < 0.4) return null;
  const capabilities = taxonomy[classification.category].capabilities;
  return {
    target: capability,
    confidence: classification.confidence * 0.8,
    decidedBy: 'capability',
    rationale: `Intent ${classification.category} (confidence ${classification.confidence}) calls for ${capabilities.join(' or ')}, which ${describeTarget(capability)} offers; ${declined}.`,
    policy: null,
  };
}

/** 5. A chat model, preferred or by strategy; 503 when the policies leave none. */
function byModel(
  deliberation: Deliberation,
  choices: ModelChoices,
  models: readonly RankedModel[],
  learned: LearnedRoutes,
  declined: string,
): Verdict {
  const { classification, strategy } = deliberation;
  const choice = models[0];
  if (choice === undefined) {
    throw new AppError(
      'model_unavailable',
      deliberation.chatModels.length === 0
        ? "No chat model is configured. Add one under 'models' in the config file (PLATFORM_CONFIG)."
        : 'Every chat model of the catalog is forbidden by a routing policy for this message.',
    );
  }
  const modelBased = taxonomy[classification.category].capabilities.length === 0;
  const confidence =
    learned.entries[0] !== undefined || !modelBased ? 0.2 : 0.5 * classification.confidence;
  const chosenBy = choices.preferred.includes(choice.definition)
    ? 'the request’s preferred_models'
    : `strategy ${strategy} (complexity ${deliberation.draft.metadata.complexity}; ${choice.facts})`;
  return {
    target: modelTarget(choice.definition),
    confidence,
    decidedBy: 'model',
    rationale: `No policy or agent applies and ${declined}: the message goes to model '${choice.definition.name}', chosen by ${chosenBy}; intent ${classification.category} (${classification.confidence}).`,
    policy: null,
  };
}

export class RouteDecider {
  constructor(private readonly context: RoutingContext) {}

  /** Where the message should go; with `modelsOnly`, among the chat models alone. */
  async decide(
    caller: RoutingCaller,
    request: RouteRequest,
    modelsOnly: boolean,
  ): Promise<RouteDecision> {
    const deliberation = await deliberate(this.context, caller, request, modelsOnly);
    const choices = chooseModels(this.context, deliberation);
    const learned = await learnedRoutes(this.context, deliberation);
    const capable = capableTargets(deliberation);
    const models = modelOrder(choices);
    const alternatives = alternativesOf(deliberation, learned, capable, models, alternativesLimit);
    const declined = declinedBecause(deliberation, learned);
    const verdict =
      byPolicy(deliberation) ??
      (await this.byFollowUp(deliberation)) ??
      byLearned(learned) ??
      byCapability(deliberation, capable, declined) ??
      byModel(deliberation, choices, models, learned, declined);
    return decisionOf(deliberation, verdict, alternatives, learned.method);
  }

  /** 2. A follow-up goes where the previous turn went, while that target exists and is allowed. */
  private async byFollowUp(deliberation: Deliberation): Promise<Verdict | null> {
    const { request, candidates, chatModels } = deliberation;
    if (!looksLikeFollowUp(request.message)) return null;
    const previous = await previousTarget(this.context, deliberation, (caller, earlier) =>
      this.decide(caller, earlier, false),
    );
    if (previous === null) return null;
    const exists = targetOfKey(routeKey(previous.target), candidates, chatModels) !== null;
    if (!exists || !deliberation.allowed(previous.target)) return null;
    return {
      target: previous.target,
      confidence: 0.8,
      decidedBy: 'follow_up',
      rationale: `"${request.message.trim()}" reads as a follow-up, so it goes where the previous turn went (${previous.how}): ${describeTarget(previous.target)}.`,
      policy: null,
    };
  }
}
