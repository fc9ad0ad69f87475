// The one turn handler every dialect's route calls (/v1/chat, /chat/completions, /v1/messages,
// /v1/responses): the dialect reads its body into a turn (turn-dialect.ts), and this does the rest
// once — a stream's watch over its key, the signal of a client that hangs up, the model chosen by
// routing among those that can serve the turn, the chat service's call (or the dialect's own
// upstream), and the answer sent as the dialect's JSON body or its Server-Sent Events.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CredentialWatch } from '../../auth/credential-watch.js';
import { AppError } from '../../errors/app-error.js';
import {
  guardAnswer,
  logStreamFailure,
  openGuarded,
  writeEventStream,
  type AnswerGuard,
} from '../../http/streaming.js';
import { principalOf } from '../../http/types.js';
import { hangUpOf, signalOf, type Cancellation } from '../../net/hang-up.js';
import { capabilityNeeds } from '../../models/capabilities.js';
import type { RoutingService } from '../routing/routing-service.js';
import type { ChatRequest, ChatService, ChatStreamEvent } from './chat-service.js';
import type {
  DialectAnswer,
  DirectAnswer,
  EventMapping,
  RoutedModel,
  ServerSentEvent,
  TurnCall,
  TurnContext,
  TurnDialect,
  Upstream,
} from './turn-dialect.js';

export interface TurnHandlerDependencies {
  readonly chat: Pick<ChatService, 'complete' | 'openStream'>;
  /** `model: "auto"` is routed; routing policies may forbid a named model or cap max_tokens. */
  readonly routing: Pick<RoutingService, 'resolveChatModel'>;
  /** Ends a stream whose key is revoked or expires. */
  readonly credentialWatch: CredentialWatch;
}

/** One request's turn, read and prepared: what every step after the body needs. */
interface Turn<Call extends TurnCall> {
  readonly dialect: TurnDialect<never, Call>;
  readonly call: Call;
  readonly context: TurnContext;
  /** Set for a stream: it ends when the key is revoked or expires. */
  readonly guard: AnswerGuard | null;
  /** The stream's guard's Cancel, or the client's hang-up (no AbortSignal made unless needed). */
  readonly signal: Cancellation;
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
}

export class TurnHandler {
  constructor(private readonly dependencies: TurnHandlerDependencies) {}

  /** One turn of `dialect`: routed, called, and answered whole or streamed. */
  async answer<Body, Call extends TurnCall>(
    dialect: TurnDialect<Body, Call>,
    body: Body,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<void> {
    const context: TurnContext = {
      route: `${request.method} ${request.routeOptions.url ?? request.url}`,
      requestId: request.id,
      caller: principalOf(request),
      headers: request.headers,
    };
    const read = dialect.callOf(body, context);
    // A stream also ends when its key is revoked or expires (the dialect's error event last).
    const guard = read.stream
      ? guardAnswer(reply, this.dependencies.credentialWatch, context.caller)
      : null;
    const signal: Cancellation = guard?.cancel ?? hangUpOf(reply.raw);
    const call =
      dialect.prepare === undefined ? read : await dialect.prepare(read, context, signalOf(signal));
    const turn: Turn<Call> = {
      dialect,
      call,
      context,
      guard,
      signal,
      request,
      reply,
    };
    const upstream = await this.inClientTerms(turn, () => this.upstreamOf(turn));
    if (upstream.kind === 'direct') await this.direct(turn, upstream.answer);
    else await this.chatTurn(turn, upstream.routed);
  }

  /** The model routing chooses among those that can serve the turn, and who answers with it. */
  private async upstreamOf<Call extends TurnCall>(turn: Turn<Call>): Promise<Upstream> {
    const { call, context, dialect } = turn;
    const needs = call.needs ?? capabilityNeeds(call.messages, call.params);
    const resolution = await this.dependencies.routing.resolveChatModel({
      caller: context.caller,
      requestedModel: call.requestedModel,
      messages: call.messages,
      maxTokens: call.maxTokens,
      conversationId: call.conversationId,
      signal: turn.signal,
      capabilities: needs.map((need) => need.capability),
    });
    const routed = { model: resolution.model, maxTokens: resolution.maxTokens };
    return dialect.upstream === undefined
      ? { kind: 'chat', routed }
      : dialect.upstream(routed, call, context);
  }

  /** The chat service's turn: its whole answer, or its events in the dialect's shapes. */
  private async chatTurn<Call extends TurnCall>(
    turn: Turn<Call>,
    routed: RoutedModel,
  ): Promise<void> {
    const { chat } = this.dependencies;
    const { call, dialect, guard } = turn;
    const request = chatRequestOf(turn, routed);
    if (guard === null) {
      const outcome = await this.inClientTerms(turn, () => chat.complete(request));
      sendAnswer(turn.reply, await dialect.answer(outcome, call));
      return;
    }
    const events = await this.inClientTerms(turn, () =>
      openGuarded(() => chat.openStream(request), guard, chatErrorEvent),
    );
    const failed = failureLog(turn);
    const frames = translatedFrames(events, dialect.stream(call, failed), turn, failed);
    void writeEventStream(turn.reply, frames);
  }

  /** The dialect's own upstream's answer, whole or as its events. */
  private async direct<Call extends TurnCall>(
    turn: Turn<Call>,
    answer: DirectAnswer,
  ): Promise<void> {
    const { guard, dialect } = turn;
    if (guard === null) {
      sendAnswer(turn.reply, await answer.complete(signalOf(turn.signal)));
      return;
    }
    const events = await openGuarded(
      () => answer.openStream(signalOf(turn.signal), failureLog(turn)),
      guard,
      (error) => answer.errorEvent(error),
    );
    void writeEventStream(turn.reply, directFrames(events, dialect.done));
  }

  /** Runs a step whose errors the client reads in its dialect's field names. */
  private async inClientTerms<Call extends TurnCall, T>(
    turn: Turn<Call>,
    step: () => Promise<T>,
  ): Promise<T> {
    try {
      return await step();
    } catch (error) {
      throw clientError(turn, error);
    }
  }
}

const chatErrorEvent = (error: AppError): ChatStreamEvent => ({ type: 'error', error });

/** A failure after a stream began: logged with the request's id (the client gets an event). */
function failureLog<Call extends TurnCall>(turn: Turn<Call>): (error: AppError) => void {
  return (error) => {
    logStreamFailure(turn.request.log, error);
  };
}

/** An error as the client reads it: in its dialect's field names where the dialect has its own. */
function clientError<Call extends TurnCall>(turn: Turn<Call>, error: unknown) {
  const { dialect, call } = turn;
  return error instanceof AppError && dialect.clientError !== undefined
    ? dialect.clientError(error, call)
    : error;
}

/** The chat service's request of a turn, with the model routing chose. */
function chatRequestOf<Call extends TurnCall>(
  { call, context, signal, request, reply }: Turn<Call>,
  routed: RoutedModel,
): ChatRequest {
  return {
    accountId: context.caller.accountId,
    apiKeyId: context.caller.keyId,
    userId: call.userId,
    conversationId: call.conversationId,
    persist: call.persist,
    messages: call.messages,
    model: routed.model,
    temperature: call.temperature,
    maxTokens: routed.maxTokens,
    maxTokensParam: call.maxTokensParam,
    params: call.params,
    signal,
    route: context.route,
    endUser: endUserOf(call),
    warn: budgetWarning(reply),
    cache: cacheBypassed(request) ? 'bypass' : undefined,
    relay: call.relay,
    cached: (hit) => {
      if (!reply.sent && !reply.raw.headersSent) void reply.header('x-cache', hit ? 'hit' : 'miss');
    },
  };
}

/** The client asked for a fresh answer: `Cache-Control: no-cache` or `no-store`. */
function cacheBypassed(request: FastifyRequest): boolean {
  const header = request.headers['cache-control'];
  return typeof header === 'string' && /(^|,)\s*no-(cache|store)\s*(,|$)/i.test(header);
}

/** A budget's soft limit crossed: said in X-Budget-Warning while the headers are still unsent. */
function budgetWarning(reply: FastifyReply): (warning: string) => void {
  return (warning) => {
    if (!reply.sent && !reply.raw.headersSent) void reply.header('x-budget-warning', warning);
  };
}

/** The end user a client named: the platform's `user_id`, else OpenAI's `user` (Anthropic's `metadata.user_id`). */
function endUserOf(call: TurnCall): string | null {
  const user = (call.params as { user?: unknown } | undefined)?.user;
  return call.userId ?? (typeof user === 'string' && user !== '' ? user : null);
}

function sendAnswer(reply: FastifyReply, answer: DialectAnswer): void {
  if (answer.conversationId !== undefined && answer.conversationId !== null) {
    void reply.header('x-conversation-id', answer.conversationId);
  }
  void reply.type('application/json; charset=utf-8').send(answer.body);
}

/** One event's lines: `event: <name>` when it is named, `data: <json>`, and the blank line. */
function frame(event: ServerSentEvent): string {
  const data = `data: ${JSON.stringify(event.data)}\n\n`;
  return event.event === undefined ? data : `event: ${event.event}\n${data}`;
}

/**
 * The frames of the chat service's events in the dialect's shapes. A failure is named in the
 * client's terms and logged (with the request's id) before the dialect sees it.
 */
async function* translatedFrames<Call extends TurnCall>(
  events: AsyncIterable<ChatStreamEvent>,
  mapping: EventMapping,
  turn: Turn<Call>,
  failed: (error: AppError) => void,
): AsyncGenerator<string> {
  for await (const event of events) {
    let next = event;
    if (event.type === 'error') {
      next = { type: 'error', error: clientError(turn, event.error) as AppError };
      failed(next.error);
    }
    const result = mapping.next(next);
    const batch = result instanceof Promise ? await result : result;
    if (batch.frames !== undefined) yield batch.frames;
    for (const out of batch.events) yield frame(out);
    if (batch.last) break;
  }
  if (turn.dialect.done !== undefined) yield `data: ${turn.dialect.done}\n\n`;
}

/** The frames of a dialect's own upstream's events. */
async function* directFrames(
  events: AsyncIterable<ServerSentEvent>,
  done: string | undefined,
): AsyncGenerator<string> {
  for await (const event of events) yield frame(event);
  if (done !== undefined) yield `data: ${done}\n\n`;
}
