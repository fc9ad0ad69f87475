// OpenAI's `Response` object: what a response says about itself (its id, model, conversation and
// what it repeats of its request), its status and output, its usage; and how an answer's finish
// reason or failure reads in it.
import type { AppError } from '../../errors/app-error.js';
import type { FinishReason, TokenUsage } from '../../models/spec.js';
import type { ResponseEcho } from './responses-request.js';

/** A response's id, from the id of the stored answer (its message item keeps that id). */
export function responseIdOf(messageId: string): string {
  return `resp_${messageId.slice('msg_'.length)}`;
}

/** What a response says about itself beyond its output, fixed when it starts. */
export interface ResponseFrame {
  readonly id: string;
  /** Unix seconds. */
  readonly createdAt: number;
  readonly model: string;
  /** The conversation its turns are stored in (null: not stored). */
  readonly conversationId: string | null;
  readonly echo: ResponseEcho;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export interface ResponseState {
  readonly status: ResponseStatus;
  readonly output: readonly Record<string, unknown>[];
  readonly usage?: TokenUsage | undefined;
  readonly completedAt?: number | undefined;
  readonly incompleteReason?: 'max_output_tokens' | 'content_filter' | undefined;
  readonly error?: { code: string; message: string } | undefined;
}

export function usageJson(usage: TokenUsage) {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens ?? 0, cache_write_tokens: 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** OpenAI's `Response` object, in its field order. */
export function responseBody(frame: ResponseFrame, state: ResponseState) {
  const { echo } = frame;
  return {
    id: frame.id,
    object: 'response' as const,
    created_at: frame.createdAt,
    status: state.status,
    completed_at: state.completedAt ?? null,
    error: state.error ?? null,
    incomplete_details:
      state.incompleteReason === undefined ? null : { reason: state.incompleteReason },
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    model: frame.model,
    output: state.output,
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: echo.previous_response_id,
    reasoning: echo.reasoning,
    store: echo.store,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    ...(state.usage === undefined ? {} : { usage: usageJson(state.usage) }),
    ...(echo.user === undefined ? {} : { user: echo.user }),
    metadata: echo.metadata,
    conversation: frame.conversationId === null ? null : { id: frame.conversationId },
  };
}

export type ResponseObject = ReturnType<typeof responseBody>;

/** A response's status, and why it is incomplete, from its finish reason. */
export function ending(reason: FinishReason): {
  status: 'completed' | 'incomplete';
  incompleteReason?: 'max_output_tokens' | 'content_filter';
} {
  if (reason === 'length') return { status: 'incomplete', incompleteReason: 'max_output_tokens' };
  if (reason === 'content_filter') {
    return { status: 'incomplete', incompleteReason: 'content_filter' };
  }
  return { status: 'completed' };
}

/** A ResponseErrorCode of OpenAI's schema for a failure. */
export function failureCode(error: AppError): string {
  return error.code === 'rate_limit_exceeded' ? 'rate_limit_exceeded' : 'server_error';
}
