// POST /v1/chat: one turn of a stored conversation, answered as JSON or as the contract's
// Server-Sent Events (start, delta and tool_call…, end | error), as one Fastify plugin over the
// turn handler (its dialect is chat-dialect.ts). OpenAI's content parts, tool calls, tool results,
// tools, tool_choice and response_format are its extensions; its body limit is the chat routes'
// own (base64 images).
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import type { App } from '../../http/types.js';
import { chatDialect } from './chat-dialect.js';
import { ChatRequestSchema, ChatResponseSchema } from './chat.schemas.js';
import type { TurnHandler } from './turn-handler.routes.js';

export type ChatPlugin = FeaturePlugin;

export interface ChatRoutesDependencies {
  /** The turn handler: routing, the key's watch over a stream, the chat service's call. */
  readonly turns: TurnHandler;
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
      await dependencies.turns.answer(chatDialect, request.body, request, reply);
      return reply;
    },
  );
}
