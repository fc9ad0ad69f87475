// An event stream written straight to the response (writeEventStream), on a real Fastify server:
// the reply's headers go with it, a frames' iterator that fails before anything was written
// answers the contract's 500, one that fails after ends the connection, and a client that goes
// away has the iterator returned.
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { writeEventStream } from './streaming.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/**
 * A server whose one route writes `frames()` as an event stream; `finished` settles when its
 * onResponse hook ran, `closed` when a client's connection closed on the server's side.
 */
async function serving(frames: () => AsyncIterable<string>) {
  const server = Fastify({ logger: false });
  let markFinished = (): void => undefined;
  const finished = new Promise<void>((resolve) => (markFinished = resolve));
  server.addHook('onResponse', (_request, _reply, done) => {
    markFinished();
    done();
  });
  let markClosed = (): void => undefined;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  server.server.on('connection', (socket) => socket.once('close', () => markClosed()));
  server.post('/stream', (_request, reply) => {
    void reply.header('x-request-id', 'req_1');
    void writeEventStream(reply, frames());
    return reply;
  });
  await server.listen({ port: 0, host: '127.0.0.1' });
  app = server;
  return { port: (server.server.address() as AddressInfo).port, finished, closed };
}

/** The whole answer, or how it ended when the connection was cut. */
function post(port: number) {
  return new Promise<{
    status: number;
    headers: Record<string, unknown>;
    body: string;
    cut: boolean;
  }>((resolve, reject) => {
    let answered = false;
    const outgoing = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/stream' },
      (incoming) => {
        answered = true;
        let body = '';
        incoming.setEncoding('utf8');
        incoming.on('data', (part: string) => (body += part));
        // 'close' comes either way: after the whole answer, or when the connection was cut.
        incoming.on('close', () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body,
            cut: !incoming.complete,
          }),
        );
        incoming.on('error', () => undefined);
      },
    );
    // Cut before the answer's head got out: a hang-up (the frame written was still corked).
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      if (answered) return;
      if (error.code === 'ECONNRESET') resolve({ status: 0, headers: {}, body: '', cut: true });
      else reject(error);
    });
    outgoing.end();
  });
}

/** `texts` as the frames' iterator, then `failure` thrown when given. */
async function* framesOf(texts: string[], failure?: Error): AsyncGenerator<string> {
  for (const text of texts) yield await Promise.resolve(text);
  if (failure !== undefined) throw failure;
}

describe('writeEventStream', () => {
  it("writes the frames with the reply's headers and the event-stream ones, then finishes", async () => {
    const { port, finished } = await serving(() => framesOf(['data: 1\n\n', 'data: 2\n\n']));
    const answer = await post(port);
    expect(answer).toMatchObject({ status: 200, body: 'data: 1\n\ndata: 2\n\n', cut: false });
    expect(answer.headers).toMatchObject({
      'x-request-id': 'req_1',
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    // The onResponse hooks (the request log, the metrics) ran once it finished.
    await finished;
  });

  it("answers the contract's 500 when the frames fail before the first one", async () => {
    const { port } = await serving(() => framesOf([], new Error('secret detail of the failure')));
    const answer = await post(port);
    expect(answer.status).toBe(500);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['x-request-id']).toBe('req_1');
    expect(answer.headers['x-accel-buffering']).toBeUndefined();
    const body = JSON.parse(answer.body) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('internal_error');
    expect(answer.body).not.toContain('secret detail');
  });

  it('cuts the connection when the frames fail after the first one', async () => {
    const { port } = await serving(() => framesOf(['data: 1\n\n'], new Error('failed mid-way')));
    const answer = await post(port);
    // Never an answer that looks whole: the client sees the stream (or the request) cut.
    expect(answer.cut).toBe(true);
    expect(answer.body).not.toContain('internal_error');
  });

  it("returns the frames' iterator when the client goes away", async () => {
    let release = (): void => undefined;
    let wentOn = false;
    let markReturned = (): void => undefined;
    const returned = new Promise<void>((resolve) => (markReturned = resolve));
    const { port, closed } = await serving(async function* () {
      try {
        yield 'data: 1\n\n';
        // Holds until the client is gone, then offers more frames.
        await new Promise<void>((resolve) => (release = resolve));
        yield 'data: 2\n\n';
        wentOn = true;
        yield 'data: 3\n\n';
      } finally {
        markReturned();
      }
    });
    await new Promise<void>((resolve) => {
      const outgoing = request(
        { host: '127.0.0.1', port, method: 'POST', path: '/stream' },
        (incoming) => {
          incoming.once('data', () => {
            outgoing.destroy();
            resolve();
          });
        },
      );
      outgoing.on('error', () => undefined);
      outgoing.end();
    });
    await closed;
    release();
    // The writer stopped at the next frame and returned the iterator (its `finally` ran).
    await returned;
    expect(wentOn).toBe(false);
  });
});
