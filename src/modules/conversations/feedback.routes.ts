// Feedback over HTTP: a conversation's feedback summary, and POST /v1/feedback, a rating of an
// answer (a user's later feedback on a message replaces theirs). Registered by the conversations
// plugin, in the order the document lists them.
import { access } from '../../auth/scopes.js';
import { principalOf, type App } from '../../http/types.js';
import type { ConversationService } from './conversation-service.js';
import { ConversationIdParams, ConversationUserQuery, ownerNote } from './conversations.schemas.js';
import type { FeedbackService } from './feedback-service.js';
import {
  FeedbackSummarySchema,
  SubmitFeedbackBody,
  SubmittedFeedbackSchema,
} from './feedback.schemas.js';

export function feedbackSummaryRoutes(
  app: App,
  services: { readonly conversations: ConversationService; readonly feedback: FeedbackService },
): void {
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

export function submitFeedbackRoutes(app: App, feedback: FeedbackService): void {
  app.post(
    '/v1/feedback',
    {
      config: { access: access.scopes('conversations:write') },
      schema: {
        operationId: 'submitFeedback',
        tags: ['Feedback'],
        summary: 'Submit feedback on a message',
        description:
          "`thumbs_up` has the value 1 and `thumbs_down` -1 (both may be omitted); a `rating` is a whole number from 1 to 5. The message must belong to the conversation. A user's second feedback on a message replaces the first and keeps its `feedback_id`; without `user_id` the conversation's user is assumed.",
        body: SubmitFeedbackBody,
        response: { 200: SubmittedFeedbackSchema },
      },
    },
    async (request) => {
      const body = request.body;
      const feedbackId = await feedback.submit(principalOf(request).accountId, {
        conversationId: body.conversation_id,
        messageId: body.message_id,
        feedbackType: body.feedback_type,
        feedbackValue: body.feedback_value,
        comment: body.comment,
        userId: body.user_id,
      });
      return { status: 'success' as const, feedback_id: feedbackId };
    },
  );
}
