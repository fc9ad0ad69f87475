// Feedback on assistant answers and the per-conversation summary.
import type { ConversationService } from './conversation-service.js';
import {
  InvalidParameterError,
  MissingParameterError,
  NotFoundError,
} from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type { FeedbackRepository } from './feedback.repository.js';
import type { Feedback } from './feedback.js';

export const feedbackTypes = ['thumbs_up', 'thumbs_down', 'rating'] as const;
export type FeedbackType = (typeof feedbackTypes)[number];

/** Longest accepted comment. */
export const maxCommentLength = 2000;

export interface SubmitFeedbackInput {
  conversationId: string;
  messageId: string;
  feedbackType: FeedbackType;
  feedbackValue: number | undefined;
  comment: string | undefined;
  userId: string | undefined;
}

export interface FeedbackSummary {
  conversationId: string;
  totalMessages: number;
  messagesWithFeedback: number;
  positiveFeedback: number;
  negativeFeedback: number;
  averageRating: number;
  details: Feedback[];
}

/**
 * The value each type takes: thumbs_up is 1, thumbs_down is -1 (both implied when omitted), a
 * rating is a whole number from 1 to 5.
 */
function valueFor(type: FeedbackType, value: number | undefined): number {
  switch (type) {
    case 'thumbs_up':
      if (value !== undefined && value !== 1) {
        throw new InvalidParameterError('feedback_value', "'thumbs_up' feedback has the value 1.");
      }
      return 1;
    case 'thumbs_down':
      if (value !== undefined && value !== -1) {
        throw new InvalidParameterError(
          'feedback_value',
          "'thumbs_down' feedback has the value -1.",
        );
      }
      return -1;
    case 'rating':
      if (value === undefined) {
        throw new MissingParameterError(
          'feedback_value',
          "'rating' feedback needs a feedback_value from 1 to 5.",
        );
      }
      if (!Number.isInteger(value) || value < 1 || value > 5) {
        throw new InvalidParameterError(
          'feedback_value',
          "A 'rating' is a whole number from 1 to 5.",
        );
      }
      return value;
  }
}

/** Positive: thumbs up or a rating of 4–5; negative: thumbs down or a rating of 1–2. */
function sentimentOf(feedback: Feedback): 'positive' | 'negative' | 'neutral' {
  if (feedback.feedbackType === 'thumbs_up') return 'positive';
  if (feedback.feedbackType === 'thumbs_down') return 'negative';
  if (feedback.feedbackValue >= 4) return 'positive';
  if (feedback.feedbackValue <= 2) return 'negative';
  return 'neutral';
}

export interface FeedbackServiceOptions {
  feedback: FeedbackRepository;
  conversations: ConversationService;
  now?: () => number;
}

export class FeedbackService {
  private readonly now: () => number;

  constructor(private readonly options: FeedbackServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  async submit(accountId: string, input: SubmitFeedbackInput): Promise<string> {
    const conversation = await this.options.conversations.get(accountId, input.conversationId);
    const message = await this.options.conversations.findMessage(accountId, input.messageId);
    if (message === undefined) throw new NotFoundError('Message', input.messageId);
    if (message.conversationId !== conversation.id) {
      throw new InvalidParameterError(
        'message_id',
        `Message '${input.messageId}' does not belong to conversation '${conversation.id}'.`,
      );
    }
    const value = valueFor(input.feedbackType, input.feedbackValue);
    const now = new Date(this.now()).toISOString();
    return this.options.feedback.upsert({
      id: newId('fb'),
      accountId,
      conversationId: conversation.id,
      messageId: message.id,
      // Without a user, feedback counts as the conversation owner's.
      userId: input.userId ?? conversation.userId ?? '',
      feedbackType: input.feedbackType,
      feedbackValue: value,
      comment: input.comment ?? null,
      createdAt: now,
      updatedAt: now,
    });
  }

  async summary(accountId: string, conversationId: string): Promise<FeedbackSummary> {
    const conversation = await this.options.conversations.get(accountId, conversationId);
    const details = await this.options.feedback.listForConversation(accountId, conversationId);
    const sentiments = details.map(sentimentOf);
    const total = details.reduce((sum, feedback) => sum + feedback.feedbackValue, 0);
    return {
      conversationId,
      totalMessages: conversation.messageCount,
      messagesWithFeedback: new Set(details.map((feedback) => feedback.messageId)).size,
      positiveFeedback: sentiments.filter((sentiment) => sentiment === 'positive').length,
      negativeFeedback: sentiments.filter((sentiment) => sentiment === 'negative').length,
      // The mean feedback_value over all entries (0 without feedback); see docs/api.md, "Feedback".
      averageRating: details.length === 0 ? 0 : Math.round((total / details.length) * 1000) / 1000,
      details,
    };
  }
}
