// Anthropic's Messages API as a dialect of the chat module's turn handler. A /v1/messages body
// becomes the chat turn it asks for (anthropic-call.ts); once routing chose the model, a model of
// the `anthropic` provider answers through its pass-through (messages-passthrough.ts), any other
// through the chat service, whose outcome or stream events become Anthropic's message
// (anthropic-answer.ts) or event sequence (anthropic-events.ts). The routes are messages.routes.ts.
import type { ModelDefinition } from '../../config/config.js';
import { requireCapabilities } from '../../models/capabilities.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { AnthropicPassthrough } from '../../models/providers/anthropic-passthrough.js';
import type { RoutedModel, TurnContext, TurnDialect, Upstream } from '../chat/turn-dialect.js';
import { messageBody } from './anthropic-answer.js';
import { messagesCallOf, refuseUntranslatable } from './anthropic-call.js';
import { messageEventStream, messageEventsOf } from './anthropic-events.js';
import type { MessagesCall, MessagesRequestBody } from './anthropic-request.js';
import { passthroughAnswer } from './messages-passthrough.js';

export interface MessagesDialectDependencies {
  /** The catalog: the definition of the model routing chose. */
  readonly models: Pick<ModelRegistry, 'resolveChatModelName' | 'definitionOf' | 'chatModel'>;
  /** The pass-through client of a model of the `anthropic` provider; null for any other. */
  readonly passthroughOf: (definition: ModelDefinition) => AnthropicPassthrough | null;
}

/** A Messages turn: the translated call, and the body and request id a pass-through needs. */
export interface MessagesTurn extends MessagesCall {
  readonly body: MessagesRequestBody;
  readonly requestId: string;
}

/**
 * Who answers once routing chose the model: its capabilities are checked by the request's own
 * fields and its limit caps the request's; then its pass-through (a stateless turn to an
 * `anthropic` model), else the chat service, if the request can be translated for it.
 */
function upstreamOf(
  { models, passthroughOf }: MessagesDialectDependencies,
  routed: RoutedModel,
  call: MessagesTurn,
  context: TurnContext,
): Upstream {
  const definition = models.definitionOf(models.resolveChatModelName(routed.model));
  requireCapabilities(definition, call.needs);
  // A client written for Claude asks for Claude's limits: the catalog's maximum caps them.
  const maxTokens = Math.min(routed.maxTokens ?? call.maxTokens, definition.maxTokens);
  // A turn to store is the chat module's, whatever the model: it is translated.
  const client = call.persist ? null : passthroughOf(definition);
  if (client !== null) {
    const user = (call.params as { user?: unknown } | undefined)?.user;
    const passed = {
      body: call.body,
      model: definition.name,
      maxTokens,
      headers: context.headers,
      requestId: context.requestId,
      attribution: {
        accountId: context.caller.accountId,
        apiKeyId: context.caller.keyId,
        endUser: typeof user === 'string' ? user : null,
        route: context.route,
      },
      // Counted as /v1/messages/count_tokens counts, only when a budget asks.
      countInput: () => models.chatModel(definition.name).countTokens(call.messages),
    };
    return { kind: 'direct', answer: passthroughAnswer(client, passed) };
  }
  refuseUntranslatable(call, definition.name);
  return { kind: 'chat', routed: { model: definition.name, maxTokens } };
}

/** The Messages dialect: Anthropic's message, or its named events (`event:` and `data:`). */
export function anthropicMessagesDialect(
  dependencies: MessagesDialectDependencies,
): TurnDialect<MessagesRequestBody, MessagesTurn> {
  return {
    callOf: (body, context) => ({ ...messagesCallOf(body), body, requestId: context.requestId }),
    upstream: (routed, call, context) => upstreamOf(dependencies, routed, call, context),
    answer: (outcome) => ({
      body: JSON.stringify(messageBody(outcome)),
      conversationId: outcome.conversationId,
    }),
    stream(call) {
      const stream = messageEventStream();
      return { next: (event) => messageEventsOf(stream, event, call.requestId) };
    },
  };
}
