// Helpers shared by routes that call models: a signal that fires when the client goes away, and
// Server-Sent Events framing for async generators.
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { AppError } from '../errors/app-error.js';

/**
 * Aborts when the connection closes before the response was fully written, which is how a client
 * that hangs up shows itself (the request's own 'close' fires once its body has been read).
 */
export function clientGoneSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * A streamed answer that failed after it began: the client gets an error event, the log (whose
 * lines carry the request id) gets what happened and its cause.
 */
export function logStreamFailure(log: FastifyBaseLogger, error: AppError): void {
  log.warn({ err: error, cause: error.cause, code: error.code }, `stream failed: ${error.message}`);
}

/** `data: <json>` events; `done` (e.g. `[DONE]`) is written as-is after the last one. */
export function serverSentEvents(events: AsyncIterable<unknown>, done?: string): Readable {
  async function* frames(): AsyncGenerator<string> {
    for await (const event of events) yield `data: ${JSON.stringify(event)}\n\n`;
    if (done !== undefined) yield `data: ${done}\n\n`;
  }
  return Readable.from(frames(), { objectMode: false });
}

/** Sends a Server-Sent Events stream with the headers proxies need to pass it through unbuffered. */
export function sendEventStream(reply: FastifyReply, stream: Readable): FastifyReply {
  return reply
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('x-accel-buffering', 'no')
    .send(stream);
}
