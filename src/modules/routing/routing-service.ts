// Routing, as the rest of the service sees it: classifies intents, recommends where a message
// should go (decider.ts), learns online from route feedback (teaching.ts), manages policies
// (policy-management.ts), and resolves `model: "auto"` and policy-forbidden models for chat
// (chat-model-resolver.ts).
import {
  ChatModelResolver,
  type ChatModelRequest,
  type ChatModelResolution,
} from './chat-model-resolver.js';
import { RouteDecider, type RouteDecision } from './decider.js';
import { classifyIntent } from './intent-records.js';
import { NotFoundError } from '../../errors/app-error.js';
import type { RoutingPolicy } from './policies.js';
import { PolicyManager, type PolicyInput } from './policy-management.js';
import { RoutingContext, type RoutingDependencies } from './routing-context.js';
import { teach, type Taught, type TeachingInput } from './teaching.js';
import type { Intent, RouteRequest, RoutingCaller } from './types.js';

export class RoutingService {
  private readonly context: RoutingContext;
  private readonly decider: RouteDecider;
  private readonly policies: PolicyManager;
  private readonly chatModels: ChatModelResolver;

  constructor(dependencies: RoutingDependencies) {
    this.context = new RoutingContext(dependencies);
    this.decider = new RouteDecider(this.context);
    this.policies = new PolicyManager(this.context);
    this.chatModels = new ChatModelResolver(this.context, this.decider);
  }

  /** Bytes the router cache holds in this process. */
  get cacheBytes(): number {
    return this.context.dependencies.cache.bytes;
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
    await this.context.dependencies.conversations.get(accountId, conversationId, userId);
  }

  /** Classifies and stores an intent (entities, complexity); a named chat model refines it. */
  classifyIntent(
    caller: RoutingCaller,
    input: {
      message: string;
      conversationId: string | null;
      model: string | null;
      signal: AbortSignal;
    },
  ): Promise<Intent> {
    return classifyIntent(this.context, caller, input);
  }

  async getIntent(accountId: string, id: string): Promise<Intent> {
    const intent = await this.context.dependencies.repository.findIntent(accountId, id);
    if (intent === undefined) throw new NotFoundError('Intent', id);
    return intent;
  }

  /** Where the message should go; the intent is stored with the route. */
  async route(caller: RoutingCaller, request: RouteRequest): Promise<RouteDecision> {
    const decision = await this.decider.decide(caller, request, false);
    await this.context.dependencies.repository.insertIntent(decision.intent);
    return decision;
  }

  /** Teaches the router where a message should have gone. */
  feedback(caller: RoutingCaller, input: TeachingInput): Promise<Taught> {
    return teach(this.context, caller, input);
  }

  listPolicies(accountId: string): Promise<RoutingPolicy[]> {
    return this.policies.list(accountId);
  }

  getPolicy(accountId: string, id: string): Promise<RoutingPolicy> {
    return this.policies.get(accountId, id);
  }

  createPolicy(accountId: string, input: PolicyInput & { name: string }): Promise<RoutingPolicy> {
    return this.policies.create(accountId, input);
  }

  updatePolicy(accountId: string, id: string, input: PolicyInput): Promise<RoutingPolicy> {
    return this.policies.update(accountId, id, input);
  }

  deletePolicy(accountId: string, id: string): Promise<void> {
    return this.policies.delete(accountId, id);
  }

  /** The current name of a policy's route_to target (null when it no longer exists). */
  routeTargetName(accountId: string, policy: RoutingPolicy): Promise<string | null> {
    return this.policies.routeTargetName(accountId, policy);
  }

  /** The model a chat turn uses, under the account's policies (see chat-model-resolver.ts). */
  resolveChatModel(input: ChatModelRequest): Promise<ChatModelResolution> {
    return this.chatModels.resolve(input);
  }
}
