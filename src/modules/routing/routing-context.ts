// What every part of routing reads: its dependencies, the account's router (taught examples and
// compiled policies, current with the database) with its candidates, the catalog's chat models,
// and the embedding model the router blends in.
import type { Logger } from 'pino';
import type { AppConfig, ModelDefinition } from '../../config/config.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import { loadCandidates, type CandidateSources, type Candidates } from './candidates.js';
import type { Entity } from '../../text/entities.js';
import type { IntentClassifier } from './intent-classifier.js';
import type { AccountRouter, RouterCache } from './router-cache.js';
import type { RoutingRepository } from './routing.repository.js';

export interface RoutingDependencies extends CandidateSources {
  readonly config: AppConfig;
  readonly repository: RoutingRepository;
  readonly cache: RouterCache;
  readonly classifier: IntentClassifier;
  readonly models: ModelRegistry;
  readonly conversations: Pick<ConversationService, 'get'>;
  readonly logger: Logger;
  readonly now?: (() => number) | undefined;
  /**
   * Finds entities with the name tagger (people, places, organisations: compromise, tens of
   * milliseconds per few thousand characters) off the event loop; default: on it.
   */
  readonly namedEntities?:
    | ((message: string, now: Date, signal?: AbortSignal) => Promise<Entity[]>)
    | undefined;
}

/** An account's router and the agents and pipelines it routes among. */
export interface AccountRouting {
  readonly router: AccountRouter;
  readonly candidates: Candidates;
}

function unitVector(values: readonly number[]): Float32Array {
  const vector = Float32Array.from(values);
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  for (let index = 0; index < vector.length; index += 1) vector[index]! /= norm;
  return vector;
}

export class RoutingContext {
  readonly now: () => number;

  constructor(readonly dependencies: RoutingDependencies) {
    this.now = dependencies.now ?? Date.now;
  }

  get config(): AppConfig {
    return this.dependencies.config;
  }

  get features(): AppConfig['features'] {
    return this.dependencies.config.features;
  }

  /** The account's router, current with the database, and its candidates (re-read on change). */
  async account(accountId: string): Promise<AccountRouting> {
    const { repository, cache } = this.dependencies;
    const freshness = await repository.freshness(accountId);
    const router = await cache.get(accountId, freshness, this.embeddingModel());
    if (router.candidatesKey !== freshness.candidates) {
      router.candidates = await loadCandidates(this.dependencies, accountId);
      router.candidatesKey = freshness.candidates;
    }
    return { router, candidates: router.candidates as Candidates };
  }

  chatModels(): ModelDefinition[] {
    return this.config.models.definitions.filter((definition) => definition.type === 'chat');
  }

  isAvailable(name: string): boolean {
    return this.dependencies.models.status(name)?.available === true;
  }

  /** The embedding model the router blends in now, or null (lexical only). */
  embeddingModel(): string | null {
    const configured = this.config.routing.embeddingModel;
    if (configured === false) return null;
    if (configured !== 'auto') return this.isAvailable(configured) ? configured : null;
    return (
      this.dependencies.models
        .list()
        .find((status) => status.definition.type === 'embedding' && status.available)?.definition
        .name ?? null
    );
  }

  /** The message's unit-length embedding by `model`; throws when the model gives none usable. */
  async embed(
    model: string,
    text: string,
    signal: AbortSignal,
    accountId: string,
  ): Promise<Float32Array> {
    // The router's own model call, recorded by account (it is made before any run or turn).
    const attribution = { accountId, apiKeyId: null, endUser: null, route: 'routing' };
    const result = await this.dependencies.models
      .embeddingModel(model)
      .embed([text.slice(0, 8000)], signal, attribution);
    const vector = result.embeddings[0];
    if (vector === undefined || vector.some((value) => !Number.isFinite(value))) {
      throw new Error('the embedding model returned no usable vector');
    }
    return unitVector(vector);
  }
}
