// The HTTP shapes of OpenAI's Responses API: the create request (its outline: each input item's,
// tool's and format's rules by type are the dialect's), the path and list parameters, and the
// answers in outline (every answer is validated against OpenAI's own schemas by the tests).
import Type, { type Static } from 'typebox';
import { LimitSchema, maxTokensLimit } from '../../http/schemas/common.js';

/** The largest string a content part carries (a data URL of an image or a file). */
const maxPartChars = 20_000_000;
const maxText = 1_000_000;

function nullable<T extends Parameters<typeof Type.Union>[0][number]>(schema: T) {
  return Type.Optional(Type.Union([schema, Type.Null()]));
}

/** A JSON Schema object (tool parameters, a text format); bounded by the body's depth check. */
const JsonSchemaObject = Type.Object({}, { additionalProperties: true });

const InputPart = Type.Object(
  {
    type: Type.String({
      maxLength: 64,
      description: 'input_text, input_image, input_file; output_text or refusal (assistant).',
    }),
    text: Type.Optional(Type.String({ maxLength: maxText })),
    image_url: nullable(
      Type.String({
        maxLength: maxPartChars,
        description: 'An https URL, or a data URL (`data:image/png;base64,…`).',
      }),
    ),
    file_id: nullable(
      Type.String({ maxLength: 256, description: 'Not supported: there is no Files API.' }),
    ),
    file_data: Type.Optional(Type.String({ maxLength: maxPartChars })),
    file_url: Type.Optional(Type.String({ maxLength: 4096 })),
    filename: Type.Optional(Type.String({ maxLength: 256 })),
    detail: Type.Optional(Type.String({ maxLength: 16 })),
    refusal: Type.Optional(Type.String({ maxLength: maxText })),
  },
  { additionalProperties: true },
);

const InputItem = Type.Object(
  {
    type: nullable(
      Type.String({
        maxLength: 64,
        description:
          'message (the default), function_call or function_call_output; reasoning items are skipped.',
      }),
    ),
    id: nullable(Type.String({ maxLength: 256 })),
    role: Type.Optional(
      Type.String({ maxLength: 32, description: 'user, assistant, system or developer.' }),
    ),
    content: Type.Optional(
      Type.Union([Type.String({ maxLength: maxText }), Type.Array(InputPart, { maxItems: 100 })]),
    ),
    call_id: nullable(Type.String({ maxLength: 256 })),
    name: nullable(Type.String({ maxLength: 64 })),
    arguments: Type.Optional(Type.String({ maxLength: maxText, description: 'JSON text.' })),
    output: Type.Optional(
      Type.Union([
        Type.String({ maxLength: 10_485_760 }),
        Type.Array(InputPart, { maxItems: 100 }),
      ]),
    ),
    status: nullable(Type.String({ maxLength: 32 })),
  },
  { additionalProperties: true },
);

const Tool = Type.Object(
  {
    type: Type.String({
      maxLength: 64,
      description:
        "Only `function`: OpenAI's built-in tools (web_search, file_search, code_interpreter, computer_use_preview, mcp, image_generation, …) answer 400.",
    }),
    name: Type.Optional(Type.String({ maxLength: 64 })),
    description: nullable(Type.String({ maxLength: 100_000 })),
    parameters: nullable(JsonSchemaObject),
    strict: nullable(Type.Boolean()),
  },
  { additionalProperties: true },
);

const ToolChoice = Type.Union([
  Type.Literal('none'),
  Type.Literal('auto'),
  Type.Literal('required'),
  Type.Object(
    {
      type: Type.String({ maxLength: 64, description: 'Only `function`.' }),
      name: Type.Optional(Type.String({ maxLength: 64 })),
    },
    { additionalProperties: true },
  ),
]);

const TextFormat = Type.Object(
  {
    type: Type.String({ maxLength: 32, description: 'text, json_object or json_schema.' }),
    name: Type.Optional(Type.String({ maxLength: 64 })),
    description: Type.Optional(Type.String({ maxLength: 100_000 })),
    schema: Type.Optional(JsonSchemaObject),
    strict: nullable(Type.Boolean()),
  },
  { additionalProperties: true },
);

export const CreateResponseSchema = Type.Object(
  {
    model: Type.Optional(
      Type.String({
        maxLength: 256,
        description:
          'A chat model of the catalog (default: the default model); `auto` lets the router choose.',
      }),
    ),
    input: Type.Optional(
      Type.Union([Type.String({ maxLength: maxText }), Type.Array(InputItem, { maxItems: 1000 })]),
    ),
    instructions: nullable(Type.String({ maxLength: maxText })),
    tools: Type.Optional(Type.Array(Tool, { maxItems: 128 })),
    tool_choice: Type.Optional(ToolChoice),
    parallel_tool_calls: nullable(Type.Boolean()),
    text: nullable(
      Type.Object(
        {
          format: nullable(TextFormat),
          verbosity: nullable(Type.String({ maxLength: 16 })),
        },
        { additionalProperties: true },
      ),
    ),
    reasoning: nullable(
      Type.Object(
        {
          effort: nullable(Type.String({ maxLength: 32 })),
          summary: nullable(Type.String({ maxLength: 32 })),
        },
        { additionalProperties: true },
      ),
    ),
    temperature: nullable(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: nullable(Type.Number({ minimum: 0, maximum: 1 })),
    max_output_tokens: nullable(Type.Integer({ minimum: 1, maximum: maxTokensLimit })),
    store: nullable(Type.Boolean()),
    stream: nullable(Type.Boolean()),
    previous_response_id: nullable(Type.String({ maxLength: 256 })),
    conversation: nullable(
      Type.Union([
        Type.String({ maxLength: 100 }),
        Type.Object({ id: Type.String({ maxLength: 100 }) }, { additionalProperties: true }),
      ]),
    ),
    metadata: nullable(
      Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), {
        maxProperties: 16,
      }),
    ),
    user: Type.Optional(Type.String({ maxLength: 256 })),
    user_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: "Extension: the user whose conversation the chain is (as /v1/chat's).",
      }),
    ),
    conversation_id: Type.Optional(
      Type.String({
        maxLength: 100,
        description: 'Extension: continue this stored conversation (the same as `conversation`).',
      }),
    ),
    prompt: Type.Optional(
      Type.Unknown({
        description: 'Not supported (a prompt stored by OpenAI): any value but null answers 400.',
      }),
    ),
  },
  {
    // OpenAI adds fields often; the ones the service does not read are ignored (docs).
    additionalProperties: true,
  },
);

export type CreateResponseBody = Static<typeof CreateResponseSchema>;

export const ResponseIdParams = Type.Object({
  response_id: Type.String({ maxLength: 256, description: 'resp_…' }),
});

export const InputItemsQuery = Type.Object(
  {
    after: Type.Optional(
      Type.String({ maxLength: 256, description: 'The id of the item the page starts after.' }),
    ),
    limit: LimitSchema(20),
    order: Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' }),
  },
  { description: 'Query parameters not listed here (`include`) are ignored.' },
);

/** OpenAI's `Response`, in outline. */
export const ResponseSchema = Type.Object(
  {
    id: Type.String({ description: 'resp_…' }),
    object: Type.Literal('response'),
    created_at: Type.Integer(),
    status: Type.String({ description: 'completed, incomplete, in_progress or failed.' }),
    model: Type.String(),
    output: Type.Array(Type.Object({}, { additionalProperties: true }), {
      description: 'Message items (`output_text`, `refusal`) and `function_call` items.',
    }),
    usage: Type.Optional(Type.Object({}, { additionalProperties: true })),
    conversation: Type.Union([Type.Object({ id: Type.String() }), Type.Null()], {
      description: 'The conversation the response is stored in (null: not stored).',
    }),
  },
  { additionalProperties: true },
);

export const DeletedResponseSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('response.deleted'),
  deleted: Type.Literal(true),
});

export const ItemListSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(Type.Object({}, { additionalProperties: true })),
    first_id: Type.String(),
    last_id: Type.String(),
    has_more: Type.Boolean(),
  },
  { additionalProperties: true },
);
