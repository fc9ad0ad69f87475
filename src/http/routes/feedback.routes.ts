// POST /v1/feedback: a rating of an answer; a user's later feedback on a message replaces theirs.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { commonParameters } from '../schemas/common.js';
import { feedbackTypes, maxCommentLength } from '../../feedback/feedback-service.js';
import type { Services } from '../../services.js';
import { principalOf, type App } from '../types.js';

export function feedbackRoutes(app: App, services: Services): void {
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
        body: Type.Object(
          {
            ...commonParameters(),
            conversation_id: Type.String({ minLength: 1, maxLength: 100 }),
            message_id: Type.String({ minLength: 1, maxLength: 100 }),
            feedback_type: Type.Enum(feedbackTypes),
            feedback_value: Type.Optional(Type.Number({ minimum: -1, maximum: 5 })),
            comment: Type.Optional(Type.String({ maxLength: maxCommentLength })),
            user_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ status: Type.Literal('success'), feedback_id: Type.String() }),
        },
      },
    },
    async (request) => {
      const body = request.body;
      const feedbackId = await services.feedback.submit(principalOf(request).accountId, {
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
