// Conversations: list, create, read, change, delete; their history; template assignment; and the
// per-conversation feedback summary.
import Type from 'typebox';
import { reservedKeysNote } from '../../validation/safe-keys.js';
import { access } from '../../auth/scopes.js';
import type { Services } from '../../services.js';
import type { Conversation, StoredMessage } from '../../conversations/conversation.js';
import { InvalidParameterError, MissingParameterError } from '../../errors/app-error.js';
import {
  commonParameters,
  LimitSchema,
  NullableTimestamp,
  OffsetSchema,
  ModelNameSchema,
  PageSchema,
  Timestamp,
  UserIdSchema,
} from '../schemas/common.js';
import { principalOf, type App } from '../types.js';

/** The spec's common `user_id` on an operation on one conversation. */
const ConversationUserSchema = Type.Optional(
  UserIdSchema(
    "The spec's common parameter: when given, it must be the conversation's user, else 404 `not_found` (a conversation created without a user accepts any).",
  ),
);
/** The query of a read or a delete of one conversation: its optional `user_id`. */
const ConversationUserQuery = Type.Object(
  { user_id: ConversationUserSchema },
  { description: 'Query parameters not listed here are ignored.' },
);
/** What an operation on one conversation says about `user_id`. */
const ownerNote =
  "A `user_id` that is not the conversation's user answers 404 `not_found`, as another account's conversation does.";

const Status = Type.Union([Type.Literal('active'), Type.Literal('archived')]);
const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: `Free-form JSON object of your own. At any depth, ${reservedKeysNote}`,
});
const ConversationIdParams = Type.Object({ conversation_id: Type.String({ maxLength: 100 }) });

const ConversationEntrySchema = Type.Object({
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

const ConversationDetailSchema = Type.Object({
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
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system')]),
  content: Type.String(),
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

const FeedbackSummarySchema = Type.Object({
  conversation_id: Type.String(),
  total_messages: Type.Integer(),
  messages_with_feedback: Type.Integer(),
  positive_feedback: Type.Integer({ description: 'thumbs_up, and ratings of 4 or 5.' }),
  negative_feedback: Type.Integer({ description: 'thumbs_down, and ratings of 1 or 2.' }),
  average_rating: Type.Number({
    description:
      'The mean feedback_value of all feedback (thumbs_up 1, thumbs_down -1, rating 1–5); 0 without feedback.',
  }),
  feedback_details: Type.Array(
    Type.Object({
      feedback_id: Type.String(),
      message_id: Type.String(),
      user_id: Type.String(),
      feedback_type: Type.String(),
      feedback_value: Type.Number(),
      comment: Type.Union([Type.String(), Type.Null()]),
      timestamp: NullableTimestamp('When the feedback was last given.'),
    }),
  ),
});

export function messageToJson(message: StoredMessage) {
  return {
    id: message.id,
    role: message.role,
    content: message.content,
    created_at: message.createdAt,
    model: message.model,
    finish_reason: message.finishReason,
    latency_ms: message.latencyMs,
    usage:
      message.promptTokens === null || message.completionTokens === null
        ? null
        : {
            prompt_tokens: message.promptTokens,
            completion_tokens: message.completionTokens,
            total_tokens: message.promptTokens + message.completionTokens,
          },
  };
}

export function conversationRoutes(app: App, services: Services): void {
  const entry = (conversation: Conversation) => ({
    id: conversation.id,
    title: conversation.title,
    created_at: conversation.createdAt,
    updated_at: conversation.updatedAt,
    message_count: conversation.messageCount,
    status: conversation.status,
    user_id: conversation.userId,
  });
  const detail = (conversation: Conversation) => ({
    ...entry(conversation),
    description: conversation.description,
    system_prompt: services.conversations.systemPromptOf(conversation),
    model: conversation.model ?? services.models.defaultModel,
    template: conversation.templateName,
    template_variables: conversation.templateVariables,
    metadata: conversation.metadata,
  });

  app.get(
    '/v1/conversations',
    {
      config: { access: access.scopes('conversations:read') },
      schema: {
        operationId: 'listConversations',
        tags: ['Conversations'],
        summary: "List a user's conversations",
        description:
          "The conversations of `user_id` in the key's account. `all_users=true` instead of `user_id` lists every conversation of the account, whatever its user (those created without one too); each entry's `user_id` says whose it is. One of the two is required (neither: 400 `missing_parameter` naming `user_id`; both: 400 `invalid_parameter` naming `all_users`).",
        querystring: Type.Object(
          {
            user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
            all_users: Type.Optional(
              Type.Boolean({
                description:
                  "true: every user's conversations in the account, instead of one user's.",
              }),
            ),
            limit: LimitSchema(),
            offset: OffsetSchema(),
            status: Type.Union(
              [Type.Literal('active'), Type.Literal('archived'), Type.Literal('all')],
              { default: 'active' },
            ),
            order: Type.Union([Type.Literal('desc'), Type.Literal('asc')], {
              default: 'desc',
              description: 'By updated_at.',
            }),
          },
          { description: 'Query parameters not listed here are ignored.' },
        ),
        response: {
          200: PageSchema('conversations', ConversationEntrySchema),
        },
      },
    },
    async (request) => {
      const { user_id: userId, all_users: allUsers, limit, offset, status, order } = request.query;
      if (allUsers === true && userId !== undefined) {
        throw new InvalidParameterError(
          'all_users',
          'Give either user_id (one user’s conversations) or all_users=true (every user’s), not both.',
        );
      }
      if (allUsers !== true && userId === undefined) {
        throw new MissingParameterError(
          'user_id',
          "'user_id' is required (or all_users=true for every user's conversations).",
        );
      }
      const page = await services.conversations.list(principalOf(request).accountId, {
        userId: userId ?? null,
        limit,
        offset,
        status,
        order,
      });
      return { conversations: page.conversations.map(entry), total: page.total, limit, offset };
    },
  );

  app.post(
    '/v1/conversations',
    {
      config: { access: access.scopes('conversations:write') },
      schema: {
        operationId: 'createConversation',
        tags: ['Conversations'],
        summary: 'Create a conversation',
        description:
          'Every field is optional. Without `user_id` the conversation belongs to no user: it is reachable by id but appears in no user listing.',
        body: Type.Object(
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
        ),
        response: { 201: ConversationDetailSchema },
      },
      // Every field is optional, so no body at all is an empty conversation too.
      preValidation: (request, _reply, done) => {
        request.body ??= {};
        done();
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const conversation = await services.conversations.create(principalOf(request).accountId, {
        userId: body.user_id ?? null,
        title: body.title,
        description: body.description,
        model: body.model,
        systemPrompt: body.system_prompt,
        metadata: body.metadata,
      });
      return reply.code(201).send(detail(conversation));
    },
  );

  app.get(
    '/v1/conversations/:conversation_id',
    {
      config: { access: access.scopes('conversations:read') },
      schema: {
        operationId: 'getConversation',
        tags: ['Conversations'],
        summary: 'Get a conversation',
        description: ownerNote,
        params: ConversationIdParams,
        querystring: ConversationUserQuery,
        response: { 200: ConversationDetailSchema },
      },
    },
    async (request) =>
      detail(
        await services.conversations.get(
          principalOf(request).accountId,
          request.params.conversation_id,
          request.query.user_id,
        ),
      ),
  );

  app.patch(
    '/v1/conversations/:conversation_id',
    {
      config: { access: access.scopes('conversations:write') },
      schema: {
        operationId: 'updateConversation',
        tags: ['Conversations'],
        summary: 'Change a conversation',
        description:
          'Title, description, status (active or archived), metadata (replaced whole) and `model`, the chat model of its next turns (a catalog chat model, else 400). ' +
          ownerNote,
        params: ConversationIdParams,
        body: Type.Object(
          {
            ...commonParameters(),
            title: Type.Optional(Type.String({ maxLength: 500 })),
            description: Type.Optional(Type.String({ maxLength: 5000 })),
            status: Type.Optional(Status),
            metadata: Type.Optional(Metadata),
            model: Type.Optional(
              ModelNameSchema('The chat model of the conversation’s next turns.'),
            ),
            user_id: ConversationUserSchema,
          },
          { additionalProperties: false },
        ),
        response: { 200: ConversationDetailSchema },
      },
    },
    async (request) =>
      detail(
        await services.conversations.update(
          principalOf(request).accountId,
          request.params.conversation_id,
          request.body,
          request.body.user_id,
        ),
      ),
  );

  app.delete(
    '/v1/conversations/:conversation_id',
    {
      config: { access: access.scopes('conversations:write') },
      schema: {
        operationId: 'deleteConversation',
        tags: ['Conversations'],
        summary: 'Delete a conversation',
        description: `Deletes it with its messages and their feedback. ${ownerNote}`,
        params: ConversationIdParams,
        querystring: ConversationUserQuery,
        response: {
          200: Type.Object({ success: Type.Boolean(), message: Type.String(), id: Type.String() }),
        },
      },
    },
    async (request) => {
      const id = request.params.conversation_id;
      await services.conversations.delete(
        principalOf(request).accountId,
        id,
        request.query.user_id,
      );
      return { success: true, message: `Conversation '${id}' deleted.`, id };
    },
  );

  app.get(
    '/v1/conversations/:conversation_id/messages',
    {
      config: { access: access.scopes('chat:read') },
      schema: {
        operationId: 'listConversationMessages',
        tags: ['Conversations'],
        summary: 'Chat history of a conversation',
        description: ownerNote,
        params: ConversationIdParams,
        querystring: Type.Object(
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
        ),
        response: {
          200: Type.Object({
            conversation_id: Type.String(),
            ...PageSchema('messages', MessageSchema).properties,
          }),
        },
      },
    },
    async (request) => {
      const { limit, offset, order, user_id: userId } = request.query;
      const page = await services.conversations.messages(
        principalOf(request).accountId,
        request.params.conversation_id,
        { limit, offset, order },
        userId,
      );
      return {
        conversation_id: request.params.conversation_id,
        messages: page.messages.map(messageToJson),
        total: page.total,
        limit,
        offset,
      };
    },
  );

  app.post(
    '/v1/conversations/:conversation_id/template',
    {
      config: { access: access.scopes('conversations:write') },
      schema: {
        operationId: 'assignTemplate',
        tags: ['Conversations', 'Templates'],
        summary: 'Assign a prompt template to a conversation',
        description:
          'The rendered template becomes the conversation’s system prompt from its next turn on; a variable not given takes its default (`GET /v1/templates/{template_name}`). Unknown template → 400 `unknown_template`; an unknown variable → 400 `invalid_parameter`, a missing required one (only templates of the config file have them) → 400 `missing_parameter`, both naming `variables.<name>`. ' +
          ownerNote,
        params: ConversationIdParams,
        body: Type.Object(
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
        ),
        response: {
          200: Type.Object({
            status: Type.Literal('success'),
            conversation_id: Type.String(),
            template: Type.String(),
          }),
        },
      },
    },
    async (request) => {
      const conversation = await services.conversations.assignTemplate(
        principalOf(request).accountId,
        request.params.conversation_id,
        request.body.template_name,
        request.body.variables ?? {},
        request.body.user_id,
      );
      return {
        status: 'success' as const,
        conversation_id: conversation.id,
        template: conversation.templateName ?? request.body.template_name,
      };
    },
  );

  app.get(
    '/v1/conversations/:conversation_id/feedback',
    {
      config: { access: access.scopes('conversations:read') },
      schema: {
        operationId: 'getFeedbackSummary',
        tags: ['Feedback'],
        summary: 'Feedback summary of a conversation',
        description: ownerNote,
        params: ConversationIdParams,
        querystring: ConversationUserQuery,
        response: { 200: FeedbackSummarySchema },
      },
    },
    async (request) => {
      // The summary is anyone's who may read the conversation: with a user_id, only its user's.
      if (request.query.user_id !== undefined) {
        await services.conversations.get(
          principalOf(request).accountId,
          request.params.conversation_id,
          request.query.user_id,
        );
      }
      const summary = await services.feedback.summary(
        principalOf(request).accountId,
        request.params.conversation_id,
      );
      return {
        conversation_id: summary.conversationId,
        total_messages: summary.totalMessages,
        messages_with_feedback: summary.messagesWithFeedback,
        positive_feedback: summary.positiveFeedback,
        negative_feedback: summary.negativeFeedback,
        average_rating: summary.averageRating,
        feedback_details: summary.details.map((feedback) => ({
          feedback_id: feedback.id,
          message_id: feedback.messageId,
          user_id: feedback.userId,
          feedback_type: feedback.feedbackType,
          feedback_value: feedback.feedbackValue,
          comment: feedback.comment,
          timestamp: feedback.updatedAt,
        })),
      };
    },
  );
}
