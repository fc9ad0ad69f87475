// Conversations and their messages as the domain sees them.

export type ConversationStatus = 'active' | 'archived';

export type MessageRole = 'system' | 'user' | 'assistant';

export interface Conversation {
  id: string;
  accountId: string;
  userId: string | null;
  title: string;
  description: string;
  model: string | null;
  systemPrompt: string | null;
  status: ConversationStatus;
  metadata: Record<string, unknown>;
  templateName: string | null;
  templateVariables: Record<string, string> | null;
  messageCount: number;
  createdAt: string;
  updatedAt: string;
}

export interface StoredMessage {
  id: string;
  conversationId: string;
  seq: number;
  role: MessageRole;
  content: string;
  model: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  latencyMs: number | null;
  finishReason: string | null;
  createdAt: string;
}

export type NewMessage = Omit<StoredMessage, 'conversationId' | 'seq'> & {
  /** The key whose request stored it (usage by key). */
  apiKeyId: string | null;
};

export interface ConversationQuery {
  /** null: every user's conversations of the account (those without a user too). */
  userId: string | null;
  status: ConversationStatus | 'all';
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}
