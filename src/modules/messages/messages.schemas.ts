// The HTTP shapes of Anthropic's Messages API: the /v1/messages and /v1/messages/count_tokens
// requests, the message and count answers, and Anthropic's error body. Blocks and fields the
// platform does not translate are accepted here (a model of the `anthropic` provider receives
// them as sent) and refused by the translation for any other model.
import Type from 'typebox';
import { maxTokensLimit } from '../../http/schemas/common.js';

/** The largest string a block carries (base64 image or PDF data). */
const maxDataChars = 20_000_000;
const maxTextChars = 1_000_000;

/** An image or document's source: checked per type by the translation. */
const Source = Type.Object(
  {
    type: Type.String({ maxLength: 32, description: 'base64, url, text, file…' }),
    media_type: Type.Optional(Type.String({ maxLength: 128 })),
    data: Type.Optional(Type.String({ maxLength: maxDataChars })),
    url: Type.Optional(Type.String({ maxLength: 8192 })),
  },
  { additionalProperties: true },
);

const TextBlock = Type.Object(
  { type: Type.Literal('text'), text: Type.String({ maxLength: maxTextChars }) },
  { additionalProperties: true },
);

const ImageBlock = Type.Object(
  { type: Type.Literal('image'), source: Source },
  { additionalProperties: true },
);

const DocumentBlock = Type.Object(
  {
    type: Type.Literal('document'),
    source: Source,
    title: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  },
  { additionalProperties: true },
);

const knownBlockTypes = ['text', 'image', 'document', 'tool_use', 'tool_result'];

/** Another block type (thinking, server tools' blocks…): passed through to Anthropic only. */
const OtherBlock = Type.Object(
  { type: Type.String({ maxLength: 64, not: { enum: knownBlockTypes } }) },
  { additionalProperties: true },
);

const ToolResultBlock = Type.Object(
  {
    type: Type.Literal('tool_result'),
    tool_use_id: Type.String({ minLength: 1, maxLength: 256 }),
    content: Type.Optional(
      Type.Union([
        Type.String({ maxLength: maxTextChars }),
        Type.Array(Type.Union([TextBlock, ImageBlock, DocumentBlock, OtherBlock]), {
          maxItems: 100,
        }),
      ]),
    ),
    is_error: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);

/** A JSON object the client names the keys of (a tool's input, a JSON Schema). */
const JsonObject = Type.Object({}, { additionalProperties: true });

const ToolUseBlock = Type.Object(
  {
    type: Type.Literal('tool_use'),
    id: Type.String({ minLength: 1, maxLength: 256 }),
    name: Type.String({ minLength: 1, maxLength: 128 }),
    input: JsonObject,
  },
  { additionalProperties: true },
);

const Block = Type.Union([
  TextBlock,
  ImageBlock,
  DocumentBlock,
  ToolUseBlock,
  ToolResultBlock,
  OtherBlock,
]);

const Message = Type.Object({
  role: Type.String({ maxLength: 32, description: 'user or assistant.' }),
  content: Type.Union([
    Type.String({ maxLength: maxTextChars }),
    Type.Array(Block, { maxItems: 100 }),
  ]),
});

const Tool = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    type: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "`custom` (the default) for a function the client runs; Anthropic's server tools are passed through to Anthropic models only.",
      }),
    ),
    description: Type.Optional(Type.String({ maxLength: 100_000 })),
    input_schema: Type.Optional(JsonObject),
  },
  { additionalProperties: true },
);

const ToolChoice = Type.Object(
  {
    type: Type.Union([
      Type.Literal('auto'),
      Type.Literal('any'),
      Type.Literal('tool'),
      Type.Literal('none'),
    ]),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    disable_parallel_tool_use: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);

/** The fields of a prompt, shared by /v1/messages and /v1/messages/count_tokens. */
const promptFields = {
  model: Type.String({
    minLength: 1,
    maxLength: 256,
    description:
      'A chat model of the catalog (`GET /v1/models`), or `auto` to let the router choose. A model of the `anthropic` provider is passed through; any other is translated.',
  }),
  messages: Type.Array(Message, { minItems: 1, maxItems: 1000 }),
  system: Type.Optional(
    Type.Union([
      Type.String({ maxLength: maxTextChars }),
      Type.Array(TextBlock, { maxItems: 100 }),
    ]),
  ),
  tools: Type.Optional(Type.Array(Tool, { maxItems: 128 })),
  tool_choice: Type.Optional(ToolChoice),
  thinking: Type.Optional(
    Type.Object({ type: Type.String({ maxLength: 32 }) }, { additionalProperties: true }),
  ),
  user_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      description:
        'Extension: store the turn for this user (then the request is translated, even for an Anthropic model); ignored by count_tokens.',
    }),
  ),
  conversation_id: Type.Optional(
    Type.String({
      maxLength: 100,
      description:
        'Extension: continue this stored conversation (as `user_id`); ignored by count_tokens.',
    }),
  ),
  output_config: Type.Optional(
    Type.Object(
      {
        format: Type.Optional(
          Type.Union([
            Type.Object(
              { type: Type.String({ maxLength: 32 }), schema: Type.Optional(JsonObject) },
              { additionalProperties: true },
            ),
            Type.Null(),
          ]),
        ),
        effort: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
      },
      { additionalProperties: true },
    ),
  ),
};

export const MessagesRequestSchema = Type.Object(
  {
    ...promptFields,
    max_tokens: Type.Integer({
      minimum: 1,
      maximum: maxTokensLimit,
      description: "Required, as in Anthropic's API; capped at the model's maximum.",
    }),
    stop_sequences: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 16 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    metadata: Type.Optional(
      Type.Object(
        { user_id: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])) },
        { additionalProperties: true },
      ),
    ),
    stream: Type.Optional(Type.Boolean()),
  },
  {
    // Anthropic adds parameters often: a model of the `anthropic` provider receives them as
    // sent; the translation for other models refuses those it knows it cannot carry.
    additionalProperties: true,
  },
);

export const CountTokensRequestSchema = Type.Object(promptFields, { additionalProperties: true });

export const MessageSchema = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('message'),
    role: Type.Literal('assistant'),
    model: Type.String(),
    content: Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
    stop_reason: Type.Union([Type.String(), Type.Null()]),
    stop_sequence: Type.Union([Type.String(), Type.Null()]),
    usage: Type.Object(
      {
        input_tokens: Type.Integer(),
        output_tokens: Type.Integer(),
        cache_read_input_tokens: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

export const CountTokensSchema = Type.Object({ input_tokens: Type.Integer() });

/** Anthropic's error body, with the contract's `code` and `param` inside `error`. */
export const AnthropicErrorSchema = Type.Object({
  type: Type.Literal('error'),
  error: Type.Object(
    {
      type: Type.String({
        description:
          'invalid_request_error, authentication_error, permission_error, not_found_error, rate_limit_error, api_error or overloaded_error.',
      }),
      message: Type.String(),
      code: Type.String({ description: "The platform's error code." }),
      param: Type.Union([Type.String(), Type.Null()]),
    },
    { additionalProperties: true },
  ),
  request_id: Type.String(),
});
