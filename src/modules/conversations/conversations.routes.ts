// Conversations over HTTP: list, create, read, change, delete; their history; template assignment;
// and, from feedback.routes.ts, the per-conversation feedback summary and feedback itself, as one
// Fastify plugin over the conversation and feedback services.
import { access } from '../../auth/scopes.js';
import { InvalidParameterError, MissingParameterError } from '../../errors/app-error.js';
import { PageSchema } from '../../http/schemas/common.js';
import { principalOf, type App } from '../../http/types.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { Conversation, StoredMessage } from './conversation.js';
import type { ConversationService } from './conversation-service.js';
import {
  AssignedTemplateSchema,
  AssignTemplateBody,
  ConversationDetailSchema,
  ConversationEntrySchema,
  ConversationIdParams,
  ConversationUserQuery,
  CreateConversationBody,
  DeletedConversationSchema,
  ListConversationsQuery,
  ListMessagesQuery,
  MessagePageSchema,
  ownerNote,
  UpdateConversationBody,
} from './conversations.schemas.js';
import type { FeedbackService } from './feedback-service.js';
import { feedbackSummaryRoutes, submitFeedbackRoutes } from './feedback.routes.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';

export type ConversationsPlugin = FeaturePlugin;

export interface ConversationRoutesDependencies {
  readonly conversations: ConversationService;
  readonly feedback: FeedbackService;
  /** A conversation without a model of its own shows the default one, as configured now. */
  readonly models: Pick<ModelRegistry, 'defaultModel'>;
}

/** The routes of conversations and feedback, registered by app.ts like any Fastify plugin. */
export function conversationsPlugin(dependencies: ConversationRoutesDependencies) {
  return featurePlugin('conversations', (app) => {
    collectionRoutes(app, dependencies);
    conversationRoutes(app, dependencies);
    messageRoutes(app, dependencies.conversations);
    templateAssignmentRoutes(app, dependencies.conversations);
    feedbackSummaryRoutes(app, dependencies);
    submitFeedbackRoutes(app, dependencies.feedback);
  });
}

function entryJson(conversation: Conversation) {
  return {
    id: conversation.id,
    title: conversation.title,
    created_at: conversation.createdAt,
    updated_at: conversation.updatedAt,
    message_count: conversation.messageCount,
    status: conversation.status,
    user_id: conversation.userId,
  };
}

function detailJson(conversation: Conversation, dependencies: ConversationRoutesDependencies) {
  return {
    ...entryJson(conversation),
    description: conversation.description,
    system_prompt: dependencies.conversations.systemPromptOf(conversation),
    model: conversation.model ?? dependencies.models.defaultModel,
    template: conversation.templateName,
    template_variables: conversation.templateVariables,
    metadata: conversation.metadata,
  };
}

/** A stored message; what it held beyond text is shown (in OpenAI's shapes) only when it did. */
function messageJson(message: StoredMessage) {
  return {
    id: message.id,
    role: message.role,
    content: message.content,
    ...(message.parts === null ? {} : { content_parts: [...message.parts] }),
    ...(message.toolCalls === null ? {} : { tool_calls: [...message.toolCalls] }),
    ...(message.toolCallId === null ? {} : { tool_call_id: message.toolCallId }),
    ...(message.name === null ? {} : { name: message.name }),
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

function collectionRoutes(app: App, dependencies: ConversationRoutesDependencies): void {
  const { conversations } = dependencies;
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
        querystring: ListConversationsQuery,
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
      const page = await conversations.list(principalOf(request).accountId, {
        userId: userId ?? null,
        limit,
        offset,
        status,
        order,
      });
      return { conversations: page.conversations.map(entryJson), total: page.total, limit, offset };
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
        body: CreateConversationBody,
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
      const conversation = await conversations.create(principalOf(request).accountId, {
        userId: body.user_id ?? null,
        title: body.title,
        description: body.description,
        model: body.model,
        systemPrompt: body.system_prompt,
        metadata: body.metadata,
      });
      return reply.code(201).send(detailJson(conversation, dependencies));
    },
  );
}

function conversationRoutes(app: App, dependencies: ConversationRoutesDependencies): void {
  const { conversations } = dependencies;
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
      detailJson(
        await conversations.get(
          principalOf(request).accountId,
          request.params.conversation_id,
          request.query.user_id,
        ),
        dependencies,
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
        body: UpdateConversationBody,
        response: { 200: ConversationDetailSchema },
      },
    },
    async (request) =>
      detailJson(
        await conversations.update(
          principalOf(request).accountId,
          request.params.conversation_id,
          request.body,
          request.body.user_id,
        ),
        dependencies,
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
        response: { 200: DeletedConversationSchema },
      },
    },
    async (request) => {
      const id = request.params.conversation_id;
      await conversations.delete(principalOf(request).accountId, id, request.query.user_id);
      return { success: true, message: `Conversation '${id}' deleted.`, id };
    },
  );
}

function messageRoutes(app: App, conversations: ConversationService): void {
  app.get(
    '/v1/conversations/:conversation_id/messages',
    {
      config: { access: access.scopes('chat:read') },
      schema: {
        operationId: 'listConversationMessages',
        tags: ['Conversations'],
        summary: 'Chat history of a conversation',
        description: `Every stored message as it was sent or answered: a user message's content parts (\`content_parts\`, images as their URL or data URL), an assistant answer's \`tool_calls\`, and tool results (role \`tool\`, with the \`tool_call_id\` they answer). ${ownerNote}`,
        params: ConversationIdParams,
        querystring: ListMessagesQuery,
        response: { 200: MessagePageSchema },
      },
    },
    async (request) => {
      const { limit, offset, order, user_id: userId } = request.query;
      const page = await conversations.messages(
        principalOf(request).accountId,
        request.params.conversation_id,
        { limit, offset, order },
        userId,
      );
      return {
        conversation_id: request.params.conversation_id,
        messages: page.messages.map(messageJson),
        total: page.total,
        limit,
        offset,
      };
    },
  );
}

function templateAssignmentRoutes(app: App, conversations: ConversationService): void {
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
        body: AssignTemplateBody,
        response: { 200: AssignedTemplateSchema },
      },
    },
    async (request) => {
      const conversation = await conversations.assignTemplate(
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
}
