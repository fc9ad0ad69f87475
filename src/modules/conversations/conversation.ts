// Conversations and their messages as the domain sees them.
import type { ContentPart, ToolCall } from '../../models/spec.js';

export type ConversationStatus = 'active' | 'archived';

/** 'tool': a tool's result, answering one of the previous assistant message's tool calls. */
export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';

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
  /** The text: the string content, or the text parts joined. */
  content: string;
  /** The content as OpenAI content parts, when it held more than text (an image, audio, a file). */
  parts: readonly ContentPart[] | null;
  /** An assistant message's tool calls, as the model made them. */
  toolCalls: readonly ToolCall[] | null;
  /** A tool message: the call it answers. */
  toolCallId: string | null;
  /** OpenAI's optional participant name. */
  name: string | null;
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
