// Helpers shared by routes that call models: a signal that fires when the client goes away (or,
// for event streams, when the key behind them is revoked), and Server-Sent Events framed from async
// generators and written straight to the response.
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { Principal } from '../modules/accounts/authenticator.js';
import type { CredentialEnd, CredentialWatch } from '../auth/credential-watch.js';
import { AppError } from '../errors/app-error.js';
import { hangUpOf, type Cancel } from '../net/hang-up.js';

/**
 * Aborts when the connection closes before the response was fully written, which is how a client
 * that hangs up shows itself (the request's own 'close' fires once its body has been read).
 */
export function clientGoneSignal(reply: FastifyReply): AbortSignal {
  return hangUpOf(reply.raw).signal;
}

/**
 * Writes an event stream's frames straight to the response as they come, with the headers the
 * reply holds so far (request id, rate limits, CORS, cache) and those proxies need: not through a
 * `Readable` piped into it, whose chunks outlived two young-generation collections (a relayed
 * answer of 120 chunks promoted about 55 KB per request that way, 12 KB this way, and cost 7-18 %
 * more CPU; docs/decisions.md). Fastify's onResponse hooks (the request log, the metrics) still
 * run when the response finishes; the streaming routes have no onSend hook to skip. A client that
 * goes away stops the writing, and the frames' iterator is returned (its producers clean up).
 */
export async function writeEventStream(
  reply: FastifyReply,
  frames: AsyncIterable<string>,
): Promise<void> {
  const raw = reply.raw;
  const headers = reply.getHeaders();
  const status = reply.statusCode;
  reply.hijack();
  try {
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined) raw.setHeader(name, value);
    }
    raw.statusCode = status;
    raw.setHeader('content-type', 'text/event-stream; charset=utf-8');
    raw.setHeader('cache-control', 'no-cache');
    raw.setHeader('x-accel-buffering', 'no');
    for await (const text of frames) {
      if (raw.destroyed) break;
      if (!raw.write(text)) await drained(raw);
    }
  } catch (error) {
    // The frames' producers answer failures as the dialect's error event: this one was unforeseen
    // (or a header the response refused). Nothing is thrown: no one awaits this.
    reply.log.error({ err: error }, 'event stream failed');
    if (!raw.headersSent) {
      raw.removeHeader('cache-control');
      raw.removeHeader('x-accel-buffering');
      raw.statusCode = 500;
      raw.setHeader('content-type', 'application/json; charset=utf-8');
      raw.end(
        JSON.stringify(
          new AppError('internal_error', 'The stream failed; it was logged.').toBody(),
        ),
      );
    } else raw.destroy();
    return;
  }
  if (!raw.destroyed) raw.end();
}

/** Resolves once the response takes more, or is gone. */
function drained(raw: FastifyReply['raw']): Promise<void> {
  if (raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      raw.off('drain', done);
      raw.off('close', done);
      resolve();
    };
    raw.on('drain', done);
    raw.on('close', done);
  });
}

/**
 * A streamed answer that failed after it began: the client gets an error event, the log (whose
 * lines carry the request id) gets what happened and its cause.
 */
export function logStreamFailure(log: FastifyBaseLogger, error: AppError): void {
  log.warn({ err: error, cause: error.cause, code: error.code }, `stream failed: ${error.message}`);
}

/** The frames of `data: <json>` events, for `writeEventStream`. */
export async function* serverSentEvents(events: AsyncIterable<unknown>): AsyncGenerator<string> {
  for await (const event of events) yield `data: ${JSON.stringify(event)}\n\n`;
}

/**
 * A long-lived answer's signal (an event stream): it aborts when the client goes away, and when
 * the key behind the request is revoked or expires (seen by the credential watch within a second on
 * every instance, at once on the one that revoked it); `ended` then holds the error to end with.
 */
export interface AnswerGuard {
  /** Aborted when the key ends or the client hangs up (an AbortSignal only when asked for). */
  readonly cancel: Cancel;
  /** The contract's 401 when a revoked or expired key ended the answer; null otherwise. */
  readonly ended: AppError | null;
  /** Stops watching the key (also done when the connection closes). */
  dispose(): void;
}

function credentialError(why: CredentialEnd): AppError {
  return why.code === 'expired_api_key'
    ? new AppError('expired_api_key', 'The API key of this stream expired; the stream was ended.')
    : new AppError(
        'revoked_api_key',
        'The API key of this stream was revoked; the stream was ended.',
      );
}

export function guardAnswer(
  reply: FastifyReply,
  watch: CredentialWatch,
  principal: Principal,
): AnswerGuard {
  const cancel = hangUpOf(reply.raw);
  let ended: AppError | null = null;
  const unwatch = watch.add({
    keyId: principal.keyId,
    sessionExpiresAtMs: null,
    tier: principal.tier,
    accountTier: principal.accountTier,
    end: (why) => {
      ended = credentialError(why);
      cancel.abort(ended);
    },
  });
  reply.raw.once('close', unwatch);
  return {
    cancel,
    get ended() {
      return ended;
    },
    dispose: unwatch,
  };
}

/**
 * The events of a guarded answer; when the key's revocation or expiry ended them, the error event
 * `errorEvent` makes of the contract's 401 comes last (the SSE `error` event of the stream).
 */
export async function* untilCredentialsEnd<E>(
  events: AsyncIterable<E>,
  guard: AnswerGuard,
  errorEvent: (error: AppError) => E,
): AsyncGenerator<E> {
  try {
    for await (const event of events) {
      if (guard.ended !== null) break;
      yield event;
    }
    if (guard.ended !== null) yield errorEvent(guard.ended);
  } finally {
    guard.dispose();
  }
}

/**
 * Opens a guarded answer's events: a key revoked while the model was being asked is the key's 401,
 * not an aborted request; once open, the events end as `untilCredentialsEnd` ends them.
 */
export async function openGuarded<E>(
  open: () => Promise<AsyncIterable<E>>,
  guard: AnswerGuard,
  errorEvent: (error: AppError) => E,
): Promise<AsyncGenerator<E>> {
  let events: AsyncIterable<E>;
  try {
    events = await open();
  } catch (error) {
    throw guard.ended ?? error;
  }
  return untilCredentialsEnd(events, guard, errorEvent);
}
