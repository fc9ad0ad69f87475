// Feedback on an assistant message, as the domain sees it.

export interface Feedback {
  id: string;
  accountId: string;
  conversationId: string;
  messageId: string;
  userId: string;
  feedbackType: string;
  feedbackValue: number;
  comment: string | null;
  createdAt: string;
  updatedAt: string;
}
