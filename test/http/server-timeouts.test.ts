// The server's own limits on connections, seen from a raw socket: a request dribbled in too slowly
// (headers or body) is cut off with 408, an idle keep-alive connection is closed, and requests
// Node's parser or a plugin refuses get the contract's error body rather than Fastify's.
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

interface RawExchange {
  response: string;
  closedAfterMs: number;
}

/** Opens a socket, lets `feed` write to it, and collects what the server answers until it closes. */
function exchange(port: number, feed: (socket: Socket) => void): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1');
    let response = '';
    socket.on('data', (chunk: Buffer) => (response += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => resolve({ response, closedAfterMs: performance.now() - started }));
    socket.on('connect', () => feed(socket));
  });
}

function errorOf(raw: string): { status: number; code: string; type: string } {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const status = Number(head.split(' ')[1]);
  const parsed = JSON.parse(body) as { error: { code: string; type: string } };
  return { status, code: parsed.error.code, type: parsed.error.type };
}

// The three tests that wait for a server timeout (2 s, 1 s, 1 s) run at once, each on its own
// socket: the file waits for the longest, not for their sum.
describe.each(allDialects)('server timeouts and parser errors on $name', (dialect) => {
  let harness: TestApp;
  let port: number;
  const timers: NodeJS.Timeout[] = [];
  beforeAll(async () => {
    harness = await startTestApp({
      dialect,
      env: {
        REQUEST_TIMEOUT_MS: '2000',
        HEADERS_TIMEOUT_MS: '1000',
        KEEP_ALIVE_TIMEOUT_MS: '1000',
      },
    });
    await harness.app.listen({ host: '127.0.0.1', port: 0 });
    port = (harness.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    timers.forEach((timer) => clearInterval(timer));
    await harness.close();
  });

  it.concurrent('cuts off a body sent one byte at a time with 408 once the request timeout passes', async ({
    expect,
  }) => {
    const result = await exchange(port, (socket) => {
      socket.write(
        'POST /v1/conversations HTTP/1.1\r\nHost: x\r\n' +
          `Authorization: Bearer ${harness.adminKey}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{',
      );
      const drip = setInterval(() => {
        if (!socket.destroyed) socket.write(' ');
      }, 300);
      timers.push(drip);
      socket.on('close', () => clearInterval(drip));
    });
    expect(errorOf(result.response)).toEqual({
      status: 408,
      code: 'request_timeout',
      type: 'invalid_request_error',
    });
    // Not before the request timeout; that the server closed it at all is what the test waits for.
    expect(result.closedAfterMs).toBeGreaterThanOrEqual(1900);
  });

  it.concurrent('cuts off headers that never finish with 408 after the headers timeout', async ({
    expect,
  }) => {
    const result = await exchange(port, (socket) => {
      socket.write('GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    });
    expect(errorOf(result.response).status).toBe(408);
  });

  it.concurrent('closes an idle keep-alive connection after the keep-alive timeout', async ({
    expect,
  }) => {
    const result = await exchange(port, (socket) => {
      socket.write('GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    });
    expect(result.response).toMatch(/^HTTP\/1\.1 200/);
    expect(result.response).toMatch(/keep-alive: timeout=1/i);
    expect(result.closedAfterMs).toBeGreaterThanOrEqual(900);
  });

  it('answers a request that is not HTTP with the contract’s 400 body', async () => {
    const result = await exchange(port, (socket) => socket.write('HELLO THERE\r\n\r\n'));
    expect(errorOf(result.response)).toEqual({
      status: 400,
      code: 'malformed_request',
      type: 'invalid_request_error',
    });
  });

  it.each([
    '/docs/static/../../package.json',
    '/docs/static/%2e%2e/%2e%2e/package.json',
    '/docs/static/..\\..\\package.json',
    '/docs/static/no-such-file.js',
  ])(
    'answers %s (outside or missing from the docs’ files) with the contract’s 404',
    async (path) => {
      const result = await exchange(port, (socket) =>
        socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
      );
      expect(errorOf(result.response)).toEqual({
        status: 404,
        code: 'not_found',
        type: 'not_found_error',
      });
      expect(result.response).not.toContain('"name"');
    },
  );

  it('answers oversized headers with the contract’s 431 body', async () => {
    const result = await exchange(port, (socket) =>
      socket.write(`GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    expect(errorOf(result.response)).toMatchObject({ status: 431, code: 'headers_too_large' });
  });
});
