// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API, so that Anthropic's
// clients (and the tools built on them) work against the platform's root URL with a platform key
// (`x-api-key` as they send it, or `Authorization: Bearer`). Any chat model of the catalog
// answers: a model of the `anthropic` provider receives the request as sent (pass-through,
// ../../models/providers/anthropic-passthrough.ts), any other through the chat module's turn as
// /chat/completions does (translated both ways by anthropic-messages-dialect.ts). Stateless, but
// for the platform's extensions `user_id` and `conversation_id`, which store the turn in a
// conversation as /chat/completions does (then the request is translated whatever the model).
// Errors, on these routes only, are in Anthropic's shape.
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import type { CredentialWatch } from '../../auth/credential-watch.js';
import type { ModelDefinition } from '../../config/config.js';
import { AppError } from '../../errors/app-error.js';
import { sendError } from '../../http/error-handler.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import {
  clientGoneSignal,
  guardAnswer,
  logStreamFailure,
  openGuarded,
  sendEventStream,
} from '../../http/streaming.js';
import { principalOf, type App } from '../../http/types.js';
import { newId } from '../../ids.js';
import { requireCapabilities } from '../../models/capabilities.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type {
  AnthropicPassthrough,
  PassthroughEvent,
} from '../../models/providers/anthropic-passthrough.js';
import { RequestAbortedError, UpstreamError } from '../../models/spec.js';
import type { ChatRequest, ChatService, ChatStreamEvent } from '../chat/chat-service.js';
import type { RoutingService } from '../routing/routing-service.js';
import {
  anthropicErrorBody,
  countedTurns,
  forwardedHeaders,
  messageBody,
  messageEventStream,
  messageEventsOf,
  messagesCallOf,
  passedThroughEvent,
  passedThroughMessage,
  refuseUntranslatable,
  translatePrompt,
  type MessageEvent,
  type MessagesCall,
  type MessagesRequestBody,
  type PromptBody,
} from './anthropic-messages-dialect.js';
import {
  AnthropicErrorSchema,
  CountTokensRequestSchema,
  CountTokensSchema,
  MessageSchema,
  MessagesRequestSchema,
} from './messages.schemas.js';

export type MessagesPlugin = FeaturePlugin;

export interface MessagesRoutesDependencies {
  /** The chat module's service: a translated request is a chat turn, stored or stateless. */
  readonly chat: Pick<ChatService, 'complete' | 'openStream'>;
  /** `model: "auto"` is routed; routing policies may forbid a named model or cap max_tokens. */
  readonly routing: Pick<RoutingService, 'resolveChatModel'>;
  /** The catalog: which model a request names, and its token counter. */
  readonly models: Pick<ModelRegistry, 'resolveChatModelName' | 'definitionOf' | 'chatModel'>;
  /** The pass-through client of a model of the `anthropic` provider; null for any other. */
  readonly passthroughOf: (definition: ModelDefinition) => AnthropicPassthrough | null;
  /** Ends a stream whose key is revoked or expires. */
  readonly credentialWatch: CredentialWatch;
  /** Larger than other routes' (images and PDFs as base64): `chat.body_limit_bytes`. */
  readonly bodyLimit: { readonly bytes: number; readonly setting: string };
}

/** The Messages routes, registered by app.ts like any Fastify plugin. */
export function messagesPlugin(dependencies: MessagesRoutesDependencies): MessagesPlugin {
  return featurePlugin('messages', (app) => {
    messagesRoutes(app, dependencies);
  });
}

/**
 * Every error of these routes (a missing key, a schema violation, a rate limit, a failed model) in
 * Anthropic's shape, with the same status as elsewhere; `request-id` is the header Anthropic's
 * clients read.
 */
function anthropicErrors(error: Error, request: FastifyRequest, reply: FastifyReply): void {
  void reply.header('request-id', request.id);
  void sendError(request, reply, error, anthropicErrorBody);
}

const errorResponses = {
  '4xx': { description: "An error in Anthropic's shape.", ...AnthropicErrorSchema },
  '5xx': { description: "An error in Anthropic's shape.", ...AnthropicErrorSchema },
};

function messagesRoutes(app: App, dependencies: MessagesRoutesDependencies): void {
  app.post(
    '/v1/messages',
    {
      config: {
        access: access.scopes('chat:write'),
        bodyLimitSetting: dependencies.bodyLimit.setting,
      },
      bodyLimit: dependencies.bodyLimit.bytes,
      errorHandler: anthropicErrors,
      schema: {
        operationId: 'createMessage',
        tags: ['Chat'],
        summary: "Message (Anthropic's Messages API)",
        description:
          'Anthropic\'s Messages request and answer, streamed (`message_start`, `content_block_start`, `content_block_delta` with `text_delta` / `input_json_delta`, `content_block_stop`, `message_delta`, `message_stop`; `event: error` when it fails midway) or not; errors in Anthropic\'s shape (`{"type":"error","error":{"type":…,"message":…}}`). The key may come as `x-api-key`, as Anthropic\'s clients send it. A model of the `anthropic` provider receives the request as sent (only `model` and `max_tokens`, capped at the model\'s maximum, rewritten; `anthropic-version` and `anthropic-beta` forwarded). Any other chat model answers through the translation to the platform\'s message model: `system`, text, image (base64 or URL), document (base64 or plain text), `tool_use` and `tool_result` blocks, `tools`, `tool_choice`, `max_tokens` (capped at the model\'s maximum), `stop_sequences`, `temperature`, `top_p`, `metadata.user_id`, `output_config` (`format` as a JSON-schema `response_format`, `effort` as `reasoning_effort`); what it cannot carry (`top_k`, extended `thinking`, Anthropic\'s server tools and their blocks, a final assistant message, file sources) answers 400 naming it. A request needing a capability (tools, vision, JSON schema) the model lacks answers 400 before any upstream call. Extensions: `user_id` and/or `conversation_id` store the turn in a conversation as on `/chat/completions` (the request is then translated whatever the model; `conversation_id` and `message_id` are added to the message — to the one in `message_start` when streaming — and `x-conversation-id` is set on JSON answers); without them nothing is stored. See docs/message-model.md.',
        body: MessagesRequestSchema,
        response: {
          200: {
            description: "Anthropic's message, or its events when streaming.",
            content: {
              'application/json': { schema: MessageSchema },
              'text/event-stream': { schema: Type.String() },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      await answer(dependencies, request.body as MessagesRequestBody, request, reply);
      return reply;
    },
  );
  app.post(
    '/v1/messages/count_tokens',
    {
      config: {
        access: access.scopes('chat:write'),
        bodyLimitSetting: dependencies.bodyLimit.setting,
      },
      bodyLimit: dependencies.bodyLimit.bytes,
      errorHandler: anthropicErrors,
      schema: {
        operationId: 'countMessageTokens',
        tags: ['Chat'],
        summary: "Count a message's tokens (Anthropic's Messages API)",
        description:
          "The input tokens a Messages request would take (`system`, `messages`, `tools`), counted with the named model's own counter (its tokenizer where the platform has one, else an estimate). Errors in Anthropic's shape.",
        body: CountTokensRequestSchema,
        response: {
          200: { description: 'The count.', ...CountTokensSchema },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const body = request.body as PromptBody;
      const { models } = dependencies;
      const name = models.resolveChatModelName(body.model);
      const prompt = translatePrompt(body);
      const inputTokens = await models.chatModel(name).countTokens(countedTurns(prompt));
      void reply.header('request-id', request.id);
      return { input_tokens: inputTokens };
    },
  );
}

/** Anthropic's Server-Sent Events: `event: <name>` and `data: <json>` per event. */
function anthropicEventStream(events: AsyncIterable<MessageEvent>): Readable {
  async function* frames(): AsyncGenerator<string> {
    for await (const { event, data } of events) {
      yield `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    }
  }
  return Readable.from(frames(), { objectMode: false });
}

/** A translated answer's events, in Anthropic's sequence; an error is logged and ends it. */
async function* translatedEvents(
  events: AsyncIterable<ChatStreamEvent>,
  requestId: string,
  log: FastifyBaseLogger,
): AsyncGenerator<MessageEvent> {
  const stream = messageEventStream();
  for await (const event of events) {
    if (event.type === 'error') logStreamFailure(log, event.error);
    const { events: translated, last } = messageEventsOf(stream, event, requestId);
    yield* translated;
    if (last) return;
  }
}

/** A passed-through answer's events under the platform's id and model; a failure ends it. */
async function* passedThroughEvents(
  events: AsyncIterable<PassthroughEvent>,
  id: string,
  model: string,
  requestId: string,
  log: FastifyBaseLogger,
): AsyncGenerator<MessageEvent> {
  try {
    for await (const event of events) yield passedThroughEvent(event, id, model);
  } catch (error) {
    if (error instanceof RequestAbortedError) return;
    const failure =
      error instanceof AppError
        ? error
        : new UpstreamError('upstream_error', 'The answer could not be completed.', {
            cause: error,
          });
    logStreamFailure(log, failure);
    yield { event: 'error', data: anthropicErrorBody(failure, requestId) };
  }
}

/** One message: routed, then passed through, or translated and answered by the chat turn. */
async function answer(
  dependencies: MessagesRoutesDependencies,
  body: MessagesRequestBody,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const { routing, models, passthroughOf, credentialWatch } = dependencies;
  void reply.header('request-id', request.id);
  const call = messagesCallOf(body);
  // A stream also ends when its key is revoked or expires (a last event carrying the error).
  const guard = call.stream ? guardAnswer(reply, credentialWatch, principalOf(request)) : null;
  const signal = guard?.signal ?? clientGoneSignal(reply);
  const routed = await routing.resolveChatModel({
    caller: principalOf(request),
    requestedModel: call.requestedModel,
    messages: call.messages,
    maxTokens: call.maxTokens,
    conversationId: call.conversationId,
    signal,
    capabilities: call.needs.map((need) => need.capability),
  });
  const definition = models.definitionOf(models.resolveChatModelName(routed.model));
  requireCapabilities(definition, call.needs);
  // A client written for Claude asks for Claude's limits: the catalog's maximum caps them.
  const maxTokens = Math.min(routed.maxTokens ?? call.maxTokens, definition.maxTokens);
  // A turn to store is the chat module's, whatever the model: it is translated.
  const passthrough = call.persist ? null : passthroughOf(definition);
  if (passthrough !== null) {
    const { version, beta } = forwardedHeaders(request.headers);
    const passed = { body, maxTokens, version, beta, signal };
    const id = newId('msg');
    if (guard !== null) {
      const errorEvent = (error: AppError): MessageEvent => ({
        event: 'error',
        data: anthropicErrorBody(error, request.id),
      });
      const events = await openGuarded<MessageEvent>(
        async () =>
          passedThroughEvents(
            await passthrough.openStream(passed),
            id,
            definition.name,
            request.id,
            request.log,
          ),
        guard,
        errorEvent,
      );
      void sendEventStream(reply, anthropicEventStream(events));
      return;
    }
    const { message } = await passthrough.create(passed);
    void reply
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(passedThroughMessage(message, id, definition.name)));
    return;
  }
  refuseUntranslatable(call, definition.name);
  await translated(dependencies, call, definition.name, maxTokens, signal, request, reply, guard);
}

/** A translated message: the chat module's turn, answered in Anthropic's shapes. */
async function translated(
  { chat }: MessagesRoutesDependencies,
  call: MessagesCall,
  model: string,
  maxTokens: number,
  signal: AbortSignal,
  request: FastifyRequest,
  reply: FastifyReply,
  guard: ReturnType<typeof guardAnswer> | null,
): Promise<void> {
  const principal = principalOf(request);
  const chatRequest: ChatRequest = {
    accountId: principal.accountId,
    apiKeyId: principal.keyId,
    userId: call.userId,
    conversationId: call.conversationId,
    persist: call.persist,
    messages: call.messages,
    model,
    temperature: call.temperature,
    maxTokens,
    maxTokensParam: 'max_tokens',
    params: call.params,
    signal,
  };
  if (guard !== null) {
    const events = await openGuarded<ChatStreamEvent>(
      () => chat.openStream(chatRequest),
      guard,
      (error) => ({ type: 'error', error }),
    );
    void sendEventStream(
      reply,
      anthropicEventStream(translatedEvents(events, request.id, request.log)),
    );
    return;
  }
  const outcome = await chat.complete(chatRequest);
  if (outcome.conversationId !== null) {
    void reply.header('x-conversation-id', outcome.conversationId);
  }
  void reply.type('application/json; charset=utf-8').send(JSON.stringify(messageBody(outcome)));
}
