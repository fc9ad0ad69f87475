// Anthropic's Messages request as this service reads it: the body's fields (deliberately partial,
// the schema in messages.schemas.ts checks their bounds and keeps every other field), and the chat
// turn it becomes before routing picks its model. Types only.
import type { CapabilityNeed } from '../../models/capabilities.js';
import type { ChatParams, ChatTurn } from '../../models/spec.js';

export type Json = Record<string, unknown>;

/** A content block as Anthropic's clients send it (messages.schemas.ts checks its bounds). */
export interface RequestBlock {
  readonly type: string;
  readonly text?: string | undefined;
  /** An object for images and documents (the schema checks it); anything for other blocks. */
  readonly source?: unknown;
  readonly title?: string | null | undefined;
  readonly id?: string | undefined;
  readonly name?: string | undefined;
  readonly input?: unknown;
  readonly tool_use_id?: string | undefined;
  readonly content?: string | readonly RequestBlock[] | undefined;
  readonly is_error?: boolean | undefined;
  readonly [field: string]: unknown;
}

export interface RequestMessage {
  readonly role: string;
  readonly content: string | readonly RequestBlock[];
}

export interface RequestTool {
  readonly name: string;
  readonly type?: string | undefined;
  readonly description?: string | undefined;
  readonly input_schema?: Json | undefined;
  readonly [field: string]: unknown;
}

export interface RequestToolChoice {
  readonly type: string;
  readonly name?: string | undefined;
  readonly disable_parallel_tool_use?: boolean | undefined;
}

/** What /v1/messages/count_tokens reads: the prompt without the answer's parameters. */
export interface PromptBody {
  readonly model: string;
  readonly messages: readonly RequestMessage[];
  readonly system?: string | readonly RequestBlock[] | undefined;
  readonly tools?: readonly RequestTool[] | undefined;
  readonly tool_choice?: RequestToolChoice | undefined;
  readonly thinking?: { readonly type: string; readonly [field: string]: unknown } | undefined;
  readonly output_config?: OutputConfig | undefined;
  /** The platform's extensions: store the turn in a conversation. */
  readonly user_id?: string | undefined;
  readonly conversation_id?: string | undefined;
  readonly [field: string]: unknown;
}

/** Anthropic's output settings: a JSON schema the answer follows, the effort spent. */
export interface OutputConfig {
  readonly format?:
    | { readonly type: string; readonly schema?: Json | undefined }
    | null
    | undefined;
  readonly effort?: string | null | undefined;
}

/** A Messages request: the fields the service reads, and every other one kept. */
export interface MessagesRequestBody extends PromptBody {
  readonly max_tokens: number;
  readonly stop_sequences?: readonly string[] | undefined;
  readonly temperature?: number | undefined;
  readonly top_p?: number | undefined;
  readonly top_k?: number | undefined;
  readonly metadata?: { readonly user_id?: string | null | undefined } | undefined;
  readonly stream?: boolean | undefined;
}

/** Something of the request the translation cannot carry to a model of another provider. */
export interface Untranslatable {
  readonly param: string;
  readonly why: string;
}

/** The prompt as the service's turns, and what translating it left behind. */
export interface TranslatedPrompt {
  readonly messages: ChatTurn[];
  readonly params: ChatParams;
  /** Refused (400) when the request is translated; nothing when it is passed through. */
  readonly untranslatable: Untranslatable[];
  /** What the request needs of its model beyond text, named by its Anthropic fields. */
  readonly needs: CapabilityNeed[];
}

/**
 * The chat turn a Messages request asks for, before routing picks its model (a `TurnCall` of the
 * chat module's turn handler).
 */
export interface MessagesCall extends TranslatedPrompt {
  /** Stored in a conversation (the extensions `user_id` or `conversation_id`), or stateless. */
  readonly persist: boolean;
  readonly userId: string | null;
  readonly conversationId: string | null;
  readonly requestedModel: string;
  readonly maxTokens: number;
  readonly temperature: number | undefined;
  readonly stream: boolean;
}
