// The HTTP shapes of OpenAI's Chat Completions: the request (with the extensions `user_id` and
// `conversation_id`) and the chat.completion answer.
import Type, { type Static } from 'typebox';
import { maxTokensLimit } from '../../http/schemas/common.js';
import {
  ContentPartSchema,
  maxContentParts,
  maxTextLength,
  maxTools,
  ResponseFormatSchema,
  ToolCallSchema,
  ToolChoiceSchema,
  ToolsSchema,
} from '../../http/schemas/openai-messages.js';

/** An assistant message's refusal, as a content part. */
const RefusalPart = Type.Object({
  type: Type.Literal('refusal'),
  refusal: Type.String({ maxLength: maxTextLength }),
});

const ContentPart = Type.Union([...ContentPartSchema.anyOf, RefusalPart]);

function nullable<T extends Parameters<typeof Type.Union>[0][number]>(schema: T) {
  return Type.Optional(Type.Union([schema, Type.Null()]));
}

/** A message of a Chat Completions request: every role's fields, checked per role by the dialect. */
const CompletionMessage = Type.Object({
  role: Type.String({
    maxLength: 32,
    description: 'system, developer, user, assistant or tool.',
  }),
  content: Type.Optional(
    Type.Union([
      Type.String({ maxLength: maxTextLength }),
      Type.Array(ContentPart, { maxItems: maxContentParts }),
      Type.Null(),
    ]),
  ),
  name: Type.Optional(Type.String({ maxLength: 256 })),
  tool_calls: Type.Optional(Type.Array(ToolCallSchema, { maxItems: maxTools })),
  tool_call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  refusal: nullable(Type.String({ maxLength: maxTextLength })),
});

export const CompletionRequestSchema = Type.Object(
  {
    model: Type.Optional(
      Type.String({
        maxLength: 256,
        description:
          'Default: the default model. `auto` lets the router choose among the catalog’s chat models that can serve the request (routing policies apply); `model` in the answer names the one that answered.',
      }),
    ),
    messages: Type.Array(CompletionMessage, { minItems: 1, maxItems: 1000 }),
    stream: nullable(Type.Boolean()),
    stream_options: nullable(
      Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, { additionalProperties: true }),
    ),
    temperature: nullable(Type.Number({ minimum: 0, maximum: 2 })),
    max_tokens: nullable(Type.Integer({ minimum: 1, maximum: maxTokensLimit })),
    max_completion_tokens: nullable(Type.Integer({ minimum: 1, maximum: maxTokensLimit })),
    n: nullable(
      Type.Integer({ minimum: 1, maximum: 1, description: 'Only 1: one choice per answer.' }),
    ),
    tools: Type.Optional(ToolsSchema),
    tool_choice: Type.Optional(ToolChoiceSchema),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    response_format: Type.Optional(ResponseFormatSchema),
    stop: nullable(
      Type.Union([
        Type.String({ maxLength: 1000 }),
        Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 4 }),
      ]),
    ),
    top_p: nullable(Type.Number({ minimum: 0, maximum: 1 })),
    seed: nullable(
      Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
    ),
    presence_penalty: nullable(Type.Number({ minimum: -2, maximum: 2 })),
    frequency_penalty: nullable(Type.Number({ minimum: -2, maximum: 2 })),
    logit_bias: nullable(
      Type.Record(Type.String({ maxLength: 20 }), Type.Number({ minimum: -100, maximum: 100 }), {
        maxProperties: 1024,
      }),
    ),
    logprobs: nullable(Type.Boolean()),
    top_logprobs: nullable(Type.Integer({ minimum: 0, maximum: 20 })),
    reasoning_effort: nullable(Type.String({ maxLength: 32 })),
    user: Type.Optional(Type.String({ maxLength: 256 })),
    metadata: nullable(
      Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), {
        maxProperties: 16,
      }),
    ),
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
    // OpenAI adds parameters often; fields the service does not know are passed unchanged to
    // OpenAI-compatible upstreams and ignored by the others (docs/message-model.md).
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
          content: Type.Union([Type.String(), Type.Null()]),
          refusal: Type.Union([Type.String(), Type.Null()]),
          tool_calls: Type.Optional(Type.Array(ToolCallSchema)),
        }),
        logprobs: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
        finish_reason: Type.String(),
      }),
    ),
    usage: Type.Object({
      prompt_tokens: Type.Integer(),
      completion_tokens: Type.Integer(),
      total_tokens: Type.Integer(),
      prompt_tokens_details: Type.Optional(Type.Object({ cached_tokens: Type.Integer() })),
      completion_tokens_details: Type.Optional(Type.Object({ reasoning_tokens: Type.Integer() })),
    }),
    system_fingerprint: Type.Optional(Type.String()),
    conversation_id: Type.Optional(Type.String()),
    message_id: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
