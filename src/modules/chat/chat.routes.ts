// POST /v1/chat: one turn of a stored conversation, answered as JSON or as the contract's
// Server-Sent Events (start, delta…, end | error), as one Fastify plugin over the chat service.
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import type { CredentialWatch } from '../../auth/credential-watch.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import {
  clientGoneSignal,
  guardAnswer,
  logStreamFailure,
  sendEventStream,
  serverSentEvents,
  openGuarded,
} from '../../http/streaming.js';
import { principalOf, type App } from '../../http/types.js';
import type { RoutingService } from '../routing/routing-service.js';
import type { ChatOutcome, ChatService, ChatStreamEvent } from './chat-service.js';
import { ChatRequestSchema, ChatResponseSchema, type ChatRequestBody } from './chat.schemas.js';

export type ChatPlugin = FeaturePlugin;

export interface ChatRoutesDependencies {
  readonly chat: ChatService;
  /** `model: "auto"` is routed; routing policies may forbid a named model or cap max_tokens. */
  readonly routing: Pick<RoutingService, 'resolveChatModel'>;
  /** Ends a stream whose key is revoked or expires. */
  readonly credentialWatch: CredentialWatch;
}

/** The chat route, registered by app.ts like any Fastify plugin. */
export function chatPlugin(dependencies: ChatRoutesDependencies): ChatPlugin {
  return featurePlugin('chat', (app) => {
    chatRoutes(app, dependencies);
  });
}

function usageJson(outcome: ChatOutcome) {
  return {
    prompt_tokens: outcome.usage.promptTokens,
    completion_tokens: outcome.usage.completionTokens,
    total_tokens: outcome.usage.promptTokens + outcome.usage.completionTokens,
  };
}

async function* contractEvents(events: AsyncIterable<ChatStreamEvent>, log: FastifyBaseLogger) {
  for await (const event of events) {
    switch (event.type) {
      case 'start':
        yield {
          type: 'start',
          conversation_id: event.conversationId,
          message_id: event.messageId,
          model: event.model.name,
        };
        break;
      case 'delta':
        yield { type: 'delta', content: event.text };
        break;
      case 'end':
        yield {
          type: 'end',
          message: event.outcome.text,
          conversation_id: event.outcome.conversationId,
          message_id: event.outcome.messageId,
          model: event.outcome.model.name,
          usage: usageJson(event.outcome),
          finish_reason: event.outcome.finishReason,
          latency_ms: event.outcome.latencyMs,
        };
        break;
      case 'error':
        logStreamFailure(log, event.error);
        yield { type: 'error', error: event.error.toBody().error };
        break;
    }
  }
}

function chatRoutes(app: App, dependencies: ChatRoutesDependencies): void {
  app.post(
    '/v1/chat',
    {
      config: { access: access.scopes('chat:write') },
      schema: {
        operationId: 'chat',
        tags: ['Chat'],
        summary: 'Chat',
        description:
          'Both turns are stored. Without `conversation_id` a new conversation is created for `user_id`. History is trimmed oldest-first to fit the model’s context_length minus max_tokens. With `stream: true` the answer is `text/event-stream`: `data:` lines holding `{"type":"start",conversation_id,message_id,model}`, then `{"type":"delta",content}`…, then `{"type":"end",message,usage,finish_reason,…}` — or `{"type":"error",error}` instead of `end` when the model fails mid-way (nothing is stored then).',
        body: ChatRequestSchema,
        response: {
          200: {
            description: 'The reply (JSON), or the event stream when `stream` is true.',
            content: {
              'application/json': { schema: ChatResponseSchema },
              'text/event-stream': {
                schema: Type.String({ description: 'Server-Sent Events, see above.' }),
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      await answer(dependencies, request.body, request, reply);
      return reply;
    },
  );
}

/** One turn: routed, then sent as JSON or as the contract's event stream. */
async function answer(
  { chat, routing, credentialWatch }: ChatRoutesDependencies,
  body: ChatRequestBody,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  // A stream also ends when its key is revoked or expires (an `error` event, revoked_api_key).
  const guard =
    body.stream === true ? guardAnswer(reply, credentialWatch, principalOf(request)) : null;
  const signal = guard?.signal ?? clientGoneSignal(reply);
  // `model: "auto"` is routed; routing policies may forbid a named model or cap max_tokens.
  const routed = await routing.resolveChatModel({
    caller: principalOf(request),
    requestedModel: body.model,
    messages: body.messages,
    maxTokens: body.max_tokens,
    conversationId: body.conversation_id ?? null,
    signal,
  });
  const chatRequest = {
    accountId: principalOf(request).accountId,
    apiKeyId: principalOf(request).keyId,
    userId: body.user_id,
    conversationId: body.conversation_id ?? null,
    persist: true,
    messages: body.messages,
    model: routed.model,
    temperature: body.temperature,
    maxTokens: routed.maxTokens,
    signal,
  };
  if (guard !== null) {
    const guarded = await openGuarded<ChatStreamEvent>(
      () => chat.openStream(chatRequest),
      guard,
      (error) => ({ type: 'error', error }),
    );
    void sendEventStream(reply, serverSentEvents(contractEvents(guarded, request.log)));
    return;
  }
  const outcome = await chat.complete(chatRequest);
  void reply.type('application/json; charset=utf-8').send({
    message: outcome.text,
    conversation_id: outcome.conversationId ?? '',
    message_id: outcome.messageId,
    model: outcome.model.name,
    usage: usageJson(outcome),
    finish_reason: outcome.finishReason,
    latency_ms: outcome.latencyMs,
  });
}
