// POST /chat/completions and /v1/chat/completions: OpenAI's Chat Completions format, so that the
// official clients work against root_url unchanged. With the extensions `user_id` or
// `conversation_id` the turn is stored in a conversation like /v1/chat; without them it is a
// stateless completion and nothing is stored. The translation both ways is
// chat-completions-dialect.ts; this is the HTTP side, as one Fastify plugin.
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
import { capabilityNeeds } from '../../models/capabilities.js';
import type { ChatRequest, ChatService, ChatStreamEvent } from '../chat/chat-service.js';
import type { RoutingService } from '../routing/routing-service.js';
import {
  chunkStream,
  chunksOf,
  completionBody,
  completionCallOf,
  type CompletionRequestBody,
} from './chat-completions-dialect.js';
import { CompletionRequestSchema, CompletionSchema } from './completions.schemas.js';

export type CompletionsPlugin = FeaturePlugin;

export interface CompletionRoutesDependencies {
  /** The chat module's service: the same turn as /v1/chat, stored or stateless. */
  readonly chat: Pick<ChatService, 'complete' | 'openStream'>;
  /** `model: "auto"` is routed; routing policies may forbid a named model or cap max_tokens. */
  readonly routing: Pick<RoutingService, 'resolveChatModel'>;
  /** Ends a stream whose key is revoked or expires. */
  readonly credentialWatch: CredentialWatch;
  /** Larger than other routes' (images as data URLs): `chat.body_limit_bytes`. */
  readonly bodyLimit: { readonly bytes: number; readonly setting: string };
}

/** The Chat Completions routes, registered by app.ts like any Fastify plugin. */
export function completionsPlugin(dependencies: CompletionRoutesDependencies): CompletionsPlugin {
  return featurePlugin('completions', (app) => {
    completionRoutes(app, dependencies);
  });
}

/** OpenAI's chunk sequence, one id for all; an error is logged and ends it. */
async function* completionChunks(
  events: AsyncIterable<ChatStreamEvent>,
  includeUsage: boolean,
  log: FastifyBaseLogger,
): AsyncGenerator<unknown> {
  const stream = chunkStream(Math.floor(Date.now() / 1000), includeUsage);
  for await (const event of events) {
    if (event.type === 'error') logStreamFailure(log, event.error);
    const { chunks, last } = chunksOf(stream, event);
    yield* chunks;
    if (last) return;
  }
}

function completionRoutes(app: App, dependencies: CompletionRoutesDependencies): void {
  for (const path of ['/chat/completions', '/v1/chat/completions']) {
    app.post(
      path,
      {
        config: {
          access: access.scopes('chat:write'),
          bodyLimitSetting: dependencies.bodyLimit.setting,
        },
        bodyLimit: dependencies.bodyLimit.bytes,
        schema: {
          operationId:
            path === '/chat/completions' ? 'createChatCompletion' : 'createChatCompletionV1',
          tags: ['Chat'],
          summary: 'Chat completion (OpenAI-compatible)',
          description:
            "OpenAI's Chat Completions request and response, streamed (`chat.completion.chunk`, `stream_options.include_usage`, `data: [DONE]`) or not. `temperature` 0–2 as in OpenAI's API (Anthropic models accept at most 1). Extensions: `user_id` and/or `conversation_id` store the turn in a conversation (then `conversation_id` and `message_id` are added to the response — to the first chunk when streaming — and the `x-conversation-id` header is set on JSON answers); without them nothing is stored. Tools (`tools`, `tool_choice`, `parallel_tool_calls`, `tool` messages, streamed `tool_calls` deltas), content parts (`image_url` as URL or data URL, `input_audio`, `file`), `response_format` (`json_object`, `json_schema`) and every sampling parameter are honoured: passed unchanged to OpenAI and OpenAI-compatible upstreams (unknown fields too), translated for Anthropic and Google, or refused with a 400 naming the parameter when the provider cannot honour it. A request needing a capability (tools, vision, json_schema, audio_input) the model lacks answers 400 before any upstream call. `n` > 1 is not supported. See docs/message-model.md.",
          body: CompletionRequestSchema,
          response: {
            200: {
              description: 'A chat.completion, or chat.completion.chunk events when streaming.',
              content: {
                'application/json': { schema: CompletionSchema },
                'text/event-stream': { schema: Type.String() },
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
}

/** One completion: routed, then sent as a chat.completion or streamed as chunks. */
async function answer(
  { chat, routing, credentialWatch }: CompletionRoutesDependencies,
  body: CompletionRequestBody,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const call = completionCallOf(body);
  // A stream also ends when its key is revoked or expires (a last chunk carrying the error).
  const guard = call.stream ? guardAnswer(reply, credentialWatch, principalOf(request)) : null;
  const signal = guard?.signal ?? clientGoneSignal(reply);
  // `model: "auto"` is routed; routing policies may forbid a named model or cap max_tokens.
  const routed = await routing.resolveChatModel({
    caller: principalOf(request),
    requestedModel: call.requestedModel,
    messages: call.messages,
    maxTokens: call.maxTokens,
    conversationId: call.conversationId,
    signal,
    capabilities: capabilityNeeds(call.messages, call.params).map((need) => need.capability),
  });
  const chatRequest: ChatRequest = {
    accountId: principalOf(request).accountId,
    apiKeyId: principalOf(request).keyId,
    userId: call.userId,
    conversationId: call.conversationId,
    persist: call.persist,
    messages: call.messages,
    model: routed.model,
    temperature: call.temperature,
    maxTokens: routed.maxTokens,
    maxTokensParam: call.maxTokensParam,
    params: call.params,
    signal,
  };
  if (guard !== null) {
    const guarded = await openGuarded<ChatStreamEvent>(
      () => chat.openStream(chatRequest),
      guard,
      (error) => ({ type: 'error', error }),
    );
    void sendEventStream(
      reply,
      serverSentEvents(completionChunks(guarded, call.includeUsage, request.log), '[DONE]'),
    );
    return;
  }
  const outcome = await chat.complete(chatRequest);
  if (outcome.conversationId !== null)
    void reply.header('x-conversation-id', outcome.conversationId);
  void reply
    .type('application/json; charset=utf-8')
    .send(completionBody(outcome, Math.floor(Date.now() / 1000)));
}
