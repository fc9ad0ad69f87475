// A cancellation told once to each listener and to a signal made before or after it, with its
// reason; the client's hang-up over a real HTTP connection, never for an answer written in full.
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Cancel, hangUpOf, signalOf } from './hang-up.js';

let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A server whose one response is handed to the test, and a client request to it. */
async function exchange(): Promise<{
  response: ServerResponse;
  hangUp: () => void;
  answered: Promise<string>;
}> {
  let take: (response: ServerResponse) => void = () => undefined;
  const taken = new Promise<ServerResponse>((resolve) => (take = resolve));
  server = createServer((_incoming, response) => take(response));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const outgoing = request({ host: '127.0.0.1', port, method: 'POST', agent: false });
  const answered = new Promise<string>((resolve) => {
    outgoing.on('response', (incoming) => {
      let text = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (part: string) => (text += part));
      incoming.on('end', () => resolve(text));
    });
    outgoing.on('error', () => resolve('(hung up)'));
  });
  outgoing.end('{}');
  return { response: await taken, hangUp: () => outgoing.destroy(), answered };
}

const closed = (response: ServerResponse) =>
  new Promise<void>((resolve) => response.once('close', () => resolve()));

describe('Cancel', () => {
  it('aborts once, with its reason, a signal made before or after it', () => {
    const before = new Cancel();
    const early = before.signal;
    const reason = new Error('the key was revoked');
    const heard: string[] = [];
    before.addEventListener('abort', () => heard.push('abort'));
    before.abort(reason);
    before.abort(new Error('again'));
    expect(heard).toEqual(['abort']);
    expect(early.aborted).toBe(true);
    expect(early.reason).toBe(reason);
    const after = new Cancel();
    after.abort(reason);
    expect(after.aborted).toBe(true);
    expect(after.signal.reason).toBe(reason);
    // Without a reason, the signal's is the standard AbortError.
    const plain = new Cancel();
    plain.abort();
    expect((plain.signal.reason as DOMException).name).toBe('AbortError');
  });

  it('calls a listener added twice once, and the others when one throws', async () => {
    const cancel = new Cancel();
    const heard: string[] = [];
    const once = () => heard.push('once');
    cancel.addEventListener('abort', once);
    cancel.addEventListener('abort', once);
    cancel.addEventListener('abort', () => {
      throw new Error('a listener failed');
    });
    cancel.addEventListener('abort', () => heard.push('after'));
    const thrown = new Promise<unknown>((resolve) => {
      const listeners = process.listeners('uncaughtException');
      process.removeAllListeners('uncaughtException');
      process.once('uncaughtException', (error) => {
        for (const listener of listeners) process.on('uncaughtException', listener);
        resolve(error);
      });
    });
    cancel.abort();
    expect(heard).toEqual(['once', 'after']);
    expect(((await thrown) as Error).message).toBe('a listener failed');
  });
});

describe('hangUpOf', () => {
  it('tells its listeners and its signal once the client goes before the answer ends', async () => {
    const { response, hangUp } = await exchange();
    const gone = hangUpOf(response);
    const early = gone.signal;
    const heard: string[] = [];
    const removed = () => heard.push('removed');
    gone.addEventListener('abort', () => heard.push('first'), { once: true });
    gone.addEventListener('abort', removed);
    gone.addEventListener('abort', () => heard.push('second'));
    gone.removeEventListener('abort', removed);
    expect(gone.aborted).toBe(false);
    expect(early.aborted).toBe(false);
    const ended = closed(response);
    hangUp();
    await ended;
    expect(gone.aborted).toBe(true);
    expect(heard).toEqual(['first', 'second']);
    expect(early.aborted).toBe(true);
    // Made after the client left: aborted from the start. A listener added now is never called.
    expect(gone.signal).toBe(early);
    gone.addEventListener('abort', () => heard.push('late'));
    expect(heard).toEqual(['first', 'second']);
  });

  it('makes its signal aborted when asked for only after the client left', async () => {
    const { response, hangUp } = await exchange();
    const gone = hangUpOf(response);
    const ended = closed(response);
    hangUp();
    await ended;
    expect(signalOf(gone).aborted).toBe(true);
  });

  it('is never aborted for an answer written in full, and passes an AbortSignal through', async () => {
    const { response, answered } = await exchange();
    const gone = hangUpOf(response);
    const heard: string[] = [];
    gone.addEventListener('abort', () => heard.push('abort'));
    const ended = closed(response);
    response.end('done');
    expect(await answered).toBe('done');
    await ended;
    expect(gone.aborted).toBe(false);
    expect(gone.signal.aborted).toBe(false);
    expect(heard).toEqual([]);
    const own = new AbortController().signal;
    expect(signalOf(own)).toBe(own);
  });
});
