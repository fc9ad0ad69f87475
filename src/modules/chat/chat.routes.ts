// POST /v1/chat: one turn of a stored conversation, answered as JSON or as the contract's
// Server-Sent Events (start, delta and tool_call…, end | error), as one Fastify plugin over the
// chat service. OpenAI's content parts, tool calls, tool results, tools, tool_choice and
// response_format are its extensions; its body limit is the chat routes' own (base64 images).
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
import { maxSchemaText } from '../../http/schemas/openai-messages.js';
import type { ChatOutcome, ChatService, ChatStreamEvent } from './chat-service.js';
import { capabilityNeeds } from '../../models/capabilities.js';
import { turnOfMessage } from '../../models/openai-messages.js';
import { paramsOf } from './chat-messages.js';
import { ChatRequestSchema, ChatResponseSchema, type ChatRequestBody } from './chat.schemas.js';

export type ChatPlugin = FeaturePlugin;

export interface ChatRoutesDependencies {
  readonly chat: ChatService;
  /** `model: "auto"` is routed; routing policies may forbid a named model or cap max_tokens. */
  readonly routing: Pick<RoutingService, 'resolveChatModel'>;
  /** Ends a stream whose key is revoked or expires. */
  readonly credentialWatch: CredentialWatch;
  /** The chat routes' body limit (`chat.body_limit_bytes`, never below the server's). */
  readonly bodyLimitBytes: number;
}

/** Where the chat routes' body limit is set, named in its 413. */
export const chatBodyLimitSetting = 'CHAT_BODY_LIMIT_BYTES';

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

/** `tool_calls` beside the answer's `message`, when the model made any. */
function toolCallsJson(outcome: ChatOutcome) {
  return outcome.toolCalls === undefined || outcome.toolCalls.length === 0
    ? {}
    : { tool_calls: outcome.toolCalls };
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
      case 'tool-call':
        // A piece of a tool call as OpenAI streams it: the first names its index, id and
        // function; later ones add to its arguments. `end` carries the calls whole.
        yield {
          type: 'tool_call',
          index: event.index,
          ...(event.id === undefined ? {} : { id: event.id }),
          ...(event.name === undefined ? {} : { name: event.name }),
          arguments: event.arguments,
        };
        break;
      case 'end':
        yield {
          type: 'end',
          message: event.outcome.text,
          ...toolCallsJson(event.outcome),
          conversation_id: event.outcome.conversationId,
          message_id: event.outcome.messageId,
          model: event.outcome.model.name,
          usage: usageJson(event.outcome),
          finish_reason: event.outcome.finishReason,
          latency_ms: event.outcome.latencyMs,
        };
        break;
      case 'refusal':
        // Not shown by /v1/chat yet (a question for the message model's refusals).
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
      config: { access: access.scopes('chat:write'), bodyLimitSetting: chatBodyLimitSetting },
      bodyLimit: dependencies.bodyLimitBytes,
      schema: {
        operationId: 'chat',
        tags: ['Chat'],
        summary: 'Chat',
        description:
          'Both turns are stored, each as sent or answered: content parts (images as their URL; a data URL, audio or file data longer than `chat.max_stored_data_url_bytes`, 5 MiB by default, answers 413 `payload_too_large`), tool calls and tool results; the history replays them exactly. Without `conversation_id` a new conversation is created for `user_id`. History is trimmed oldest-first to fit the model’s context_length minus max_tokens. Extensions in OpenAI’s shapes: `tools`, `tool_choice` and `response_format` in the request; an answer that calls tools has `tool_calls` beside `message` (finish_reason `tool_calls`), and the next turn sends one `{"role":"tool","tool_call_id","content"}` message per call. The body may be up to `chat.body_limit_bytes` (16 MiB by default). With `stream: true` the answer is `text/event-stream`: `data:` lines holding `{"type":"start",conversation_id,message_id,model}`, then `{"type":"delta",content}`… and `{"type":"tool_call",index,id?,name?,arguments}`… (a tool call’s pieces as OpenAI streams them: the first has its id and name, the rest add to its arguments), then `{"type":"end",message,tool_calls?,usage,finish_reason,…}` — or `{"type":"error",error}` instead of `end` when the model fails mid-way (nothing is stored then).',
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
  const messages = body.messages.map(turnOfMessage);
  const params = paramsOf(body, maxSchemaText);
  // `model: "auto"` is routed; routing policies may forbid a named model or cap max_tokens.
  const routed = await routing.resolveChatModel({
    caller: principalOf(request),
    requestedModel: body.model,
    messages,
    maxTokens: body.max_tokens,
    conversationId: body.conversation_id ?? null,
    signal,
    capabilities: capabilityNeeds(messages, params).map((need) => need.capability),
  });
  const chatRequest = {
    accountId: principalOf(request).accountId,
    apiKeyId: principalOf(request).keyId,
    userId: body.user_id,
    conversationId: body.conversation_id ?? null,
    persist: true,
    messages,
    model: routed.model,
    temperature: body.temperature,
    maxTokens: routed.maxTokens,
    params,
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
    ...toolCallsJson(outcome),
    conversation_id: outcome.conversationId ?? '',
    message_id: outcome.messageId,
    model: outcome.model.name,
    usage: usageJson(outcome),
    finish_reason: outcome.finishReason,
    latency_ms: outcome.latencyMs,
  });
}
