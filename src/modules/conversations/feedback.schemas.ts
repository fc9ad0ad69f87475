// The HTTP shapes of feedback: a submission and its answer, and a conversation's summary.
import Type from 'typebox';
import { commonParameters, NullableTimestamp } from '../../http/schemas/common.js';
import { feedbackTypes, maxCommentLength } from './feedback-service.js';

export const SubmitFeedbackBody = Type.Object(
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
);

export const SubmittedFeedbackSchema = Type.Object({
  status: Type.Literal('success'),
  feedback_id: Type.String(),
});

export const FeedbackSummarySchema = Type.Object({
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
