// The HTTP shapes of conversations: their query strings, bodies and answers, and the message of a
// conversation's history.
import Type from 'typebox';
import {
  commonParameters,
  LimitSchema,
  ModelNameSchema,
  OffsetSchema,
  PageSchema,
  Timestamp,
  UserIdSchema,
} from '../../http/schemas/common.js';
import { reservedKeysNote } from '../../validation/safe-keys.js';
import { ContentPartSchema, ToolCallSchema } from '../../http/schemas/openai-messages.js';

/** The spec's common `user_id` on an operation on one conversation. */
export const ConversationUserSchema = Type.Optional(
  UserIdSchema(
    "The spec's common parameter: when given, it must be the conversation's user, else 404 `not_found` (a conversation created without a user accepts any).",
  ),
);
/** The query of a read or a delete of one conversation: its optional `user_id`. */
export const ConversationUserQuery = Type.Object(
  { user_id: ConversationUserSchema },
  { description: 'Query parameters not listed here are ignored.' },
);
/** What an operation on one conversation says about `user_id`. */
export const ownerNote =
  "A `user_id` that is not the conversation's user answers 404 `not_found`, as another account's conversation does.";

const Status = Type.Union([Type.Literal('active'), Type.Literal('archived')]);
const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: `Free-form JSON object of your own. At any depth, ${reservedKeysNote}`,
});
export const ConversationIdParams = Type.Object({
  conversation_id: Type.String({ maxLength: 100 }),
});

export const ConversationEntrySchema = Type.Object({
  id: Type.String({ description: 'conv_…' }),
  title: Type.String(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  message_count: Type.Integer({
    description: 'Every stored message, the user’s and the assistant’s.',
  }),
  status: Status,
  user_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The user the conversation belongs to; null: none (created without one).',
  }),
});

export const ConversationDetailSchema = Type.Object({
  ...ConversationEntrySchema.properties,
  description: Type.String(),
  system_prompt: Type.Union([Type.String(), Type.Null()], {
    description:
      'The system prompt the model sees: the assigned template, rendered, or the one given at creation.',
  }),
  model: Type.Union([Type.String(), Type.Null()], {
    description: "The conversation's model, or the default model when it has none.",
  }),
  template: Type.Union([Type.String(), Type.Null()]),
  template_variables: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()]),
  metadata: Metadata,
});

const MessageSchema = Type.Object({
  id: Type.String({ description: 'msg_…' }),
  role: Type.Union([
    Type.Literal('user'),
    Type.Literal('assistant'),
    Type.Literal('system'),
    Type.Literal('tool'),
  ]),
  content: Type.String({
    description: 'The text: the string content as sent, or its text parts joined.',
  }),
  content_parts: Type.Optional(
    Type.Array(ContentPartSchema, {
      description:
        'The content as sent, in OpenAI content parts, when it held more than text (an image as its URL or data URL, audio, a file).',
    }),
  ),
  tool_calls: Type.Optional(
    Type.Array(ToolCallSchema, {
      description: "An assistant message's function calls, in OpenAI's shape.",
    }),
  ),
  tool_call_id: Type.Optional(
    Type.String({ description: 'A `tool` message: the id of the call it answers.' }),
  ),
  name: Type.Optional(Type.String({ description: "OpenAI's participant name, when given." })),
  created_at: Timestamp(),
  model: Type.Union([Type.String(), Type.Null()]),
  finish_reason: Type.Union([Type.String(), Type.Null()]),
  latency_ms: Type.Union([Type.Integer(), Type.Null()]),
  usage: Type.Union([
    Type.Object({
      prompt_tokens: Type.Integer(),
      completion_tokens: Type.Integer(),
      total_tokens: Type.Integer(),
    }),
    Type.Null(),
  ]),
});

export const ListConversationsQuery = Type.Object(
  {
    user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    all_users: Type.Optional(
      Type.Boolean({
        description: "true: every user's conversations in the account, instead of one user's.",
      }),
    ),
    limit: LimitSchema(),
    offset: OffsetSchema(),
    status: Type.Union([Type.Literal('active'), Type.Literal('archived'), Type.Literal('all')], {
      default: 'active',
    }),
    order: Type.Union([Type.Literal('desc'), Type.Literal('asc')], {
      default: 'desc',
      description: 'By updated_at.',
    }),
  },
  { description: 'Query parameters not listed here are ignored.' },
);

export const CreateConversationBody = Type.Object(
  {
    ...commonParameters(),
    user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    title: Type.Optional(Type.String({ maxLength: 500 })),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    model: Type.Optional(Type.String({ maxLength: 256 })),
    system_prompt: Type.Optional(Type.String({ maxLength: 100_000 })),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);

export const UpdateConversationBody = Type.Object(
  {
    ...commonParameters(),
    title: Type.Optional(Type.String({ maxLength: 500 })),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    status: Type.Optional(Status),
    metadata: Type.Optional(Metadata),
    model: Type.Optional(ModelNameSchema('The chat model of the conversation’s next turns.')),
    user_id: ConversationUserSchema,
  },
  { additionalProperties: false },
);

export const DeletedConversationSchema = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  id: Type.String(),
});

export const ListMessagesQuery = Type.Object(
  {
    user_id: ConversationUserSchema,
    limit: LimitSchema(50),
    offset: OffsetSchema(),
    order: Type.Union([Type.Literal('asc'), Type.Literal('desc')], {
      default: 'asc',
      description: 'asc: oldest first.',
    }),
  },
  { description: 'Query parameters not listed here are ignored.' },
);

export const MessagePageSchema = Type.Object({
  conversation_id: Type.String(),
  ...PageSchema('messages', MessageSchema).properties,
});

export const AssignTemplateBody = Type.Object(
  {
    ...commonParameters(),
    template_name: Type.String({ minLength: 1, maxLength: 64 }),
    variables: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 20_000 }), {
        maxProperties: 50,
        description: `Variable name → value (the template's variables only). ${reservedKeysNote}`,
      }),
    ),
    user_id: ConversationUserSchema,
  },
  { additionalProperties: false },
);

export const AssignedTemplateSchema = Type.Object({
  status: Type.Literal('success'),
  conversation_id: Type.String(),
  template: Type.String(),
});
