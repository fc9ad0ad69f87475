// OpenAI's Chat Completions dialect, translated: a request body into the chat turn the service
// runs, and the turn's outcome or stream events into a chat.completion or chat.completion.chunk
// bodies. Plain functions over plain values; the HTTP side (routing, streaming, the reply) is
// completions.routes.ts.
import { InvalidParameterError } from '../../errors/app-error.js';
import type { ChatTurn, FinishReason } from '../../models/spec.js';
import type { ChatOutcome, ChatStreamEvent } from '../chat/chat-service.js';

/** A message as OpenAI's clients send it: text, text parts, or nothing. */
export interface CompletionMessage {
  readonly role: string;
  readonly content: string | readonly { readonly text: string }[] | null;
}

/** The fields of a Chat Completions request the service reads (others are ignored). */
export interface CompletionRequestBody {
  readonly model?: string;
  readonly messages: readonly CompletionMessage[];
  readonly stream?: boolean | null;
  readonly stream_options?: { readonly include_usage?: boolean } | null;
  readonly temperature?: number | null;
  readonly max_tokens?: number | null;
  readonly max_completion_tokens?: number | null;
  readonly user_id?: string;
  readonly conversation_id?: string;
}

/** The chat turn a request asks for, before routing picks its model. */
export interface CompletionCall {
  readonly messages: ChatTurn[];
  /** Stored in a conversation (the extensions `user_id` or `conversation_id`), or stateless. */
  readonly persist: boolean;
  readonly userId: string | null;
  readonly conversationId: string | null;
  readonly requestedModel: string | undefined;
  /** `max_completion_tokens`, else `max_tokens`. */
  readonly maxTokens: number | undefined;
  /** The field that carried the limit, for error messages. */
  readonly maxTokensParam: 'max_tokens' | 'max_completion_tokens';
  readonly temperature: number | undefined;
  readonly stream: boolean;
  /** `stream_options.include_usage`: a last chunk carries the usage. */
  readonly includeUsage: boolean;
}

/** OpenAI's finish reasons: a reason it lacks is reported as a normal stop. */
export function openAiFinishReason(
  reason: FinishReason,
): 'stop' | 'length' | 'content_filter' | 'tool_calls' {
  return reason === 'other' ? 'stop' : reason;
}

/** The turns of a request: `developer` reads as `system`, text parts are joined; tools refused. */
export function turnsOf(body: CompletionRequestBody): ChatTurn[] {
  const { tools } = body as { tools?: unknown };
  if (Array.isArray(tools) && tools.length > 0) {
    throw new InvalidParameterError('tools', 'Tool calling is not supported by this service yet.');
  }
  return body.messages.map((message, index) => {
    const role = message.role === 'developer' ? 'system' : message.role;
    if (role !== 'system' && role !== 'user' && role !== 'assistant') {
      throw new InvalidParameterError(
        `messages[${index}].role`,
        `Role '${message.role}' is not supported; use system, developer, user or assistant.`,
      );
    }
    const content =
      typeof message.content === 'string'
        ? message.content
        : (message.content ?? []).map((part) => part.text).join('');
    return { role, content };
  });
}

/** The chat turn a request asks for (its turns checked as `turnsOf` does). */
export function completionCallOf(body: CompletionRequestBody): CompletionCall {
  const persist = body.user_id !== undefined || body.conversation_id !== undefined;
  const maxTokensParam =
    body.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
  return {
    messages: turnsOf(body),
    persist,
    userId: body.user_id ?? null,
    conversationId: body.conversation_id ?? null,
    requestedModel: body.model,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    maxTokensParam,
    temperature: body.temperature ?? undefined,
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
  };
}

/** The completion id OpenAI's clients see: the stored reply's id under OpenAI's prefix. */
export function completionId(messageId: string): string {
  return `chatcmpl-${messageId.slice('msg_'.length)}`;
}

export function usageJson(outcome: Pick<ChatOutcome, 'usage'>) {
  return {
    prompt_tokens: outcome.usage.promptTokens,
    completion_tokens: outcome.usage.completionTokens,
    total_tokens: outcome.usage.promptTokens + outcome.usage.completionTokens,
  };
}

/** The conversation's ids, added to an answer that was stored (nothing for a stateless one). */
function storedIds(conversationId: string | null, messageId: string) {
  return conversationId === null ? {} : { conversation_id: conversationId, message_id: messageId };
}

/** A whole answer as a chat.completion; `created` in Unix seconds. */
export function completionBody(outcome: ChatOutcome, created: number) {
  return {
    id: completionId(outcome.messageId),
    object: 'chat.completion' as const,
    created,
    model: outcome.model.name,
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: outcome.text, refusal: null },
        logprobs: null,
        finish_reason: openAiFinishReason(outcome.finishReason),
      },
    ],
    usage: usageJson(outcome),
    ...storedIds(outcome.conversationId, outcome.messageId),
  };
}

/** One streamed answer's chunks so far: they share its id, model and creation time. */
export interface ChunkStream {
  id: string;
  model: string;
  readonly created: number;
  readonly includeUsage: boolean;
}

export function chunkStream(created: number, includeUsage: boolean): ChunkStream {
  return { id: '', model: '', created, includeUsage };
}

function chunk(stream: ChunkStream, choices: unknown[], extra: Record<string, unknown> = {}) {
  return {
    id: stream.id,
    object: 'chat.completion.chunk',
    created: stream.created,
    model: stream.model,
    choices,
    ...extra,
  };
}

/**
 * The bodies one stream event becomes, in OpenAI's chunk sequence: role first, content deltas,
 * finish, optional usage. `last`: the stream ends with them (an error, which OpenAI's clients
 * raise as an API error for a chunk carrying `error`).
 */
export function chunksOf(
  stream: ChunkStream,
  event: ChatStreamEvent,
): { chunks: unknown[]; last: boolean } {
  switch (event.type) {
    case 'start':
      stream.id = completionId(event.messageId);
      stream.model = event.model.name;
      return {
        chunks: [
          chunk(
            stream,
            [
              {
                index: 0,
                delta: { role: 'assistant', content: '' },
                logprobs: null,
                finish_reason: null,
              },
            ],
            storedIds(event.conversationId, event.messageId),
          ),
        ],
        last: false,
      };
    case 'delta':
      return {
        chunks: [
          chunk(stream, [
            { index: 0, delta: { content: event.text }, logprobs: null, finish_reason: null },
          ]),
        ],
        last: false,
      };
    case 'end':
      return { chunks: endChunks(stream, event.outcome), last: false };
    case 'error':
      return { chunks: [event.error.toBody()], last: true };
    default:
      return { chunks: [], last: false };
  }
}

function endChunks(stream: ChunkStream, outcome: ChatOutcome): unknown[] {
  const finish = chunk(stream, [
    {
      index: 0,
      delta: {},
      logprobs: null,
      finish_reason: openAiFinishReason(outcome.finishReason),
    },
  ]);
  return stream.includeUsage
    ? [finish, chunk(stream, [], { usage: usageJson(outcome) })]
    : [finish];
}
