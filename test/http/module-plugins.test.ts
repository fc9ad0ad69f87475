// Each feature module's routes are an encapsulated Fastify plugin (src/http/feature-plugin.ts):
// a context that adds schemas of its own still validates with the service's strict validator (no
// type coercion, unknown fields named), not Fastify's default one; and a WebSocket upgrade that any
// context answers over HTTP has its socket closed, as the WebSocket plugin of the voice module's
// own context cannot do for the others.
import { connect as tcpConnect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { bearer, startTestApp, type TestApp } from '../support/test-app.js';

const sqlite = allDialects.find((dialect) => dialect.name === 'sqlite')!;

interface Refusal {
  status: number;
  error: { code: string; param: string | null };
}

/** Sends a WebSocket upgrade to `path`; resolves with the answer once the server closed the socket. */
function upgradeAnswer(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = tcpConnect(port, '127.0.0.1', () => {
      socket.write(
        [
          `GET ${path} HTTP/1.1`,
          `Host: 127.0.0.1:${port}`,
          'Connection: Upgrade',
          'Upgrade: websocket',
          'Sec-WebSocket-Version: 13',
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
          '',
          '',
        ].join('\r\n'),
      );
    });
    const parts: Buffer[] = [];
    socket.on('data', (part: Buffer) => parts.push(part));
    socket.on('error', reject);
    // Only the server ends the connection here: the client never does.
    socket.on('close', () => resolve(Buffer.concat(parts).toString('utf8')));
  });
}

describe('feature modules as encapsulated plugins', () => {
  let harness: TestApp;
  let port: number;

  beforeAll(async () => {
    harness = await startTestApp({ dialect: sqlite });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    port = (harness.app.server.address() as AddressInfo).port;
  });
  afterAll(() => harness.close());

  async function refusal(url: string, payload: Record<string, unknown>): Promise<Refusal> {
    const response = await harness.app.inject({
      method: 'POST',
      url,
      headers: bearer(harness.adminKey),
      payload,
    });
    return { status: response.statusCode, error: response.json<Pick<Refusal, 'error'>>().error };
  }

  it('keep the strict validator in a context that adds schemas of its own', async () => {
    // Layout, routing and agents each add shared schemas (app.addSchema) in their own context;
    // Fastify's default validator would turn 5 into "5" and "7" into 7, and drop unknown fields.
    const cases: [string, Record<string, unknown>, string][] = [
      ['/v1/layout', { message: 5 }, 'message'],
      ['/v1/layout', { message: 'Hello.', unknown_field: 1 }, 'unknown_field'],
      [
        '/v1/routing/policies',
        { name: 'p', priority: '7', actions: { max_tokens: 9 } },
        'priority',
      ],
      ['/v1/routing/route', { message: 5 }, 'message'],
      ['/v1/agents', { name: 5, agent_type: 'GenerationAgent', configuration: {} }, 'name'],
    ];
    for (const [url, payload, param] of cases) {
      const answer = await refusal(url, payload);
      expect(answer, `${url} ${JSON.stringify(payload)}`).toMatchObject({
        status: 400,
        error: { code: 'invalid_parameter', param },
      });
    }
  });

  it('close the socket of an upgrade that a route or the not-found handler answers', async () => {
    // An unknown path (the app's not-found handler), a module's HTTP route, and a WebSocket route
    // refusing a missing key: each answer arrives, then the server closes the connection.
    expect(await upgradeAnswer(port, '/v1/no-such-route')).toMatch(/^HTTP\/1\.1 404 /);
    expect(await upgradeAnswer(port, '/v1/health')).toMatch(/^HTTP\/1\.1 200 /);
    expect(await upgradeAnswer(port, '/v1/ws')).toMatch(/^HTTP\/1\.1 401 /);
  });
});
