// The dialect interface: what each way of asking for a chat turn (the contract's /v1/chat, OpenAI's
// Chat Completions and Responses, Anthropic's Messages) gives the one turn handler
// (turn-handler.routes.ts), which does the rest once: the key's watch over a stream, the client's
// hang-up, the model's choice with what the turn needs of it, the chat service's call, and the
// answer sent whole or as Server-Sent Events. A dialect is plain functions over plain values: its
// body into a turn, the outcome into its JSON body, each stream event into its own events. Types
// only: other modules implement them without a run-time import of this one.
import type { AppError } from '../../errors/app-error.js';
import type { CapabilityNeed } from '../../models/capabilities.js';
import type { ChatParams, ChatTurn, ChunkRelay } from '../../models/spec.js';
import type { Principal } from '../accounts/authenticator.js';
import type { ChatOutcome, ChatStreamEvent } from './chat-service.js';

/** The chat turn a body asks for, before routing picks its model. */
export interface TurnCall {
  readonly messages: readonly ChatTurn[];
  /** The model's other parameters (tools, response_format, stop, …). */
  readonly params: ChatParams | undefined;
  readonly requestedModel: string | undefined;
  readonly maxTokens: number | undefined;
  /** The dialect's field that carried the limit, for error messages (default `max_tokens`). */
  readonly maxTokensParam?: string | undefined;
  readonly temperature: number | undefined;
  /** Answered as Server-Sent Events, or as one JSON body. */
  readonly stream: boolean;
  /** Stored in a conversation, or stateless. */
  readonly persist: boolean;
  /** A stateless stream that takes an upstream's own Chat Completions chunks (ChatRequest `relay`). */
  readonly relay?: ChunkRelay | undefined;
  readonly userId: string | null;
  readonly conversationId: string | null;
  /**
   * What the turn needs of its model beyond text, named by the dialect's own fields; read from
   * `messages` and `params` when the dialect gives none.
   */
  readonly needs?: readonly CapabilityNeed[] | undefined;
}

/** What a turn knows of its HTTP request, as plain values. */
export interface TurnContext {
  /** The route, as the usage ledger names it (`POST /v1/chat/completions`). */
  readonly route: string;
  readonly requestId: string;
  readonly caller: Principal;
  readonly headers: Readonly<Record<string, unknown>>;
}

/** A whole answer: sent as it is when text, else through the route's response schema. */
export interface DialectAnswer {
  readonly body: unknown;
  /** Named in `x-conversation-id` when given and not null (the OpenAI and Anthropic dialects). */
  readonly conversationId?: string | null | undefined;
}

/** One Server-Sent Event: an `event:` line when it is named, and a `data:` line of its JSON. */
export interface ServerSentEvent {
  readonly event?: string | undefined;
  readonly data: unknown;
}

/** The events one stream event became, and whether the stream ends with them. */
export interface EventBatch {
  readonly events: readonly ServerSentEvent[];
  readonly last: boolean;
  /** Events written as they are, before `events` (an upstream's own, relayed as they came). */
  readonly frames?: string | undefined;
}

/**
 * One streamed answer's translation, event by event. An `error` event (already logged) comes
 * last; `last` ends the stream early.
 */
export interface EventMapping {
  next(event: ChatStreamEvent): EventBatch | Promise<EventBatch>;
}

/** The model routing chose for a turn, and the limit on its answer. */
export interface RoutedModel {
  readonly model: string | undefined;
  readonly maxTokens: number | undefined;
}

/**
 * An answer from a dialect's own upstream instead of the chat service (Messages' pass-through to
 * a model of the `anthropic` provider), whole or as the dialect's events.
 */
export interface DirectAnswer {
  complete(signal: AbortSignal): Promise<DialectAnswer>;
  /** Its events; a failure after they began is told to `failed` and ends them with an error event. */
  openStream(
    signal: AbortSignal,
    failed: (error: AppError) => void,
  ): Promise<AsyncIterable<ServerSentEvent>>;
  /** The last event of a stream whose key was revoked or expired. */
  errorEvent(error: AppError): ServerSentEvent;
}

/** Who answers a turn once its model is chosen: the chat service (the model, its limit), or not. */
export type Upstream =
  | { readonly kind: 'chat'; readonly routed: RoutedModel }
  | { readonly kind: 'direct'; readonly answer: DirectAnswer };

/**
 * A dialect of the chat turn: `Call` is its turn (the `TurnCall` and what its answer needs). The
 * three hooks at the end are for the dialects that need them.
 */
export interface TurnDialect<Body, Call extends TurnCall> {
  /** The body as the turn it asks for, each field checked (a 400 names the dialect's field). */
  callOf(body: Body, context: TurnContext): Call;
  /** A whole answer as the dialect's body (and the conversation its header names). */
  answer(outcome: ChatOutcome, call: Call): DialectAnswer | Promise<DialectAnswer>;
  /** A streamed answer's translation; `failed` hears of a failure the dialect meets itself. */
  stream(call: Call, failed: (error: AppError) => void): EventMapping;
  /** The `data:` written after the last event (OpenAI's `[DONE]`), if any. */
  readonly done?: string | undefined;
  /** Responses: the turn completed before routing from what it continues (a chain's history). */
  prepare?(call: Call, context: TurnContext, signal: AbortSignal): Promise<Call>;
  /**
   * Messages: once routing chose the model, who answers — the dialect's own upstream (a
   * pass-through), or the chat service with the model's name and limit checked against it.
   */
  upstream?(routed: RoutedModel, call: Call, context: TurnContext): Upstream;
  /** Responses: an error of routing or of the call, in the client's field names. */
  clientError?(error: AppError, call: Call): AppError;
}
