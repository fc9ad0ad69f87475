// The HTTP shapes of POST /v1/chat: the request (one turn of a stored conversation, with OpenAI's
// content parts, tool calls and tool results, and its tools, tool_choice and response_format as
// extensions) and the JSON answer.
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
    Type.Literal('tool_calls'),
    Type.Literal('other'),
  ],
  {
    description:
      "'length': the answer reached max_tokens; 'tool_calls': the model asks for the calls in `tool_calls`.",
  },
);

export const ChatResponseSchema = Type.Object({
  message: Type.String({
    description: "The assistant's reply ('' when it only calls tools).",
  }),
  tool_calls: Type.Optional(
    Type.Array(ToolCallSchema, {
      description:
        "The function calls the model asks for (OpenAI's shape), when it made any (finish_reason `tool_calls`). Run them and send each result as a `tool` message with its `tool_call_id` in the next turn of the conversation.",
    }),
  ),
  conversation_id: Type.String(),
  message_id: Type.String({ description: 'The id of the stored reply (for feedback).' }),
  model: Type.String({
    description: 'The model that answered (a fallback if the requested one failed).',
  }),
  usage: UsageSchema,
  finish_reason: FinishReasonSchema,
  latency_ms: Type.Integer(),
});

/**
 * A message in OpenAI's shape. One object for every role, so that a mistake is reported for the
 * field that holds it; which fields a role takes is checked by the route (chat-messages.ts).
 */
export const ChatMessageSchema = Type.Object(
  {
    role: Type.Union([
      Type.Literal('system'),
      Type.Literal('user'),
      Type.Literal('assistant'),
      Type.Literal('tool'),
    ]),
    content: Type.Optional(
      Type.Union(
        [
          Type.String({ maxLength: maxTextLength }),
          Type.Array(ContentPartSchema, { minItems: 1, maxItems: maxContentParts }),
          Type.Null(),
        ],
        {
          description:
            "Text, or OpenAI content parts (a user message's may hold `image_url`, `input_audio` and `file` parts; others text only). Null or absent only on an assistant message with `tool_calls`.",
        },
      ),
    ),
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: "OpenAI's participant name." }),
    ),
    tool_calls: Type.Optional(
      Type.Array(ToolCallSchema, {
        minItems: 1,
        maxItems: maxTools,
        description: 'An assistant message: the function calls it made (history).',
      }),
    ),
    tool_call_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'A `tool` message (required there): the id of the call it answers.',
      }),
    ),
  },
  { additionalProperties: false },
);

export type ChatMessageBody = Static<typeof ChatMessageSchema>;

export const ChatRequestSchema = Type.Object(
  {
    messages: Type.Array(ChatMessageSchema, {
      minItems: 1,
      maxItems: 1000,
      description:
        "The new turn: an optional system message (overrides the conversation's system prompt for this turn), earlier assistant/user turns as history, and last the user's message — or, after an answer with `tool_calls`, one `tool` message per call.",
    }),
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
    tools: Type.Optional(ToolsSchema),
    tool_choice: Type.Optional(ToolChoiceSchema),
    response_format: Type.Optional(ResponseFormatSchema),
  },
  { additionalProperties: false },
);

export type ChatRequestBody = Static<typeof ChatRequestSchema>;
