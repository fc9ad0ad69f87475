// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API, so that Anthropic's
// clients (and the tools built on them) work against the platform's root URL with a platform key
// (`x-api-key` as they send it, or `Authorization: Bearer`). Any chat model of the catalog
// answers: a model of the `anthropic` provider receives the request as sent (pass-through,
// ../../models/providers/anthropic-passthrough.ts), any other through the chat module's turn as
// /chat/completions does; both through the chat module's turn handler, the dialect being
// anthropic-messages-dialect.ts (its translation split by job in anthropic-*.ts). Stateless, but
// for the platform's extensions `user_id` and `conversation_id`, which store the turn in a
// conversation as /chat/completions does (then the request is translated whatever the model).
// Errors, on these routes only, are in Anthropic's shape.
import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { sendError } from '../../http/error-handler.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import type { App } from '../../http/types.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { TurnHandler } from '../chat/turn-handler.routes.js';
import type { TurnDialect } from '../chat/turn-dialect.js';
import { countedTurns, translatePrompt } from './anthropic-call.js';
import { anthropicErrorBody } from './anthropic-errors.js';
import type { MessagesTurn } from './anthropic-messages-dialect.js';
import type { MessagesRequestBody, PromptBody } from './anthropic-request.js';
import {
  AnthropicErrorSchema,
  CountTokensRequestSchema,
  CountTokensSchema,
  MessageSchema,
  MessagesRequestSchema,
} from './messages.schemas.js';

export type MessagesPlugin = FeaturePlugin;

export interface MessagesRoutesDependencies {
  /** The chat module's turn handler: routing, the key's watch over a stream, the call. */
  readonly turns: TurnHandler;
  /** The Messages dialect (translated, or passed through to an `anthropic` model). */
  readonly dialect: TurnDialect<MessagesRequestBody, MessagesTurn>;
  /** The catalog: which model a count_tokens request names, and its token counter. */
  readonly models: Pick<ModelRegistry, 'resolveChatModelName' | 'chatModel'>;
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
      const { turns, dialect } = dependencies;
      void reply.header('request-id', request.id);
      await turns.answer(dialect, request.body as MessagesRequestBody, request, reply);
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
