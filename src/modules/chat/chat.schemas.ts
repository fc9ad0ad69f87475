// The HTTP shapes of POST /v1/chat: the request (one turn of a stored conversation) and the JSON
// answer.
import Type, { type Static } from 'typebox';
import { maxTokensLimit } from '../../http/schemas/common.js';

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

export const ChatResponseSchema = Type.Object({
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

export type ChatRequestBody = Static<typeof ChatRequestSchema>;
