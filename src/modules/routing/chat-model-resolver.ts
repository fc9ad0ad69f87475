// The model a chat turn uses: `auto` routes among the catalog's chat models (policies apply); a
// named model is refused (403 `model_forbidden`) when a policy forbids it for this message; a
// policy's max_tokens cap lowers the request's.
import { AppError, FeatureDisabledError } from '../../errors/app-error.js';
import type { RouteDecider, RouteDecision } from './decider.js';
import { evaluatePolicies, modelRestriction } from './policies.js';
import type { RoutingContext } from './routing-context.js';
import type { IntentCategory } from './taxonomy.js';
import type { ChatCapability } from '../../config/config.js';
import type { HistoryTurn, RoutingCaller } from './types.js';
import { signalOf, type Cancellation } from '../../net/hang-up.js';

export interface ChatModelRequest {
  readonly caller: RoutingCaller;
  readonly requestedModel: string | undefined;
  readonly messages: readonly HistoryTurn[];
  readonly maxTokens: number | undefined;
  readonly conversationId: string | null;
  readonly signal: Cancellation;
  /** `auto` only considers chat models with these (tools, vision, json_schema…). */
  readonly capabilities?: readonly ChatCapability[] | undefined;
}

export interface ChatModelResolution {
  /** The model to use (undefined: the request named none and no policy changed that). */
  readonly model: string | undefined;
  readonly maxTokens: number | undefined;
  /** The routing decision when the request asked for `auto`. */
  readonly decision: RouteDecision | null;
}

/** The request's max_tokens under a policy's cap (null: no cap). */
type Cap = (limit: number | null) => number | undefined;

export class ChatModelResolver {
  constructor(
    private readonly context: RoutingContext,
    private readonly decider: RouteDecider,
  ) {}

  async resolve(input: ChatModelRequest): Promise<ChatModelResolution> {
    const { requestedModel } = input;
    const userTurns = input.messages.filter((turn) => turn.role === 'user');
    const message = userTurns[userTurns.length - 1]?.content ?? '';
    const cap: Cap = (limit) =>
      limit === null ? input.maxTokens : Math.min(input.maxTokens ?? limit, limit);
    if (requestedModel === 'auto') return this.routed(input, message, cap);
    if (requestedModel === undefined || !this.context.features.policy_engine) {
      return { model: requestedModel, maxTokens: input.maxTokens, decision: null };
    }
    return this.checked(input, requestedModel, message, cap);
  }

  /** `auto`: the decider picks among the chat models, and the intent is stored. */
  private async routed(
    input: ChatModelRequest,
    message: string,
    cap: Cap,
  ): Promise<ChatModelResolution> {
    if (!this.context.features.autonomous_routing) {
      throw new FeatureDisabledError('autonomous_routing', 'Routing chat with \'model: "auto"\'');
    }
    const decision = await this.decider.decide(
      input.caller,
      {
        message,
        conversationId: input.conversationId,
        history: input.messages.slice(0, -1),
        preferredModels: [],
        strategy: null,
        signal: signalOf(input.signal),
        capabilities: input.capabilities,
      },
      true,
    );
    await this.context.dependencies.repository.insertIntent(decision.intent);
    const definition = this.context.dependencies.models.definitionOf(decision.target.ref);
    const limit =
      decision.maxTokens === null ? null : Math.min(decision.maxTokens, definition.maxTokens);
    return { model: decision.target.ref, maxTokens: cap(limit), decision };
  }

  /** A named model, held against the account's policies for this message. */
  private async checked(
    input: ChatModelRequest,
    requestedModel: string,
    message: string,
    cap: Cap,
  ): Promise<ChatModelResolution> {
    const { caller } = input;
    const { cache, classifier, models } = this.context.dependencies;
    const unchanged = { model: requestedModel, maxTokens: input.maxTokens, decision: null };
    const policies = await cache.policies(caller.accountId);
    if (policies.length === 0) return unchanged;
    const definition = models.find(requestedModel);
    if (definition === undefined) return unchanged;
    let category: IntentCategory | undefined;
    const outcome = evaluatePolicies(
      policies,
      {
        message,
        category: () => (category ??= classifier.classify(message).category),
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
}
