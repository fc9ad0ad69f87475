// The model interface the rest of the service sees (generate, stream, embed, count tokens), and
// the typed errors model back-ends throw. Nothing here knows a vendor, HTTP framework or database.
import type { JSONSchema7 } from '@ai-sdk/provider';
import { AppError } from '../errors/app-error.js';
import type { AttemptBudget } from './upstream/attempt-budget.js';
import type { Cancellation } from '../net/hang-up.js';

// The message model is OpenAI's Chat Completions shape (../shared/reference), typed: content parts,
// assistant tool calls, tool results, and the request's parameters under their OpenAI names. The
// text of a turn stays in `content` (a string) for everything that reads text only (templates,
// history trimming, agents, the voice paths); `parts` holds the content when it had anything
// else (an image, audio, a file). See docs/message-model.md.

/** A content part of a user (or system) message, as OpenAI's clients send it. */
export type ContentPart =
  | { readonly type: 'text'; readonly text: string }
  | {
      readonly type: 'image_url';
      readonly image_url: { readonly url: string; readonly detail?: 'auto' | 'low' | 'high' };
    }
  | {
      readonly type: 'input_audio';
      readonly input_audio: { readonly data: string; readonly format: string };
    }
  | {
      readonly type: 'file';
      readonly file: {
        readonly file_data?: string;
        readonly file_id?: string;
        readonly filename?: string;
      };
    };

/** A function call the model asked for; `arguments` is the JSON text as the model wrote it. */
export interface ToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

export interface ChatTurn {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  /** The text: the string content, or the text parts joined ('' for a pure tool call). */
  readonly content: string;
  /** The content as parts, when it holds any part that is not text. */
  readonly parts?: readonly ContentPart[] | undefined;
  /** An assistant turn's function calls. */
  readonly toolCalls?: readonly ToolCall[] | undefined;
  /** A tool turn: the call it answers. */
  readonly toolCallId?: string | undefined;
  /** OpenAI's optional participant name. */
  readonly name?: string | undefined;
}

/** A function the model may call: OpenAI's `tools[]` entry. */
export interface FunctionTool {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description?: string | undefined;
    readonly parameters?: Readonly<Record<string, unknown>> | undefined;
    readonly strict?: boolean | null | undefined;
  };
}

export type ToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { readonly type: 'function'; readonly function: { readonly name: string } };

export type ResponseFormat =
  | { readonly type: 'text' }
  | { readonly type: 'json_object' }
  | {
      readonly type: 'json_schema';
      readonly json_schema: {
        readonly name: string;
        readonly description?: string | undefined;
        readonly schema?: Readonly<Record<string, unknown>> | undefined;
        readonly strict?: boolean | null | undefined;
      };
    };

/**
 * The request parameters beyond messages, model, max_tokens and stream, under OpenAI's names.
 * OpenAI-compatible upstreams receive them unchanged — including fields the platform does not
 * know, kept under their own names — so a new OpenAI parameter works without a release. Other
 * providers translate the ones they honour and refuse (400, naming it) the ones they cannot.
 */
export interface ChatParams {
  readonly tools?: readonly FunctionTool[] | undefined;
  readonly tool_choice?: ToolChoice | undefined;
  readonly parallel_tool_calls?: boolean | undefined;
  readonly response_format?: ResponseFormat | undefined;
  readonly stop?: string | readonly string[] | undefined;
  readonly top_p?: number | undefined;
  readonly seed?: number | undefined;
  readonly presence_penalty?: number | undefined;
  readonly frequency_penalty?: number | undefined;
  readonly logit_bias?: Readonly<Record<string, number>> | undefined;
  readonly logprobs?: boolean | undefined;
  readonly top_logprobs?: number | undefined;
  readonly reasoning_effort?: string | undefined;
  readonly user?: string | undefined;
  readonly metadata?: Readonly<Record<string, string>> | undefined;
  readonly [unknownField: string]: unknown;
}

export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls' | 'other';

export interface TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Prompt tokens served from the provider's cache, where it reports them. */
  readonly cachedTokens?: number | undefined;
  /** Prompt tokens written to the provider's cache (Anthropic's cache creation), where reported. */
  readonly cacheWriteTokens?: number | undefined;
  /** Completion tokens spent on hidden reasoning, where the provider reports them. */
  readonly reasoningTokens?: number | undefined;
}

/** Whose call it is, and which route (or run) made it. */
export interface CallAttribution {
  readonly accountId: string;
  /** The key (`key_…`) the request came with; a session's key too. Null for the service's own work. */
  readonly apiKeyId: string | null;
  /** The end user the client named (`user_id`, OpenAI's `user`, Anthropic's `metadata.user_id`). */
  readonly endUser: string | null;
  /** The route (`POST /v1/chat/completions`), or what started the work (`job`). */
  readonly route: string;
  /** The execution of an agent or pipeline run. */
  readonly executionId?: string | null | undefined;
  /**
   * Told when the call takes a budget past its soft limit (the HTTP layer sets `X-Budget-Warning`
   * on the answer when it still can).
   */
  readonly warn?: ((warning: string) => void) | undefined;
  /** Told whether the answer came from the exact response cache (the HTTP layer sets X-Cache). */
  readonly cached?: ((hit: boolean) => void) | undefined;
}

export interface GenerationRequest {
  readonly messages: readonly ChatTurn[];
  readonly maxTokens: number;
  readonly temperature?: number | undefined;
  /**
   * Aborted when the client goes away; back-ends stop the upstream call or local generation. A
   * `Cancel` (../net/hang-up.ts) on the chat routes: `signalOf` gives an AbortSignal.
   */
  readonly signal: Cancellation;
  /** Whose request this is (an account id): local engines queue fairly between them. */
  readonly fairnessKey: string;
  /**
   * Asks for JSON matching this schema: a provider's structured-output mode, or a grammar that
   * constrains a local model's sampling. Callers still validate what comes back.
   */
  readonly responseSchema?: JSONSchema7 | undefined;
  /** OpenAI's other request parameters (tools, response_format, stop, top_p, …). */
  readonly params?: ChatParams | undefined;
  /** Whose call it is, for the usage ledger and budgets (the account of `fairnessKey` alone when absent). */
  readonly attribution?: CallAttribution | undefined;
  /** `bypass`: not answered from the response cache (the client's Cache-Control: no-cache). */
  readonly cache?: 'bypass' | undefined;
  /** Upstream calls the request may still make (`max_attempts`); set by the registry. */
  readonly attempts?: AttemptBudget | undefined;
  /**
   * A stream whose caller answers in OpenAI's Chat Completions chunks: a model that streams them
   * itself (an OpenAI-compatible upstream) may give its events as they came (`relayed` parts)
   * instead of parts taken out of them. Other models ignore it.
   */
  readonly relay?: ChunkRelay | undefined;
}

/** What a caller that relays an upstream's chat.completion.chunk events asked of them. */
export interface ChunkRelay {
  /** The client asked for the usage chunk (`stream_options.include_usage`). */
  readonly includeUsage: boolean;
}

export interface GenerationResult {
  readonly text: string;
  readonly finishReason: FinishReason;
  readonly usage: TokenUsage;
  /** The function calls the model asked for (finish reason `tool_calls`). */
  readonly toolCalls?: readonly ToolCall[] | undefined;
  /** The model's refusal, when it refused (OpenAI's `message.refusal`). */
  readonly refusal?: string | undefined;
  /** The choice's `logprobs` object as the provider sent it, when asked for. */
  readonly logprobs?: unknown;
  /** The provider's `system_fingerprint`, relayed. */
  readonly systemFingerprint?: string | undefined;
}

/**
 * A streamed piece. Tool calls arrive as deltas as OpenAI streams them: the first of a call
 * carries its `index`, `id` and `name`; later ones append to its `arguments`.
 */
export type StreamPart =
  | { readonly type: 'text'; readonly text: string; readonly logprobs?: unknown }
  | { readonly type: 'refusal'; readonly text: string }
  | {
      readonly type: 'tool-call';
      readonly index: number;
      readonly id?: string | undefined;
      readonly name?: string | undefined;
      readonly arguments: string;
    }
  | {
      readonly type: 'finish';
      readonly finishReason: FinishReason;
      readonly usage: TokenUsage;
      readonly systemFingerprint?: string | undefined;
    }
  | RelayedPart;

/**
 * An OpenAI-compatible upstream's chat.completion.chunk events as they came in one read (for a
 * request with `relay`): `frames` is their Server-Sent Events text as the client gets it — the
 * model's name the platform's, the upstream's `[DONE]` (and a usage chunk the client did not ask
 * for) left out. The finish part still ends the stream, with the usage read from the events.
 */
export interface RelayedPart {
  readonly type: 'relayed';
  readonly frames: string;
  /** How many of the events carry a choice (a cut stream's output is counted one token each). */
  readonly chunks: number;
  /** Whether any carries content (text, a tool call or a refusal): what cannot be taken back. */
  readonly content: boolean;
}

export interface ChatModel {
  generate(request: GenerationRequest): Promise<GenerationResult>;
  /**
   * Yields text, refusal and tool-call parts, then exactly one finish part; throws an
   * UpstreamError on failure.
   */
  stream(request: GenerationRequest): AsyncIterable<StreamPart>;
  /** Tokens the messages take in this model's context (its own tokenizer where it has one). */
  countTokens(messages: readonly ChatTurn[]): Promise<number>;
}

export interface EmbeddingResult {
  readonly embeddings: number[][];
  readonly tokens: number;
}

export interface EmbeddingModel {
  /** `attribution`: whose call it is, for the usage ledger and budgets. */
  embed(
    texts: readonly string[],
    signal: AbortSignal,
    attribution?: CallAttribution,
  ): Promise<EmbeddingResult>;
}

export type UpstreamErrorCode = 'upstream_error' | 'model_unavailable' | 'upstream_timeout';

export interface UpstreamErrorOptions {
  /** The upstream HTTP status, when there was one (kept for logs, never sent to clients). */
  upstreamStatus?: number | null;
  /** Worth trying the next model in `fallbacks`. */
  fallbackWorthy?: boolean;
  /** Seconds the client should wait, when known (sent as Retry-After). */
  retryAfterSeconds?: number | null;
  /** How long the upstream asked to be left alone (its Retry-After), whatever the status. */
  upstreamRetryAfterMs?: number | null;
  cause?: unknown;
}

/**
 * A model back-end failed. The message is written for the client and never carries upstream
 * bodies or secrets; the cause (logged) does.
 */
export class UpstreamError extends AppError {
  readonly upstreamStatus: number | null;
  readonly fallbackWorthy: boolean;
  readonly upstreamRetryAfterMs: number | null;

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
    this.upstreamRetryAfterMs =
      options.upstreamRetryAfterMs ??
      (options.retryAfterSeconds === undefined || options.retryAfterSeconds === null
        ? null
        : options.retryAfterSeconds * 1000);
  }
}

/** The client went away; nothing is to be answered or stored. */
export class RequestAbortedError extends Error {
  constructor() {
    super('the client closed the request');
    this.name = 'RequestAbortedError';
  }
}
