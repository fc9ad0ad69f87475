// The HTTP shapes of OpenAI's Chat Completions: the request (with the extensions `user_id` and
// `conversation_id`) and the chat.completion answer.
import Type, { type Static } from 'typebox';
import { maxTokensLimit } from '../../http/schemas/common.js';

const TextPart = Type.Object({
  type: Type.Literal('text'),
  text: Type.String({ maxLength: 1_000_000 }),
});

export const CompletionRequestSchema = Type.Object(
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

export type CompletionRequest = Static<typeof CompletionRequestSchema>;

export const CompletionSchema = Type.Object(
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
