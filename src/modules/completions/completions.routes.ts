// POST /chat/completions and /v1/chat/completions: OpenAI's Chat Completions format, so that the
// official clients work against root_url unchanged. With the extensions `user_id` or
// `conversation_id` the turn is stored in a conversation like /v1/chat; without them it is a
// stateless completion and nothing is stored. The dialect (the translation both ways) is
// chat-completions-dialect.ts, run by the chat module's turn handler; this is the HTTP side, as one
// Fastify plugin.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import type { App } from '../../http/types.js';
import type { TurnHandler } from '../chat/turn-handler.routes.js';
import { completionsDialect } from './chat-completions-dialect.js';
import { CompletionRequestSchema, CompletionSchema } from './completions.schemas.js';

export type CompletionsPlugin = FeaturePlugin;

export interface CompletionRoutesDependencies {
  /** The chat module's turn handler: the same turn as /v1/chat, stored or stateless. */
  readonly turns: TurnHandler;
  /** Larger than other routes' (images as data URLs): `chat.body_limit_bytes`. */
  readonly bodyLimit: { readonly bytes: number; readonly setting: string };
}

/** The Chat Completions routes, registered by app.ts like any Fastify plugin. */
export function completionsPlugin(dependencies: CompletionRoutesDependencies): CompletionsPlugin {
  return featurePlugin('completions', (app) => {
    completionRoutes(app, dependencies);
  });
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
        await dependencies.turns.answer(completionsDialect, request.body, request, reply);
        return reply;
      },
    );
  }
}
