// The model interface the rest of the service sees (generate, stream, embed, count tokens), and
// the typed errors model back-ends throw. Nothing here knows a vendor, HTTP framework or database.
import type { JSONSchema7 } from '@ai-sdk/provider';
import { AppError } from '../errors/app-error.js';

export interface ChatTurn {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

export type FinishReason = 'stop' | 'length' | 'content_filter' | 'other';

export interface TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export interface GenerationRequest {
  readonly messages: readonly ChatTurn[];
  readonly maxTokens: number;
  readonly temperature?: number | undefined;
  /** Aborted when the client goes away; back-ends stop the upstream call or local generation. */
  readonly signal: AbortSignal;
  /** Whose request this is (an account id): local engines queue fairly between them. */
  readonly fairnessKey: string;
  /**
   * Asks for JSON matching this schema: a provider's structured-output mode, or a grammar that
   * constrains a local model's sampling. Callers still validate what comes back.
   */
  readonly responseSchema?: JSONSchema7 | undefined;
}

export interface GenerationResult {
  readonly text: string;
  readonly finishReason: FinishReason;
  readonly usage: TokenUsage;
}

export type StreamPart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'finish'; readonly finishReason: FinishReason; readonly usage: TokenUsage };

export interface ChatModel {
  generate(request: GenerationRequest): Promise<GenerationResult>;
  /** Yields text parts, then exactly one finish part; throws an UpstreamError on failure. */
  stream(request: GenerationRequest): AsyncIterable<StreamPart>;
  /** Tokens the messages take in this model's context (its own tokenizer where it has one). */
  countTokens(messages: readonly ChatTurn[]): Promise<number>;
}

export interface EmbeddingResult {
  readonly embeddings: number[][];
  readonly tokens: number;
}

export interface EmbeddingModel {
  embed(texts: readonly string[], signal: AbortSignal): Promise<EmbeddingResult>;
}

export type UpstreamErrorCode = 'upstream_error' | 'model_unavailable' | 'upstream_timeout';

export interface UpstreamErrorOptions {
  /** The upstream HTTP status, when there was one (kept for logs, never sent to clients). */
  upstreamStatus?: number | null;
  /** Worth trying the next model in `fallbacks`. */
  fallbackWorthy?: boolean;
  /** Seconds the client should wait, when known. */
  retryAfterSeconds?: number | null;
  cause?: unknown;
}

/**
 * A model back-end failed. The message is written for the client and never carries upstream
 * bodies or secrets; the cause (logged) does.
 */
export class UpstreamError extends AppError {
  readonly upstreamStatus: number | null;
  readonly fallbackWorthy: boolean;

  constructor(code: UpstreamErrorCode, message: string, options: UpstreamErrorOptions = {}) {
    super(code, message, {
      cause: options.cause,
      ...(options.retryAfterSeconds === undefined || options.retryAfterSeconds === null
        ? {}
        : { headers: { 'retry-after': String(options.retryAfterSeconds) } }),
    });
    this.name = 'UpstreamError';
    this.upstreamStatus = options.upstreamStatus ?? null;
    this.fallbackWorthy = options.fallbackWorthy ?? true;
  }
}

/** The client went away; nothing is to be answered or stored. */
export class RequestAbortedError extends Error {
  constructor() {
    super('the client closed the request');
    this.name = 'RequestAbortedError';
  }
}
