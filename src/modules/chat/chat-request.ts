// A chat turn as the chat service takes it (from the turn handler, agents and pipelines), and whose
// model call it is.
import type { CallAttribution, ChatParams, ChatTurn, ChunkRelay } from '../../models/spec.js';
import type { Cancellation } from '../../net/hang-up.js';

export interface ChatRequest {
  accountId: string;
  /** The key (or the key behind the session) making the request, recorded for usage by key. */
  apiKeyId: string | null;
  userId: string | null;
  conversationId: string | null;
  /** false: a stateless completion (nothing stored, no history, no trimming). */
  persist: boolean;
  messages: readonly ChatTurn[];
  model: string | undefined;
  temperature: number | undefined;
  maxTokens: number | undefined;
  /** The request field that carried `max_tokens`, for error messages. */
  maxTokensParam?: string;
  /** OpenAI's other parameters (tools, response_format, stop, …), passed to the model. */
  params?: ChatParams | undefined;
  signal: Cancellation;
  /**
   * The ledger's: route (default `chat`), end user (default `userId`), execution, budget `warn`;
   * `cached` is told of a response-cache hit or miss; `cache: 'bypass'` skips the cache.
   */
  route?: string | undefined;
  endUser?: string | null | undefined;
  executionId?: string | null | undefined;
  warn?: CallAttribution['warn'];
  cached?: CallAttribution['cached'];
  cache?: 'bypass' | undefined;
  /**
   * A stateless stream answered in Chat Completions chunks: an OpenAI-compatible upstream's
   * events are relayed as they came (`relayed` events) instead of taken apart and written again.
   */
  relay?: ChunkRelay | undefined;
}

/** Whose model call a chat request's is, for the usage ledger and budgets. */
export function attributionOfChat(request: ChatRequest): CallAttribution {
  return {
    accountId: request.accountId,
    apiKeyId: request.apiKeyId,
    endUser: request.endUser ?? request.userId,
    route: request.route ?? 'chat',
    executionId: request.executionId ?? null,
    warn: request.warn,
    cached: request.cached,
  };
}
