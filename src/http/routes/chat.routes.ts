// POST /v1/chat: one turn of a stored conversation, answered as JSON or as the contract's
// Server-Sent Events (start, delta…, end | error).
import type { FastifyBaseLogger } from 'fastify';
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import type { ChatOutcome, ChatStreamEvent } from '../../chat/chat-service.js';
import type { Services } from '../../services.js';
import { maxTokensLimit } from '../schemas/common.js';
import {
  clientGoneSignal,
  guardAnswer,
  logStreamFailure,
  sendEventStream,
  serverSentEvents,
  untilCredentialsEnd,
} from '../streaming.js';
import { principalOf, type App } from '../types.js';

const UsageSchema = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
});

const FinishReasonSchema = Type.Union(
  [
    Type.Literal('stop'),
    Type.Literal('length'),
    Type.Literal('content_filter'),
    Type.Literal('other'),
  ],
  { description: "'length': the answer reached max_tokens." },
);

const ChatResponseSchema = Type.Object({
  message: Type.String({ description: "The assistant's reply." }),
  conversation_id: Type.String(),
  message_id: Type.String({ description: 'The id of the stored reply (for feedback).' }),
  model: Type.String({
    description: 'The model that answered (a fallback if the requested one failed).',
  }),
  usage: UsageSchema,
  finish_reason: FinishReasonSchema,
  latency_ms: Type.Integer(),
});

export const ChatRequestSchema = Type.Object(
  {
    messages: Type.Array(
      Type.Object(
        {
          role: Type.Union([
            Type.Literal('system'),
            Type.Literal('user'),
            Type.Literal('assistant'),
          ]),
          content: Type.String({ maxLength: 1_000_000 }),
        },
        { additionalProperties: false },
      ),
      {
        minItems: 1,
        maxItems: 1000,
        description:
          "The new turn: an optional system message (overrides the conversation's system prompt for this turn), earlier assistant/user turns as history, and the user's message last.",
      },
    ),
    user_id: Type.String({ minLength: 1, maxLength: 256 }),
    conversation_id: Type.Optional(
      Type.String({ maxLength: 100, description: 'Omit to start a new conversation.' }),
    ),
    model: Type.Optional(
      Type.String({
        maxLength: 256,
        description:
          "Default: the conversation's model, else the service's default model. `auto` lets the router choose among the catalog's chat models (routing policies apply); the answer's `model` names the one that answered.",
      }),
    ),
    stream: Type.Optional(Type.Boolean({ default: false })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    max_tokens: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: maxTokensLimit,
        description: "At most the model's max_tokens; default: that.",
      }),
    ),
  },
  { additionalProperties: false },
);

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

export function chatRoutes(app: App, services: Services): void {
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
      const body = request.body;
      // A stream also ends when its key is revoked or expires (an `error` event, revoked_api_key).
      const guard =
        body.stream === true
          ? guardAnswer(reply, services.credentialWatch, principalOf(request))
          : null;
      const signal = guard?.signal ?? clientGoneSignal(reply);
      // `model: "auto"` is routed; routing policies may forbid a named model or cap max_tokens.
      const routed = await services.routing.resolveChatModel({
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
        let events: AsyncGenerator<ChatStreamEvent>;
        try {
          events = await services.chat.openStream(chatRequest);
        } catch (error) {
          // Revoked while the model was being asked: the key's 401, not an aborted request.
          throw guard.ended ?? error;
        }
        const guarded = untilCredentialsEnd<ChatStreamEvent>(events, guard, (error) => ({
          type: 'error',
          error,
        }));
        return sendEventStream(reply, serverSentEvents(contractEvents(guarded, request.log)));
      }
      const outcome = await services.chat.complete(chatRequest);
      return reply.type('application/json; charset=utf-8').send({
        message: outcome.text,
        conversation_id: outcome.conversationId ?? '',
        message_id: outcome.messageId,
        model: outcome.model.name,
        usage: usageJson(outcome),
        finish_reason: outcome.finishReason,
        latency_ms: outcome.latencyMs,
      });
    },
  );
}
