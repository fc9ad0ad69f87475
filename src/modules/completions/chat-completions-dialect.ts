// OpenAI's Chat Completions dialect, translated: a request body into the chat turn the service
// runs, and the turn's outcome or stream events into a chat.completion or chat.completion.chunk
// bodies. Plain functions over plain values, and the dialect the chat module's turn handler runs
// (routing, streaming, the reply); the routes are completions.routes.ts.
import {
  checkToolFields,
  maxSchemaText,
  openAiUsage,
  turnOfMessage,
  type MessageInput,
  type ToolFieldsInput,
} from '../../models/openai-messages.js';
import type { ChatParams, ChatTurn, FinishReason } from '../../models/spec.js';
import type { ChatOutcome, ChatStreamEvent } from '../chat/chat-service.js';
import type { TurnCall, TurnDialect } from '../chat/turn-dialect.js';

/** A Chat Completions request: the fields the service reads, and every other one kept. */
export interface CompletionRequestBody {
  readonly model?: string | undefined;
  readonly messages: readonly MessageInput[];
  readonly stream?: boolean | null | undefined;
  readonly stream_options?: { readonly include_usage?: boolean | undefined } | null | undefined;
  readonly temperature?: number | null | undefined;
  readonly max_tokens?: number | null | undefined;
  readonly max_completion_tokens?: number | null | undefined;
  readonly user_id?: string | undefined;
  readonly conversation_id?: string | undefined;
  readonly [field: string]: unknown;
}

/** The chat turn a request asks for, before routing picks its model. */
export interface CompletionCall extends TurnCall {
  readonly messages: ChatTurn[];
  /** OpenAI's other parameters, passed on (unknown ones included; see `paramsOf`). */
  readonly params: ChatParams;
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

/**
 * The request fields the service itself reads or adds (the model is the catalog's name, the
 * limits and stream are set per upstream call, `n` is always 1, and the extensions are the
 * service's own). Every other field is a parameter for the model.
 */
const serviceFields = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'temperature',
  'max_tokens',
  'max_completion_tokens',
  'n',
  'user_id',
  'conversation_id',
]);

/**
 * The parameters for the model: every field but the service's own, unknown ones included, and
 * none that is null (OpenAI's "default"). Built with Object.fromEntries, which defines own
 * properties: a client's field name never reaches a prototype.
 */
export function paramsOf(body: CompletionRequestBody): ChatParams {
  return Object.fromEntries(
    Object.entries(body).filter(
      ([field, value]) => !serviceFields.has(field) && value !== null && value !== undefined,
    ),
  );
}

/** The turns of a request: each role's rules checked (src/models/openai-messages.ts). */
export function turnsOf(body: Pick<CompletionRequestBody, 'messages'>): ChatTurn[] {
  return body.messages.map(turnOfMessage);
}

/** `paramsOf`, with the tool fields checked against each other and client schemas bounded. */
function checkedParams(body: CompletionRequestBody): ChatParams {
  checkToolFields(body as ToolFieldsInput, maxSchemaText);
  return paramsOf(body);
}

/** The chat turn a request asks for (its turns checked as `turnsOf` does). */
export function completionCallOf(body: CompletionRequestBody): CompletionCall {
  const persist = body.user_id !== undefined || body.conversation_id !== undefined;
  const maxTokensParam =
    body.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
  return {
    messages: turnsOf(body),
    params: checkedParams(body),
    persist,
    userId: body.user_id ?? null,
    conversationId: body.conversation_id ?? null,
    requestedModel: body.model,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    maxTokensParam,
    temperature: body.temperature ?? undefined,
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
    // A stateless stream takes an OpenAI-compatible upstream's chunks as they came.
    relay:
      body.stream === true && !persist
        ? { includeUsage: body.stream_options?.include_usage === true }
        : undefined,
  };
}

/** The completion id OpenAI's clients see: the stored reply's id under OpenAI's prefix. */
export function completionId(messageId: string): string {
  return `chatcmpl-${messageId.slice('msg_'.length)}`;
}

export function usageJson(outcome: Pick<ChatOutcome, 'usage'>) {
  return openAiUsage(outcome.usage);
}

/** The conversation's ids, added to an answer that was stored (nothing for a stateless one). */
function storedIds(conversationId: string | null, messageId: string) {
  return conversationId === null ? {} : { conversation_id: conversationId, message_id: messageId };
}

/** A whole answer as a chat.completion; `created` in Unix seconds. */
export function completionBody(outcome: ChatOutcome, created: number) {
  const toolCalls = outcome.toolCalls ?? [];
  return {
    id: completionId(outcome.messageId),
    object: 'chat.completion' as const,
    created,
    model: outcome.model.name,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant' as const,
          // OpenAI's answer to a pure tool call has no content.
          content: toolCalls.length > 0 && outcome.text === '' ? null : outcome.text,
          refusal: outcome.refusal ?? null,
          ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
        },
        logprobs: outcome.logprobs ?? null,
        finish_reason: openAiFinishReason(outcome.finishReason),
      },
    ],
    usage: usageJson(outcome),
    ...(outcome.systemFingerprint === undefined
      ? {}
      : { system_fingerprint: outcome.systemFingerprint }),
    ...storedIds(outcome.conversationId, outcome.messageId),
  };
}

/** One streamed answer's chunks so far: they share its id, model and creation time. */
export interface ChunkStream {
  id: string;
  model: string;
  readonly created: number;
  readonly includeUsage: boolean;
  /** The upstream's own chunks are relayed: none is written here but an error. */
  relayed: boolean;
}

export function chunkStream(created: number, includeUsage: boolean): ChunkStream {
  return { id: '', model: '', created, includeUsage, relayed: false };
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

const noChunks = { chunks: [], last: false };

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
      stream.relayed = event.relayed === true;
      if (stream.relayed) return noChunks;
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
            {
              index: 0,
              delta: { content: event.text },
              logprobs: event.logprobs ?? null,
              finish_reason: null,
            },
          ]),
        ],
        last: false,
      };
    case 'refusal':
      return {
        chunks: [
          chunk(stream, [
            { index: 0, delta: { refusal: event.text }, logprobs: null, finish_reason: null },
          ]),
        ],
        last: false,
      };
    case 'tool-call':
      return { chunks: [chunk(stream, [toolCallChoice(event)])], last: false };
    case 'end':
      // Relayed: the upstream's finish and usage chunks were.
      return stream.relayed ? noChunks : { chunks: endChunks(stream, event.outcome), last: false };
    case 'relayed':
      // Written as they came, by the dialect's `next`.
      return noChunks;
    case 'error':
      return { chunks: [event.error.toBody()], last: true };
  }
}

/** A tool-call delta as OpenAI streams it: the first of a call names its id and function. */
function toolCallChoice(event: Extract<ChatStreamEvent, { type: 'tool-call' }>) {
  const opening = event.id === undefined ? {} : { id: event.id, type: 'function' };
  return {
    index: 0,
    delta: {
      tool_calls: [
        {
          index: event.index,
          ...opening,
          function: {
            ...(event.name === undefined ? {} : { name: event.name }),
            arguments: event.arguments,
          },
        },
      ],
    },
    logprobs: null,
    finish_reason: null,
  };
}

function endChunks(stream: ChunkStream, outcome: ChatOutcome): unknown[] {
  const finish = chunk(
    stream,
    [
      {
        index: 0,
        delta: {},
        logprobs: null,
        finish_reason: openAiFinishReason(outcome.finishReason),
      },
    ],
    outcome.systemFingerprint === undefined
      ? {}
      : { system_fingerprint: outcome.systemFingerprint },
  );
  return stream.includeUsage
    ? [finish, chunk(stream, [], { usage: usageJson(outcome) })]
    : [finish];
}

/** Chat Completions as a dialect of the turn handler: `data:` chunks, then `data: [DONE]`. */
export const completionsDialect: TurnDialect<CompletionRequestBody, CompletionCall> = {
  callOf: (body) => completionCallOf(body),
  answer: (outcome) => ({
    body: completionBody(outcome, Math.floor(Date.now() / 1000)),
    conversationId: outcome.conversationId,
  }),
  stream(call) {
    const stream = chunkStream(Math.floor(Date.now() / 1000), call.includeUsage);
    return {
      next(event) {
        if (event.type === 'relayed') return { events: [], last: false, frames: event.frames };
        const { chunks, last } = chunksOf(stream, event);
        return { events: chunks.map((data) => ({ data })), last };
      },
    };
  },
  done: '[DONE]',
};
