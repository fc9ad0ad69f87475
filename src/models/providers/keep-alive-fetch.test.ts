// The shared upstream connection pool closes an idle connection before the upstream does: a request
// sent on a connection the upstream is closing at that moment fails as unreachable (seen as a rare
// 503 on a model without retries). Order of events only, no time bound.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { idleConnectionMs, keepAliveAgents, keepAliveFetch } from './keep-alive-fetch.js';

let server: Server | undefined;
afterEach(async () => {
  // The pool is the process's own (other files in this worker use it): nothing of it is destroyed
  // here; the test's one connection is closed by the time it ends.
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A server keeping idle connections `keepAliveMs` (and saying so), noting who closed each one. */
async function serverKeeping(keepAliveMs: number) {
  const closings: Array<Promise<'client closed first' | 'server closed first'>> = [];
  const listening = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.end('ok'));
  });
  server = listening;
  listening.keepAliveTimeout = keepAliveMs;
  listening.on('connection', (socket: Socket) => {
    let clientEnded = false;
    socket.on('end', () => (clientEnded = true));
    closings.push(
      new Promise((resolve) =>
        socket.on('close', () =>
          resolve(clientEnded ? 'client closed first' : 'server closed first'),
        ),
      ),
    );
  });
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}/`, closings };
}

describe('the upstream connection pool', () => {
  it('keeps an idle connection a bounded time, as Node’s global fetch does', () => {
    // Node's agents keep the options they were made with (untyped): an upstream that announces
    // nothing gets its idle connections closed after 4 s.
    const timeoutOf = (agent: object) =>
      (agent as { options: { timeout?: number } }).options.timeout;
    expect(idleConnectionMs).toBe(4_000);
    expect(timeoutOf(keepAliveAgents['http:'])).toBe(idleConnectionMs);
    expect(timeoutOf(keepAliveAgents['https:'])).toBe(idleConnectionMs);
  });

  it('closes an idle connection before the upstream’s announced keep-alive ends', async () => {
    // Announces `Keep-Alive: timeout=2`: the pool closes its side after a second of idleness.
    const { url, closings } = await serverKeeping(2_000);
    for (const body of ['one', 'two']) {
      const answer = await keepAliveFetch(url, { method: 'POST', body });
      expect(await answer.text()).toBe('ok');
    }
    // Both requests went over one connection, which the client (the pool) then closed.
    expect(closings).toHaveLength(1);
    expect(await closings[0]).toBe('client closed first');
  });
});
