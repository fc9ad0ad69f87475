// Domain types of routing: who asks and what, where a message can go, classified intents, and
// taught examples.
import type { Scope } from '../../auth/scopes.js';
import type { ChatCapability } from '../../config/config.js';
import type { ComplexityLevel, ComplexitySignals } from './complexity.js';
import type { Entity } from '../../text/entities.js';
import type { RoutingStrategy } from './model-selection.js';
import type { IntentCategory } from './taxonomy.js';

/** The key asking: policy conditions look at its tier and scopes. */
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
  /** Chat models must have these (the request carries tools, images, a JSON schema…). */
  readonly capabilities?: readonly ChatCapability[] | undefined;
}

export const routeTypes = ['agent', 'pipeline', 'model'] as const;
export type RouteType = (typeof routeTypes)[number];

/** A place a message can be sent: an agent or pipeline (by id) or a model (by name). */
export interface RouteTarget {
  readonly type: RouteType;
  /** Agent or pipeline id, or model name. */
  readonly ref: string;
  /** The name shown to people (the agent's or pipeline's name, or the model name). */
  readonly name: string;
}

/** `agent:agent_…`, `pipeline:pipe_…`, `model:name`: how the router keys routes. */
export function routeKey(target: { type: RouteType; ref: string }): string {
  return `${target.type}:${target.ref}`;
}

export interface IntentMetadata {
  /** The entities' texts, as the spec's `detected_entities`. */
  readonly detected_entities: string[];
  readonly entities: Entity[];
  readonly complexity: ComplexityLevel;
  readonly complexity_score: number;
  readonly complexity_signals: ComplexitySignals;
  /** `classifier` (the shipped model) or `model:<name>` (a chat model classified it). */
  readonly method: string;
  /** The classifier's runner-up categories with their probabilities. */
  readonly alternatives: { category: IntentCategory; confidence: number }[];
  /** Why a requested model could not classify, when it could not. */
  readonly notice?: string;
}

export interface Intent {
  readonly id: string;
  readonly accountId: string;
  readonly conversationId: string | null;
  readonly text: string;
  readonly category: IntentCategory;
  readonly confidence: number;
  readonly metadata: IntentMetadata;
  /** Where a route call sent the message; null for a classification alone. */
  readonly route: RouteTarget | null;
  readonly createdAt: string;
}

/** A taught example: the message and the route the account said it should have taken. */
export interface RouteExample {
  readonly id: string;
  readonly seq: number;
  readonly message: string;
  readonly messageKey: string;
  readonly route: RouteTarget;
  readonly conversationId: string | null;
  readonly embedding: Float32Array | null;
  readonly embeddingModel: string | null;
  readonly createdAt: string;
}
