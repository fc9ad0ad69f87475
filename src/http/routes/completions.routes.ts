// POST /chat/completions and /v1/chat/completions: OpenAI's Chat Completions format, so that the
// official clients work against root_url unchanged. With the extensions `user_id` or
// `conversation_id` the turn is stored in a conversation like /v1/chat; without them it is a
// stateless completion and nothing is stored.
import type { FastifyBaseLogger } from 'fastify';
import Type, { type Static } from 'typebox';
import { access } from '../../auth/scopes.js';
import type { ChatOutcome, ChatRequest, ChatStreamEvent } from '../../chat/chat-service.js';
import { InvalidParameterError } from '../../errors/app-error.js';
import type { ChatTurn, FinishReason } from '../../models/spec.js';
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

const TextPart = Type.Object({
  type: Type.Literal('text'),
  text: Type.String({ maxLength: 1_000_000 }),
});

const CompletionRequestSchema = Type.Object(
  {
    model: Type.Optional(
      Type.String({
        maxLength: 256,
        description:
          'Default: the default model. `auto` lets the router choose among the catalog’s chat models (routing policies apply); `model` in the answer names the one that answered.',
      }),
    ),
    messages: Type.Array(
      Type.Object({
        role: Type.String({ maxLength: 32, description: 'system, developer, user or assistant.' }),
        content: Type.Union([
          Type.String({ maxLength: 1_000_000 }),
          Type.Array(TextPart, { maxItems: 100 }),
          Type.Null(),
        ]),
        name: Type.Optional(Type.String({ maxLength: 256 })),
      }),
      { minItems: 1, maxItems: 1000 },
    ),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    stream_options: Type.Optional(
      Type.Union([Type.Object({ include_usage: Type.Optional(Type.Boolean()) }), Type.Null()]),
    ),
    temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
    max_tokens: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: maxTokensLimit }), Type.Null()]),
    ),
    max_completion_tokens: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: maxTokensLimit }), Type.Null()]),
    ),
    n: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1 }), Type.Null()])),
    user_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'Extension: store the turn for this user.',
      }),
    ),
    conversation_id: Type.Optional(
      Type.String({ maxLength: 100, description: 'Extension: continue this stored conversation.' }),
    ),
  },
  {
    // Clients send many optional OpenAI parameters (top_p, seed, store, …); unknown ones are
    // ignored rather than refused, so that existing clients keep working.
    additionalProperties: true,
  },
);

type CompletionRequest = Static<typeof CompletionRequestSchema>;

const CompletionSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer(),
    model: Type.String(),
    choices: Type.Array(
      Type.Object({
        index: Type.Integer(),
        message: Type.Object({
          role: Type.Literal('assistant'),
          content: Type.String(),
          refusal: Type.Null(),
        }),
        logprobs: Type.Null(),
        finish_reason: Type.String(),
      }),
    ),
    usage: Type.Object({
      prompt_tokens: Type.Integer(),
      completion_tokens: Type.Integer(),
      total_tokens: Type.Integer(),
    }),
    conversation_id: Type.Optional(Type.String()),
    message_id: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** OpenAI's finish reasons: a reason it lacks is reported as a normal stop. */
function openAiFinishReason(reason: FinishReason): 'stop' | 'length' | 'content_filter' {
  return reason === 'other' ? 'stop' : reason;
}

function turnsOf(body: CompletionRequest): ChatTurn[] {
  const { tools } = body as { tools?: unknown };
  if (Array.isArray(tools) && tools.length > 0) {
    throw new InvalidParameterError('tools', 'Tool calling is not supported by this service yet.');
  }
  return body.messages.map((message, index) => {
    const role = message.role === 'developer' ? 'system' : message.role;
    if (role !== 'system' && role !== 'user' && role !== 'assistant') {
      throw new InvalidParameterError(
        `messages[${index}].role`,
        `Role '${message.role}' is not supported; use system, developer, user or assistant.`,
      );
    }
    const content =
      typeof message.content === 'string'
        ? message.content
        : (message.content ?? []).map((part) => part.text).join('');
    return { role, content };
  });
}

function usageJson(outcome: ChatOutcome) {
  return {
    prompt_tokens: outcome.usage.promptTokens,
    completion_tokens: outcome.usage.completionTokens,
    total_tokens: outcome.usage.promptTokens + outcome.usage.completionTokens,
  };
}

/** OpenAI's chunk sequence: role first, content deltas, finish, optional usage; one id for all. */
async function* completionChunks(
  events: AsyncIterable<ChatStreamEvent>,
  includeUsage: boolean,
  log: FastifyBaseLogger,
): AsyncGenerator<unknown> {
  let id = '';
  let model = '';
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices,
    ...extra,
  });
  for await (const event of events) {
    switch (event.type) {
      case 'start':
        id = `chatcmpl-${event.messageId.slice('msg_'.length)}`;
        model = event.model.name;
        yield chunk(
          [
            {
              index: 0,
              delta: { role: 'assistant', content: '' },
              logprobs: null,
              finish_reason: null,
            },
          ],
          event.conversationId === null
            ? {}
            : { conversation_id: event.conversationId, message_id: event.messageId },
        );
        break;
      case 'delta':
        yield chunk([
          { index: 0, delta: { content: event.text }, logprobs: null, finish_reason: null },
        ]);
        break;
      case 'end':
        yield chunk([
          {
            index: 0,
            delta: {},
            logprobs: null,
            finish_reason: openAiFinishReason(event.outcome.finishReason),
          },
        ]);
        if (includeUsage) yield chunk([], { usage: usageJson(event.outcome) });
        break;
      case 'error':
        logStreamFailure(log, event.error);
        // OpenAI's clients raise an API error for a chunk carrying `error`.
        yield event.error.toBody();
        return;
    }
  }
}

export function completionRoutes(app: App, services: Services): void {
  for (const path of ['/chat/completions', '/v1/chat/completions']) {
    app.post(
      path,
      {
        config: { access: access.scopes('chat:write') },
        schema: {
          operationId:
            path === '/chat/completions' ? 'createChatCompletion' : 'createChatCompletionV1',
          tags: ['Chat'],
          summary: 'Chat completion (OpenAI-compatible)',
          description:
            "OpenAI's Chat Completions request and response, streamed (`chat.completion.chunk`, `stream_options.include_usage`, `data: [DONE]`) or not. `temperature` 0–2 as in OpenAI's API (Anthropic models accept at most 1). Extensions: `user_id` and/or `conversation_id` store the turn in a conversation (then `conversation_id` and `message_id` are added to the response — to the first chunk when streaming — and the `x-conversation-id` header is set on JSON answers); without them nothing is stored. Tool calling and `n` > 1 are not supported.",
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
        const body = request.body;
        const persist = body.user_id !== undefined || body.conversation_id !== undefined;
        const maxTokensParam =
          body.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
        const messages = turnsOf(body);
        // A stream also ends when its key is revoked or expires (a last chunk carrying the error).
        const guard =
          body.stream === true
            ? guardAnswer(reply, services.credentialWatch, principalOf(request))
            : null;
        const signal = guard?.signal ?? clientGoneSignal(reply);
        // `model: "auto"` is routed; routing policies may forbid a named model or cap max_tokens.
        const routed = await services.routing.resolveChatModel({
          caller: principalOf(request),
          requestedModel: body.model,
          messages,
          maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
          conversationId: body.conversation_id ?? null,
          signal,
        });
        const chatRequest: ChatRequest = {
          accountId: principalOf(request).accountId,
          apiKeyId: principalOf(request).keyId,
          userId: body.user_id ?? null,
          conversationId: body.conversation_id ?? null,
          persist,
          messages,
          model: routed.model,
          temperature: body.temperature ?? undefined,
          maxTokens: routed.maxTokens,
          maxTokensParam,
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
          const includeUsage = body.stream_options?.include_usage === true;
          return sendEventStream(
            reply,
            serverSentEvents(completionChunks(guarded, includeUsage, request.log), '[DONE]'),
          );
        }
        const outcome = await services.chat.complete(chatRequest);
        if (outcome.conversationId !== null)
          void reply.header('x-conversation-id', outcome.conversationId);
        return reply.type('application/json; charset=utf-8').send({
          id: `chatcmpl-${outcome.messageId.slice('msg_'.length)}`,
          object: 'chat.completion' as const,
          created: Math.floor(Date.now() / 1000),
          model: outcome.model.name,
          choices: [
            {
              index: 0,
              message: { role: 'assistant' as const, content: outcome.text, refusal: null },
              logprobs: null,
              finish_reason: openAiFinishReason(outcome.finishReason),
            },
          ],
          usage: usageJson(outcome),
          ...(outcome.conversationId === null
            ? {}
            : { conversation_id: outcome.conversationId, message_id: outcome.messageId }),
        });
      },
    );
  }
}
