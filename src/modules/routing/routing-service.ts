// Routing: classifies intents, recommends where a message should go (policies, then the follow-up
// of the conversation, then what the account taught, then agent capabilities, then a model by
// strategy), learns online from route feedback, manages policies, and resolves `model: "auto"`
// and policy-forbidden models for chat.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { AgentCatalog } from '../../agents/agent-catalog.js';
import type { AgentService } from '../../agents/agent-service.js';
import type { Scope } from '../../auth/scopes.js';
import type { AppConfig, ModelDefinition } from '../../config/config.js';
import type { ConversationService } from '../../conversations/conversation-service.js';
import {
  AppError,
  FeatureDisabledError,
  ConflictError,
  InvalidParameterError,
  NotFoundError,
} from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { PipelineService } from '../../pipelines/pipeline-service.js';
import type { Agent } from '../../agents/agent.js';
import type { Pipeline } from '../../pipelines/pipeline.js';
import type { RoutingRepository } from './routing.repository.js';
import { assessComplexity } from './complexity.js';
import { detectEntities, type Entity } from './entities.js';
import type { Classification, IntentClassifier } from './intent-classifier.js';
import { rankModels, type RankedModel, type RoutingStrategy } from './model-selection.js';
import {
  CompiledPolicy,
  compilePattern,
  emptyOutcome,
  evaluatePolicies,
  modelHasProvider,
  modelRestriction,
  type EvaluatedPolicies,
  type PolicyActions,
  type PolicyConditions,
  type RoutingPolicy,
} from './policies.js';
import type { AccountRouter, RouterCache } from './router-cache.js';
import { normalizeText, wordsOf } from './text-features.js';
import { taxonomy, type IntentCategory } from './taxonomy.js';
import { routeKey, type Intent, type RouteTarget, type RouteType } from './types.js';

export interface RoutingCaller {
  readonly accountId: string;
  readonly tier: string;
  readonly scopes: readonly Scope[];
}

export interface HistoryTurn {
  readonly role: string;
  readonly content: string;
}

export interface RouteRequest {
  readonly message: string;
  readonly conversationId: string | null;
  readonly history: readonly HistoryTurn[];
  readonly preferredModels: readonly string[];
  readonly strategy: RoutingStrategy | null;
  readonly signal: AbortSignal;
}

export type DecidedBy = 'policy' | 'follow_up' | 'learned' | 'capability' | 'model';

export interface RouteAlternative {
  readonly target: RouteTarget;
  readonly confidence: number;
}

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

export interface PolicyInput {
  name?: string | undefined;
  description?: string | undefined;
  priority?: number | undefined;
  enabled?: boolean | undefined;
  conditions?: PolicyConditions | undefined;
  actions?:
    | (Omit<PolicyActions, 'route_to'> & {
        route_to?: { type?: RouteType | undefined; target: string } | undefined;
      })
    | undefined;
}

export interface ChatModelResolution {
  /** The model to use (undefined: the request named none and no policy changed that). */
  readonly model: string | undefined;
  readonly maxTokens: number | undefined;
  /** The routing decision when the request asked for `auto`. */
  readonly decision: RouteDecision | null;
}

interface AgentCandidate {
  readonly target: RouteTarget;
  readonly agentType: string;
  readonly capabilities: readonly string[];
  readonly words: ReadonlySet<string>;
  readonly model: string | null;
}

interface PipelineCandidate {
  readonly target: RouteTarget;
  readonly capabilities: readonly string[];
  readonly words: ReadonlySet<string>;
  /** The models of its stages' agents that are the account's (null: the default model). */
  readonly models: readonly (string | null)[];
}

interface Candidates {
  readonly agents: AgentCandidate[];
  readonly pipelines: PipelineCandidate[];
}

export const routingLimits = {
  maxPolicies: 200,
  /** Agents and pipelines considered as candidates, each. */
  maxCandidates: 1000,
  alternatives: 5,
};

const followUpOpening =
  /^(and|also|but|or|so|then|now|ok(ay)?|what about|how about|same|again|more|another|shorter|longer|simpler|why|in (english|french|german|spanish|italian|portuguese|dutch|chinese|japanese|korean|russian|arabic|hindi|polish|swedish|turkish)|translate it|do it|make it|as a (table|list|chart))\b/i;
const followUpReference = /\b(it|that|this|those|these|them|the same|one)\b/i;

/** A short message that leans on the previous turn ("and in French?", "make it shorter"). */
export function looksLikeFollowUp(message: string): boolean {
  const words = wordsOf(message, 20);
  if (words.length === 0 || words.length > 8) return false;
  const trimmed = message.trim();
  return followUpOpening.test(trimmed) || (words.length <= 5 && followUpReference.test(trimmed));
}

/** The stable key of a taught message: its normalised text's digest. */
export function messageKey(message: string): string {
  const normalised = normalizeText(message).replace(/\s+/g, ' ').trim();
  return createHash('sha256').update(normalised).digest('hex').slice(0, 40);
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function describeTarget(target: RouteTarget): string {
  return `${target.type} '${target.name}'`;
}

function unitVector(values: readonly number[]): Float32Array {
  const vector = Float32Array.from(values);
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  for (let index = 0; index < vector.length; index += 1) vector[index]! /= norm;
  return vector;
}

export interface RoutingServiceOptions {
  config: AppConfig;
  repository: RoutingRepository;
  cache: RouterCache;
  classifier: IntentClassifier;
  models: ModelRegistry;
  agents: AgentService;
  agentCatalog: AgentCatalog;
  pipelines: PipelineService;
  conversations: ConversationService;
  logger: Logger;
  now?: () => number;
  /**
   * Finds entities with the name tagger (people, places, organisations: compromise, tens of
   * milliseconds per few thousand characters) off the event loop; default: on it.
   */
  namedEntities?: (message: string, now: Date, signal?: AbortSignal) => Promise<Entity[]>;
}

export class RoutingService {
  private readonly now: () => number;

  constructor(private readonly options: RoutingServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Bytes the router cache holds in this process. */
  get cacheBytes(): number {
    return this.options.cache.bytes;
  }

  private get features() {
    return this.options.config.features;
  }

  /**
   * 404 unless `conversationId` is a conversation of the account (and of `userId` when given):
   * an intent or example never references another account's conversation.
   */
  async checkConversation(
    accountId: string,
    conversationId: string | null,
    userId: string | null,
  ): Promise<void> {
    if (conversationId === null) return;
    await this.options.conversations.get(accountId, conversationId, userId);
  }

  // ---- Intents ------------------------------------------------------------------------------

  /** Classifies and stores an intent (entities, complexity); a named chat model refines it. */
  async classifyIntent(
    caller: RoutingCaller,
    input: {
      message: string;
      conversationId: string | null;
      model: string | null;
      signal: AbortSignal;
    },
  ): Promise<Intent> {
    const requested = input.model ?? this.options.config.routing.intentModel;
    let classification: Classification;
    let notice: string | undefined;
    if (requested === null) {
      classification = this.options.classifier.classify(input.message);
    } else {
      const name = this.options.models.resolveChatModelName(requested);
      try {
        classification = await this.options.classifier.classifyWithModel(
          input.message,
          name,
          caller.accountId,
          input.signal,
        );
      } catch (error) {
        // A model the request named must answer; the configured default may fall back.
        if (input.model !== null || !(error instanceof AppError)) throw error;
        classification = this.options.classifier.classify(input.message);
        notice = `The configured intent model '${name}' could not classify (${error.message}); the shipped classifier did.`;
      }
    }
    notice ??= classification.notice;
    const now = new Date(this.now());
    const entities = await (this.options.namedEntities?.(input.message, now, input.signal) ??
      detectEntities(input.message, now, { names: true }));
    const intent = this.buildIntent(
      caller.accountId,
      input.message,
      input.conversationId,
      classification,
      { entities, now },
      null,
    );
    const stored: Intent =
      notice === undefined ? intent : { ...intent, metadata: { ...intent.metadata, notice } };
    await this.options.repository.insertIntent(stored);
    return stored;
  }

  async getIntent(accountId: string, id: string): Promise<Intent> {
    const intent = await this.options.repository.findIntent(accountId, id);
    if (intent === undefined) throw new NotFoundError('Intent', id);
    return intent;
  }

  private buildIntent(
    accountId: string,
    message: string,
    conversationId: string | null,
    classification: Classification,
    /** Entities already found (with names); otherwise found here, without the name tagger. */
    found: { entities: Entity[]; now: Date } | null,
    route: RouteTarget | null,
  ): Intent {
    const now = found?.now ?? new Date(this.now());
    const entities = found?.entities ?? detectEntities(message, now, { names: false });
    const complexity = assessComplexity(message, entities.length);
    return {
      id: newId('int'),
      accountId,
      conversationId,
      text: message,
      category: classification.category,
      confidence: classification.confidence,
      metadata: {
        detected_entities: entities.map((entity) => entity.text),
        entities,
        complexity: complexity.level,
        complexity_score: complexity.score,
        complexity_signals: complexity.signals,
        method: classification.method,
        alternatives: classification.alternatives,
      },
      route,
      createdAt: now.toISOString(),
    };
  }

  // ---- Routing ------------------------------------------------------------------------------

  async route(caller: RoutingCaller, request: RouteRequest): Promise<RouteDecision> {
    const decision = await this.decide(caller, request, false);
    await this.options.repository.insertIntent(decision.intent);
    return decision;
  }

  private async decide(
    caller: RoutingCaller,
    request: RouteRequest,
    modelsOnly: boolean,
  ): Promise<RouteDecision> {
    const { config } = this.options;
    const classification = this.options.classifier.classify(request.message);
    const draft = this.buildIntent(
      caller.accountId,
      request.message,
      request.conversationId,
      classification,
      null,
      null,
    );
    const state = await this.state(caller.accountId);
    const candidates = await this.candidates(state);
    const outcome: EvaluatedPolicies = this.features.policy_engine
      ? evaluatePolicies(
          state.policies,
          {
            message: request.message,
            category: () => classification.category,
            tier: caller.tier,
            scopes: caller.scopes,
          },
          (action) => this.resolvePolicyTarget(action, candidates),
        )
      : { ...emptyOutcome, reasons: new Map() };
    const strategy = request.strategy ?? 'balanced';
    const complexity = draft.metadata.complexity;
    const notices: string[] = [];

    const chatModels = this.chatModels();
    const allowedModels = chatModels.filter(
      (definition) => modelRestriction(outcome, definition) === null,
    );
    const availableAllowed = allowedModels.filter((definition) =>
      this.isAvailable(definition.name),
    );
    const modelPool = availableAllowed.length > 0 ? availableAllowed : allowedModels;
    if (availableAllowed.length === 0 && allowedModels.length > 0) {
      notices.push(
        'No allowed chat model is available right now; the choice ignores availability.',
      );
    }
    const ranked = rankModels(modelPool, strategy, complexity, this.options.models.defaultModel);
    const preferred = request.preferredModels
      .map((name) => modelPool.find((definition) => definition.name === name))
      .filter((definition): definition is ModelDefinition => definition !== undefined);
    for (const name of request.preferredModels) {
      if (!modelPool.some((definition) => definition.name === name)) {
        notices.push(
          `Preferred model '${name}' is not an allowed, available chat model of the catalog; it was skipped.`,
        );
      }
    }
    const modelTarget = (definition: ModelDefinition): RouteTarget => ({
      type: 'model',
      ref: definition.name,
      name: definition.name,
    });

    const allowed = (target: RouteTarget): boolean => {
      if (modelsOnly && target.type !== 'model') return false;
      return this.targetAllowed(target, candidates, outcome);
    };
    const exists = (target: RouteTarget): boolean => this.targetExists(target, candidates);

    let embeddingName: string | null = null;
    let queryEmbedding: Float32Array | null = null;
    if (state.embeddingModel !== null && state.index.size > 0) {
      try {
        queryEmbedding = await this.embed(state.embeddingModel, request.message, request.signal);
        embeddingName = state.embeddingModel;
      } catch (error) {
        notices.push(
          `The embedding model '${state.embeddingModel}' failed (${error instanceof Error ? error.message : 'error'}); routing used the lexical model alone.`,
        );
      }
    }
    const method = embeddingName === null ? 'lexical' : `lexical+embedding:${embeddingName}`;
    const learned = state.index
      .score(request.message, queryEmbedding)
      .map((score) => ({ score, target: this.targetOfKey(score.route, candidates, chatModels) }))
      .filter(
        (entry): entry is { score: typeof entry.score; target: RouteTarget } =>
          entry.target !== null && allowed(entry.target),
      );
    const threshold = config.routing.minScore;
    const learnedConfidence = (index: number): number => {
      const entry = learned[index]!;
      const top = learned.slice(0, 3).reduce((sum, item) => sum + item.score.score, 0);
      const relative = top === 0 ? 0 : entry.score.score / top;
      const absolute = Math.min(
        1,
        Math.max(0, (entry.score.nearest - threshold) / (1 - threshold) + 0.5),
      );
      return round(Math.min(0.99, relative * absolute));
    };

    const alternatives: RouteAlternative[] = [];
    const addAlternative = (target: RouteTarget, confidence: number) => {
      if (!alternatives.some((entry) => routeKey(entry.target) === routeKey(target))) {
        alternatives.push({ target, confidence: round(confidence) });
      }
    };
    learned.forEach((entry, index) => {
      if (index < routingLimits.alternatives)
        addAlternative(entry.target, learnedConfidence(index));
    });
    const capabilityMatches = modelsOnly
      ? []
      : this.capabilityMatches(classification.category, request.message, candidates, allowed);
    capabilityMatches.forEach((target) => addAlternative(target, classification.confidence * 0.7));
    const modelChoices: RankedModel[] = [
      ...preferred.map((definition) => ({ definition, fit: 1, facts: 'preferred' })),
      ...ranked.filter((entry) => !preferred.includes(entry.definition)),
    ];
    modelChoices
      .slice(0, 3)
      .forEach((entry) => addAlternative(modelTarget(entry.definition), 0.3 * entry.fit));

    const finish = (
      target: RouteTarget,
      confidence: number,
      decidedBy: DecidedBy,
      rationale: string,
      policy: RoutingPolicy | null = null,
    ): RouteDecision => {
      const intent: Intent = { ...draft, route: target };
      const others = alternatives
        .filter((entry) => routeKey(entry.target) !== routeKey(target))
        .sort((a, b) => b.confidence - a.confidence)
        .slice(0, routingLimits.alternatives);
      const restrictions = this.describeRestrictions(outcome, policy);
      return {
        target,
        confidence: round(confidence),
        intent,
        rationale: restrictions === '' ? rationale : `${rationale} ${restrictions}`,
        decidedBy,
        policy,
        alternatives: others,
        maxTokens: outcome.maxTokens?.value ?? null,
        strategy,
        method,
        notices,
      };
    };

    // 1. A policy that routes.
    if (outcome.route !== null && allowed(outcome.route.value)) {
      const { policy, value } = outcome.route;
      const why = outcome.reasons.get(policy.id) ?? [];
      return finish(
        value,
        1,
        'policy',
        `Policy '${policy.name}' (priority ${policy.priority})${why.length > 0 ? ` matched (${why.join(', ')})` : ' applies to every message'} and routes to ${describeTarget(value)}.`,
        policy,
      );
    }

    // 2. A follow-up goes where the previous turn went.
    if (looksLikeFollowUp(request.message)) {
      const previous = await this.previousTarget(caller, request, candidates, chatModels, allowed);
      if (previous !== null && exists(previous.target) && allowed(previous.target)) {
        return finish(
          previous.target,
          0.8,
          'follow_up',
          `"${request.message.trim()}" reads as a follow-up, so it goes where the previous turn went (${previous.how}): ${describeTarget(previous.target)}.`,
        );
      }
    }

    // 3. What the account taught.
    const best = learned[0];
    if (best !== undefined && best.score.score >= threshold) {
      const runnerUp = learned[1];
      return finish(
        best.target,
        learnedConfidence(0),
        'learned',
        `Taught examples decided: ${describeTarget(best.target)} scores ${round(best.score.score)} (threshold ${threshold}${runnerUp === undefined ? '' : `; next ${round(runnerUp.score.score)} for ${describeTarget(runnerUp.target)}`}) over its ${best.score.examples} example${best.score.examples === 1 ? '' : 's'}; the closest is "${best.score.nearestText ?? ''}" (similarity ${round(best.score.nearest)}).`,
      );
    }
    const declined =
      best === undefined
        ? state.index.size === 0
          ? 'nothing has been taught yet'
          : 'no taught route is allowed here'
        : `nothing taught resembles it (best score ${round(best.score.score)} < ${threshold})`;

    // 4. The intent and the agent types' capabilities (cold start).
    const capability = capabilityMatches[0];
    if (capability !== undefined && classification.confidence >= 0.4) {
      const capabilities = taxonomy[classification.category].capabilities;
      return finish(
        capability,
        classification.confidence * 0.8,
        'capability',
        `Intent ${classification.category} (confidence ${classification.confidence}) calls for ${capabilities.join(' or ')}, which ${describeTarget(capability)} offers; ${declined}.`,
      );
    }

    // 5. A model, by preference or strategy.
    const choice = modelChoices[0];
    if (choice === undefined) {
      throw new AppError(
        'model_unavailable',
        chatModels.length === 0
          ? "No chat model is configured. Add one under 'models' in the config file (PLATFORM_CONFIG)."
          : 'Every chat model of the catalog is forbidden by a routing policy for this message.',
      );
    }
    const modelBased = taxonomy[classification.category].capabilities.length === 0;
    const confidence = best !== undefined || !modelBased ? 0.2 : 0.5 * classification.confidence;
    const chosenBy = preferred.includes(choice.definition)
      ? 'the request’s preferred_models'
      : `strategy ${strategy} (complexity ${complexity}; ${choice.facts})`;
    return finish(
      modelTarget(choice.definition),
      confidence,
      'model',
      `No policy or agent applies and ${declined}: the message goes to model '${choice.definition.name}', chosen by ${chosenBy}; intent ${classification.category} (${classification.confidence}).`,
    );
  }

  private describeRestrictions(
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

  private async previousTarget(
    caller: RoutingCaller,
    request: RouteRequest,
    candidates: Candidates,
    chatModels: readonly ModelDefinition[],
    allowed: (target: RouteTarget) => boolean,
  ): Promise<{ target: RouteTarget; how: string } | null> {
    if (request.conversationId !== null) {
      const stored = await this.options.repository.lastRouteOf(
        caller.accountId,
        request.conversationId,
      );
      if (stored !== null) {
        const current = this.refresh(stored, candidates, chatModels);
        if (current !== null) return { target: current, how: 'recorded for this conversation' };
      }
    }
    const previousUser = [...request.history]
      .reverse()
      .find((turn) => turn.role === 'user' && turn.content.trim() !== '');
    if (previousUser === undefined) return null;
    const previous = await this.decide(
      caller,
      { ...request, message: previousUser.content, history: [], conversationId: null },
      false,
    );
    if (!allowed(previous.target)) return null;
    return {
      target: previous.target,
      how: `the previous user message routes there by ${previous.decidedBy.replace('_', '-')}`,
    };
  }

  /** The target with its current name, or null when it no longer exists. */
  private refresh(
    target: RouteTarget,
    candidates: Candidates,
    chatModels: readonly ModelDefinition[],
  ): RouteTarget | null {
    return this.targetOfKey(routeKey(target), candidates, chatModels);
  }

  private targetOfKey(
    key: string,
    candidates: Candidates,
    chatModels: readonly ModelDefinition[],
  ): RouteTarget | null {
    const separator = key.indexOf(':');
    const type = key.slice(0, separator);
    const ref = key.slice(separator + 1);
    if (type === 'agent')
      return candidates.agents.find((agent) => agent.target.ref === ref)?.target ?? null;
    if (type === 'pipeline') {
      return candidates.pipelines.find((pipeline) => pipeline.target.ref === ref)?.target ?? null;
    }
    const definition = chatModels.find((model) => model.name === ref);
    return definition === undefined ? null : { type: 'model', ref, name: ref };
  }

  private targetExists(target: RouteTarget, candidates: Candidates): boolean {
    return this.targetOfKey(routeKey(target), candidates, this.chatModels()) !== null;
  }

  /** Whether the policies let a message go to `target` (through the models it would use). */
  private targetAllowed(
    target: RouteTarget,
    candidates: Candidates,
    outcome: EvaluatedPolicies,
  ): boolean {
    const check = (name: string | null) => {
      const definition = this.options.models.find(name ?? this.options.models.defaultModel ?? '');
      return definition === undefined || modelRestriction(outcome, definition) === null;
    };
    switch (target.type) {
      case 'model':
        return check(target.ref);
      case 'agent': {
        const agent = candidates.agents.find((entry) => entry.target.ref === target.ref);
        return agent !== undefined && check(agent.model);
      }
      case 'pipeline': {
        const pipeline = candidates.pipelines.find((entry) => entry.target.ref === target.ref);
        return pipeline !== undefined && pipeline.models.every((model) => check(model));
      }
    }
  }

  /** Agents, then pipelines, whose capabilities serve `category`, best matching names first. */
  private capabilityMatches(
    category: IntentCategory,
    message: string,
    candidates: Candidates,
    allowed: (target: RouteTarget) => boolean,
  ): RouteTarget[] {
    const wanted = taxonomy[category].capabilities;
    if (wanted.length === 0) return [];
    const words = new Set(wordsOf(message));
    const overlap = (set: ReadonlySet<string>) => [...set].filter((word) => words.has(word)).length;
    const agents = candidates.agents
      .filter((agent) => agent.capabilities.some((capability) => wanted.includes(capability)))
      .map((agent) => ({ target: agent.target, rank: overlap(agent.words), kind: 0 }));
    const pipelines = candidates.pipelines
      .filter((pipeline) => pipeline.capabilities.some((capability) => wanted.includes(capability)))
      .map((pipeline) => ({ target: pipeline.target, rank: overlap(pipeline.words), kind: 1 }));
    return [...agents, ...pipelines]
      .filter((entry) => allowed(entry.target))
      .sort((a, b) => b.rank - a.rank || a.kind - b.kind)
      .map((entry) => entry.target);
  }

  // ---- Feedback -----------------------------------------------------------------------------

  async feedback(
    caller: RoutingCaller,
    input: {
      message: string;
      selectedRoute: string;
      routeType: RouteType | null;
      conversationId: string | null;
      signal: AbortSignal;
    },
  ): Promise<{ feedbackId: string; target: RouteTarget; examples: number; notice: string | null }> {
    const state = await this.state(caller.accountId);
    const candidates = await this.candidates(state);
    const target = this.resolveTarget(
      input.selectedRoute,
      input.routeType,
      candidates,
      'selected_route',
    );
    let embedding: Float32Array | null = null;
    let notice: string | null = null;
    if (state.embeddingModel !== null) {
      try {
        embedding = await this.embed(state.embeddingModel, input.message, input.signal);
      } catch (error) {
        notice = `The embedding model '${state.embeddingModel}' failed (${error instanceof Error ? error.message : 'error'}); the example was stored for the lexical model only.`;
      }
    }
    const id = newId('rfb');
    const result = await this.options.repository.addExample(
      caller.accountId,
      {
        id,
        message: input.message,
        messageKey: messageKey(input.message),
        route: target,
        conversationId: input.conversationId,
        embedding,
        embeddingModel: embedding === null ? null : state.embeddingModel,
        createdAt: new Date(this.now()).toISOString(),
      },
      this.options.config.routing.maxExamplesPerAccount,
    );
    if ('full' in result) {
      throw new ConflictError(
        `The router of this account holds ${result.full} taught examples, its limit (routing.max_examples_per_account). A message taught again replaces its earlier example.`,
      );
    }
    const examples = (state.index.routes().get(routeKey(target)) ?? 0) + 1;
    return { feedbackId: id, target, examples, notice };
  }

  /** An agent or pipeline of the account (by id or name) or a catalog chat model (by name). */
  private resolveTarget(
    reference: string,
    type: RouteType | null,
    candidates: Candidates,
    param: string,
  ): RouteTarget {
    const lowered = reference.toLowerCase();
    const found: RouteTarget[] = [];
    if (type === null || type === 'agent') {
      found.push(
        ...candidates.agents
          .filter(
            (agent) =>
              agent.target.ref === reference || agent.target.name.toLowerCase() === lowered,
          )
          .map((agent) => agent.target),
      );
    }
    if (type === null || type === 'pipeline') {
      found.push(
        ...candidates.pipelines
          .filter(
            (pipeline) =>
              pipeline.target.ref === reference || pipeline.target.name.toLowerCase() === lowered,
          )
          .map((pipeline) => pipeline.target),
      );
    }
    if (type === null || type === 'model') {
      const model = this.chatModels().find((definition) => definition.name === reference);
      if (model !== undefined) found.push({ type: 'model', ref: model.name, name: model.name });
    }
    const byId = found.filter((target) => target.ref === reference);
    const matches = byId.length > 0 ? byId : found;
    if (matches.length === 0) {
      throw new InvalidParameterError(
        param,
        `'${reference}' names no ${type ?? 'agent, pipeline or chat model'} of this account (give an agent or pipeline id or name, or a chat model of GET /v1/models).`,
      );
    }
    if (matches.length > 1) {
      throw new InvalidParameterError(
        param,
        `'${reference}' is ambiguous: it names ${matches.map((target) => `${target.type} ${target.ref}`).join(', ')}. Give the id (or route_type).`,
      );
    }
    return matches[0]!;
  }

  // ---- Policies -----------------------------------------------------------------------------

  async listPolicies(accountId: string): Promise<RoutingPolicy[]> {
    return this.options.repository.listPolicies(accountId);
  }

  async getPolicy(accountId: string, id: string): Promise<RoutingPolicy> {
    const policy = await this.options.repository.findPolicy(accountId, id);
    if (policy === undefined) throw new NotFoundError('Routing policy', id);
    return policy;
  }

  async createPolicy(
    accountId: string,
    input: PolicyInput & { name: string },
  ): Promise<RoutingPolicy> {
    if ((await this.options.repository.countPolicies(accountId)) >= routingLimits.maxPolicies) {
      throw new ConflictError(
        `An account may hold at most ${routingLimits.maxPolicies} routing policies.`,
      );
    }
    const now = new Date(this.now()).toISOString();
    const policy = await this.checkedPolicy(
      accountId,
      {
        id: newId('pol'),
        accountId,
        name: input.name,
        description: input.description ?? '',
        priority: input.priority ?? 100,
        enabled: input.enabled ?? true,
        conditions: input.conditions ?? {},
        actions: {},
        createdAt: now,
        updatedAt: now,
      },
      input.actions ?? {},
    );
    await this.options.repository.savePolicy(policy, true);
    this.options.cache.forgetPolicies(accountId);
    return policy;
  }

  async updatePolicy(accountId: string, id: string, input: PolicyInput): Promise<RoutingPolicy> {
    const existing = await this.getPolicy(accountId, id);
    const policy = await this.checkedPolicy(
      accountId,
      {
        ...existing,
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.description === undefined ? {} : { description: input.description }),
        ...(input.priority === undefined ? {} : { priority: input.priority }),
        ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
        ...(input.conditions === undefined ? {} : { conditions: input.conditions }),
        updatedAt: new Date(this.now()).toISOString(),
      },
      input.actions ?? existing.actions,
    );
    await this.options.repository.savePolicy(policy, false);
    this.options.cache.forgetPolicies(accountId);
    return policy;
  }

  async deletePolicy(accountId: string, id: string): Promise<void> {
    const deleted = await this.options.repository.deletePolicy(
      accountId,
      id,
      new Date(this.now()).toISOString(),
    );
    this.options.cache.forgetPolicies(accountId);
    if (!deleted) throw new NotFoundError('Routing policy', id);
  }

  /** Validates conditions and actions (400 naming the field) and resolves route_to's target. */
  private async checkedPolicy(
    accountId: string,
    policy: RoutingPolicy,
    actions: NonNullable<PolicyInput['actions']>,
  ): Promise<RoutingPolicy> {
    const { conditions } = policy;
    const tiers = Object.keys(this.options.config.rateLimits.tiers);
    conditions.tiers?.forEach((tier, index) => {
      if (!tiers.includes(tier)) {
        throw new InvalidParameterError(
          `conditions.tiers[${index}]`,
          `'${tier}' is not a configured tier (${tiers.join(', ')}).`,
        );
      }
    });
    if (conditions.pattern !== undefined) compilePattern(conditions.pattern, 'conditions.pattern');
    conditions.keywords?.forEach((keyword, index) => {
      if (wordsOf(keyword).length === 0) {
        throw new InvalidParameterError(
          `conditions.keywords[${index}]`,
          'A keyword needs at least one letter or digit.',
        );
      }
    });
    const hasAction =
      actions.route_to !== undefined ||
      (actions.forbid_models?.length ?? 0) > 0 ||
      (actions.forbid_providers?.length ?? 0) > 0 ||
      actions.require_provider !== undefined ||
      actions.max_tokens !== undefined;
    if (!hasAction) {
      throw new InvalidParameterError(
        'actions',
        'A policy needs at least one action: route_to, forbid_models, forbid_providers, require_provider or max_tokens.',
      );
    }
    const catalog = this.options.models.list().map((status) => status.definition);
    actions.forbid_models?.forEach((name, index) => {
      if (!catalog.some((definition) => definition.name === name)) {
        throw new AppError(
          'unknown_model',
          `Model '${name}' is not in the catalog (GET /v1/models).`,
          {
            param: `actions.forbid_models[${index}]`,
          },
        );
      }
    });
    const knownProvider = (provider: string) =>
      catalog.some((definition) => modelHasProvider(definition, provider));
    actions.forbid_providers?.forEach((provider, index) => {
      if (!knownProvider(provider)) {
        throw new InvalidParameterError(
          `actions.forbid_providers[${index}]`,
          `No model of the catalog has provider '${provider}' (a model's provider or connection, as GET /v1/models shows them).`,
        );
      }
    });
    if (actions.require_provider !== undefined && !knownProvider(actions.require_provider)) {
      throw new InvalidParameterError(
        'actions.require_provider',
        `No model of the catalog has provider '${actions.require_provider}' (a model's provider or connection, as GET /v1/models shows them).`,
      );
    }
    const resolved: PolicyActions = {
      ...(actions.forbid_models === undefined
        ? {}
        : { forbid_models: [...new Set(actions.forbid_models)] }),
      ...(actions.forbid_providers === undefined
        ? {}
        : { forbid_providers: [...new Set(actions.forbid_providers)] }),
      ...(actions.require_provider === undefined
        ? {}
        : { require_provider: actions.require_provider }),
      ...(actions.max_tokens === undefined ? {} : { max_tokens: actions.max_tokens }),
    };
    if (actions.route_to !== undefined) {
      const state = await this.state(accountId);
      const candidates = await this.candidates(state);
      const target = this.resolveTarget(
        actions.route_to.target,
        actions.route_to.type ?? null,
        candidates,
        'actions.route_to.target',
      );
      if (target.type === 'model') {
        const definition = catalog.find((model) => model.name === target.ref)!;
        if (
          modelRestriction(
            {
              ...emptyOutcome,
              forbiddenModels: new Map(
                (resolved.forbid_models ?? []).map((name) => [name, policy]),
              ),
              forbiddenProviders: new Map(
                (resolved.forbid_providers ?? []).map((name) => [name.toLowerCase(), policy]),
              ),
              requiredProvider:
                resolved.require_provider === undefined
                  ? null
                  : { value: resolved.require_provider.toLowerCase(), policy },
            },
            definition,
          ) !== null
        ) {
          throw new InvalidParameterError(
            'actions.route_to.target',
            `The policy routes to model '${target.ref}' and forbids it at the same time.`,
          );
        }
      }
      resolved.route_to = { type: target.type, target: target.ref };
    }
    const checked = { ...policy, actions: resolved };
    // Compiling checks the whole policy the way evaluation will use it.
    new CompiledPolicy(checked);
    return checked;
  }

  /** The current name of a policy's route_to target (null when it no longer exists). */
  async routeTargetName(accountId: string, policy: RoutingPolicy): Promise<string | null> {
    if (policy.actions.route_to === undefined) return null;
    const state = await this.state(accountId);
    const candidates = await this.candidates(state);
    return this.resolvePolicyTarget(policy.actions.route_to, candidates)?.name ?? null;
  }

  private resolvePolicyTarget(
    action: { type: RouteType; target: string },
    candidates: Candidates,
  ): RouteTarget | null {
    return this.targetOfKey(
      routeKey({ type: action.type, ref: action.target }),
      candidates,
      this.chatModels(),
    );
  }

  // ---- Chat ---------------------------------------------------------------------------------

  /**
   * For a chat turn: `auto` routes among the catalog's chat models (policies apply); a named
   * model is refused (403 `model_forbidden`) when a policy forbids it for this message; a
   * policy's max_tokens cap lowers the request's.
   */
  async resolveChatModel(input: {
    caller: RoutingCaller;
    requestedModel: string | undefined;
    messages: readonly HistoryTurn[];
    maxTokens: number | undefined;
    conversationId: string | null;
    signal: AbortSignal;
  }): Promise<ChatModelResolution> {
    const { caller, requestedModel } = input;
    const userTurns = input.messages.filter((turn) => turn.role === 'user');
    const message = userTurns[userTurns.length - 1]?.content ?? '';
    const cap = (limit: number | null) =>
      limit === null ? input.maxTokens : Math.min(input.maxTokens ?? limit, limit);
    if (requestedModel === 'auto') {
      if (!this.features.autonomous_routing) {
        throw new FeatureDisabledError('autonomous_routing', 'Routing chat with \'model: "auto"\'');
      }
      const decision = await this.decide(
        caller,
        {
          message,
          conversationId: input.conversationId,
          history: input.messages.slice(0, -1),
          preferredModels: [],
          strategy: null,
          signal: input.signal,
        },
        true,
      );
      await this.options.repository.insertIntent(decision.intent);
      const definition = this.options.models.definitionOf(decision.target.ref);
      const limit =
        decision.maxTokens === null ? null : Math.min(decision.maxTokens, definition.maxTokens);
      return { model: decision.target.ref, maxTokens: cap(limit), decision };
    }
    if (requestedModel === undefined || !this.features.policy_engine) {
      return { model: requestedModel, maxTokens: input.maxTokens, decision: null };
    }
    const policies = await this.options.cache.policies(caller.accountId);
    if (policies.length === 0) {
      return { model: requestedModel, maxTokens: input.maxTokens, decision: null };
    }
    const definition = this.options.models.find(requestedModel);
    if (definition === undefined)
      return { model: requestedModel, maxTokens: input.maxTokens, decision: null };
    let category: IntentCategory | undefined;
    const outcome = evaluatePolicies(
      policies,
      {
        message,
        category: () => (category ??= this.options.classifier.classify(message).category),
        tier: caller.tier,
        scopes: caller.scopes,
      },
      () => null,
    );
    const restriction = modelRestriction(outcome, definition);
    if (restriction !== null) {
      throw new AppError(
        'model_forbidden',
        `Model '${requestedModel}' may not answer this request: ${restriction.reason}. Use another model, or "model": "auto" to let the router choose an allowed one.`,
        {
          param: 'model',
          details: { policy_id: restriction.policy.id, policy: restriction.policy.name },
        },
      );
    }
    return {
      model: requestedModel,
      maxTokens: cap(outcome.maxTokens?.value ?? null),
      decision: null,
    };
  }

  // ---- State --------------------------------------------------------------------------------

  private async state(accountId: string): Promise<AccountRouter> {
    const freshness = await this.options.repository.freshness(accountId);
    const state = await this.options.cache.get(accountId, freshness, this.embeddingModel());
    if (state.candidatesKey !== freshness.candidates) {
      state.candidates = await this.loadCandidates(accountId);
      state.candidatesKey = freshness.candidates;
    }
    return state;
  }

  private candidates(state: AccountRouter): Promise<Candidates> {
    return Promise.resolve(state.candidates as Candidates);
  }

  private async loadCandidates(accountId: string): Promise<Candidates> {
    const capabilitiesOf = new Map(
      this.options.agentCatalog.list().map((type) => [type.id as string, type.capabilities]),
    );
    const agents: Agent[] = [];
    for (let offset = 0; agents.length < routingLimits.maxCandidates; offset += 100) {
      const page = await this.options.agents.list(accountId, { limit: 100, offset });
      agents.push(...page.agents.filter((agent) => agent.accountId === accountId));
      if (offset + 100 >= page.total) break;
    }
    const pipelines: Pipeline[] = [];
    for (let offset = 0; pipelines.length < routingLimits.maxCandidates; offset += 100) {
      const page = await this.options.pipelines.list(accountId, { limit: 100, offset });
      pipelines.push(...page.pipelines);
      if (offset + 100 >= page.total) break;
    }
    const byId = new Map(agents.map((agent) => [agent.id, agent]));
    const wordSet = (name: string, description: string) =>
      new Set(wordsOf(`${name} ${description}`));
    return {
      agents: agents
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
        .map((agent) => ({
          target: { type: 'agent' as const, ref: agent.id, name: agent.name },
          agentType: agent.agentType,
          capabilities: capabilitiesOf.get(agent.agentType) ?? [],
          words: wordSet(agent.name, agent.description),
          model: agent.modelId,
        })),
      pipelines: pipelines
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
        .map((pipeline) => {
          const stageAgents = pipeline.stages
            .map((stage) => byId.get(stage.agent_id))
            .filter((agent): agent is Agent => agent !== undefined);
          return {
            target: { type: 'pipeline' as const, ref: pipeline.id, name: pipeline.name },
            capabilities: [
              ...new Set(stageAgents.flatMap((agent) => capabilitiesOf.get(agent.agentType) ?? [])),
            ],
            words: wordSet(pipeline.name, pipeline.description),
            models: stageAgents.map((agent) => agent.modelId),
          };
        }),
    };
  }

  private chatModels(): ModelDefinition[] {
    return this.options.config.models.definitions.filter(
      (definition) => definition.type === 'chat',
    );
  }

  private isAvailable(name: string): boolean {
    return this.options.models.status(name)?.available === true;
  }

  /** The embedding model the router blends in now, or null (lexical only). */
  private embeddingModel(): string | null {
    const configured = this.options.config.routing.embeddingModel;
    if (configured === false) return null;
    if (configured !== 'auto') return this.isAvailable(configured) ? configured : null;
    return (
      this.options.models
        .list()
        .find((status) => status.definition.type === 'embedding' && status.available)?.definition
        .name ?? null
    );
  }

  private async embed(model: string, text: string, signal: AbortSignal): Promise<Float32Array> {
    const result = await this.options.models
      .embeddingModel(model)
      .embed([text.slice(0, 8000)], signal);
    const vector = result.embeddings[0];
    if (vector === undefined || vector.some((value) => !Number.isFinite(value))) {
      throw new Error('the embedding model returned no usable vector');
    }
    return unitVector(vector);
  }
}
