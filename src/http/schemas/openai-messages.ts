// OpenAI's Chat Completions shapes beyond plain text, as request and answer schemas: content parts
// (text, image_url, input_audio, file), tool calls, function tools, tool_choice and
// response_format — the shapes of ../shared/reference/openai-chat-completions.schemas.json, each
// value bounded (the HTTP layer also bounds every body's nesting, src/validation/input-values.ts).
// Shared by the routes that take or show messages (/v1/chat, a conversation's messages).
import Type, { type Static } from 'typebox';
import { maxSchemaText } from '../../models/openai-messages.js';

/** Longest text a message's content (or one text part of it) may hold, as elsewhere. */
export const maxTextLength = 1_000_000;

/**
 * Longest inline data a part may carry (an image's data URL, audio's or a file's base64): the
 * schema's outer bound; what a stored turn may keep is the configured, smaller
 * `chat.max_stored_data_url_bytes` (413 beyond it), and the body limit bounds them all.
 */
export const maxInlineDataLength = 100 * 1024 * 1024;

/** Most content parts one message may have. */
export const maxContentParts = 100;

/** Most tools one request may offer (OpenAI's own limit), and tool calls one message may hold. */
export const maxTools = 128;

/** A function's or a response format's name, as OpenAI accepts it. */
const FunctionName = (description: string) =>
  Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-zA-Z0-9_-]+$', description });

export const TextPartSchema = Type.Object(
  { type: Type.Literal('text'), text: Type.String({ maxLength: maxTextLength }) },
  { additionalProperties: false },
);

export const ImagePartSchema = Type.Object(
  {
    type: Type.Literal('image_url'),
    image_url: Type.Object(
      {
        url: Type.String({
          minLength: 1,
          maxLength: maxInlineDataLength,
          description:
            'An `http(s)` URL (stored as the URL; the service does not fetch it), or a `data:` URL (stored when at most `chat.max_stored_data_url_bytes`, else 413).',
        }),
        detail: Type.Optional(
          Type.Union([Type.Literal('auto'), Type.Literal('low'), Type.Literal('high')]),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const AudioPartSchema = Type.Object(
  {
    type: Type.Literal('input_audio'),
    input_audio: Type.Object(
      {
        data: Type.String({ maxLength: maxInlineDataLength, description: 'Base64 audio.' }),
        format: Type.String({ minLength: 1, maxLength: 16, description: '`wav` or `mp3`.' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const FilePartSchema = Type.Object(
  {
    type: Type.Literal('file'),
    file: Type.Object(
      {
        file_data: Type.Optional(
          Type.String({ maxLength: maxInlineDataLength, description: 'A base64 data URL.' }),
        ),
        file_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
        filename: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const ContentPartSchema = Type.Union(
  [TextPartSchema, ImagePartSchema, AudioPartSchema, FilePartSchema],
  { description: 'An OpenAI content part: text, image_url, input_audio or file.' },
);

export const ToolCallSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 256 }),
    type: Type.Literal('function'),
    function: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 256 }),
        arguments: Type.String({
          maxLength: maxTextLength,
          description: 'The arguments as the JSON text the model wrote.',
        }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, description: "A function call, in OpenAI's shape." },
);

export { maxSchemaText };

/** A JSON Schema given by the client (a function's parameters, a response format's schema). */
const ClientJsonSchema = (description: string) =>
  Type.Record(Type.String({ maxLength: 256 }), Type.Unknown(), {
    maxProperties: 256,
    description: `${description} At most ${maxSchemaText} characters as JSON text, nested at most as deep as any body allows.`,
  });

export const FunctionToolSchema = Type.Object(
  {
    type: Type.Literal('function'),
    function: Type.Object(
      {
        name: FunctionName('The function’s name: letters, digits, `_` and `-`, at most 64.'),
        description: Type.Optional(Type.String({ maxLength: 100_000 })),
        parameters: Type.Optional(ClientJsonSchema('The arguments, as a JSON Schema object.')),
        strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const ToolsSchema = Type.Array(FunctionToolSchema, {
  maxItems: maxTools,
  description: "Functions the model may call (OpenAI's `tools`).",
});

export const ToolChoiceSchema = Type.Union(
  [
    Type.Literal('none'),
    Type.Literal('auto'),
    Type.Literal('required'),
    Type.Object(
      {
        type: Type.Literal('function'),
        function: Type.Object(
          { name: FunctionName('One of `tools`.') },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  ],
  { description: "OpenAI's `tool_choice`: `none`, `auto`, `required`, or one function." },
);

export const ResponseFormatSchema = Type.Union(
  [
    Type.Object({ type: Type.Literal('text') }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('json_object') }, { additionalProperties: false }),
    Type.Object(
      {
        type: Type.Literal('json_schema'),
        json_schema: Type.Object(
          {
            name: FunctionName('The format’s name: letters, digits, `_` and `-`, at most 64.'),
            description: Type.Optional(Type.String({ maxLength: 100_000 })),
            schema: Type.Optional(ClientJsonSchema('The answer’s JSON Schema.')),
            strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  ],
  { description: "OpenAI's `response_format`: `text`, `json_object` or `json_schema`." },
);

export type ContentPartBody = Static<typeof ContentPartSchema>;
export type ToolCallBody = Static<typeof ToolCallSchema>;
