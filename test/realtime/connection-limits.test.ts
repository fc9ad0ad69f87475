// The cap on WebSockets one key holds open at once (here 3), on both dialects: /v1/ws and voice
// streams count together; past the cap the upgrade answers the contract's 429 (rate_limit_exceeded,
// `window: "connections"`), also under a burst of concurrent attempts; other keys are not touched;
// a closed socket gives its slot back; a refused voice stream keeps its single-use token.
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startSpeechHarness, type SpeechHarness } from '../support/speech-harness.js';
import { bearer, createKey } from '../support/test-app.js';
import { connect, type TestSocket } from '../support/ws-client.js';

interface Refusal {
  status: number;
  body: { error: { code: string; type: string; limit: number; window: string } };
}

/** Connects, or answers the refused upgrade's status and JSON body. */
function attempt(url: string, headers: Record<string, string> = {}): Promise<WebSocket | Refusal> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.on('open', () => resolve(socket));
    socket.on('unexpected-response', (request, response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => {
        request.destroy();
        resolve({
          status: response.statusCode ?? 0,
          body: JSON.parse(Buffer.concat(parts).toString('utf8')) as Refusal['body'],
        });
      });
    });
    socket.on('error', reject);
  });
}

function closed(socket: WebSocket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.readyState === WebSocket.CLOSED) resolve();
    else socket.once('close', () => resolve());
  });
}

describe.each(allDialects)('WebSocket connections per key ($name)', (dialect) => {
  let harness: SpeechHarness;
  let base: string;

  beforeAll(async () => {
    harness = await startSpeechHarness({
      dialect,
      overrides: { speech: { worker_threads: 1, realtime: { max_connections_per_key: 3 } } },
    });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    base = `ws://127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
  });
  afterAll(() => harness.close());

  async function voiceSession(key: string): Promise<{ session_id: string; token: string }> {
    const response = await harness.app.inject({
      method: 'POST',
      url: '/v1/voice/sessions',
      headers: bearer(key),
      payload: { user_id: 'alice' },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json();
  }

  it('refuses the upgrade past the cap with the contract 429, and frees a slot on close', async () => {
    const { key } = await createKey(harness.app, harness.adminKey, { scopes: ['chat:write'] });
    const sockets: TestSocket[] = [];
    for (let index = 0; index < 3; index += 1)
      sockets.push(await connect(`${base}/v1/ws`, bearer(key)));
    const refused = await attempt(`${base}/v1/ws`, bearer(key));
    expect(refused).not.toBeInstanceOf(WebSocket);
    const { status, body } = refused as Refusal;
    expect(status).toBe(429);
    expect(body.error).toMatchObject({
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      limit: 3,
      window: 'connections',
    });
    // Another key is not touched by this one's cap.
    const other = await connect(`${base}/v1/ws`, bearer(harness.adminKey));
    other.close();
    // A socket that closes gives its slot back.
    sockets[0]!.close();
    await sockets[0]!.closed;
    let again = await attempt(`${base}/v1/ws`, bearer(key));
    while (!(again instanceof WebSocket)) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await attempt(`${base}/v1/ws`, bearer(key));
    }
    again.close();
    for (const socket of sockets.slice(1)) socket.close();
  });

  it('lets exactly the cap through a burst of 50 concurrent upgrades', async () => {
    const { key } = await createKey(harness.app, harness.adminKey, { scopes: ['chat:write'] });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => attempt(`${base}/v1/ws`, bearer(key))),
    );
    const opened = results.filter((result): result is WebSocket => result instanceof WebSocket);
    expect(opened).toHaveLength(3);
    expect(
      results.filter((result) => !(result instanceof WebSocket) && result.status === 429),
    ).toHaveLength(47);
    for (const socket of opened) socket.close();
    await Promise.all(opened.map(closed));
  });

  it('counts voice streams and /v1/ws together; a refused stream keeps its token', async () => {
    const { key } = await createKey(harness.app, harness.adminKey, {
      scopes: ['chat:write', 'voice:write', 'voice:read'],
    });
    const general = [
      await connect(`${base}/v1/ws`, bearer(key)),
      await connect(`${base}/v1/ws`, bearer(key)),
    ];
    const first = await voiceSession(key);
    const stream = await connect(
      `${base}/v1/voice/stream/${first.session_id}?token=${first.token}`,
    );
    await stream.next('ready');
    const second = await voiceSession(key);
    const secondUrl = `${base}/v1/voice/stream/${second.session_id}?token=${second.token}`;
    const refused = await attempt(secondUrl);
    expect((refused as Refusal).status).toBe(429);
    expect((refused as Refusal).body.error).toMatchObject({
      code: 'rate_limit_exceeded',
      limit: 3,
    });
    expect(((await attempt(`${base}/v1/ws`, bearer(key))) as Refusal).status).toBe(429);
    // Once a socket closes, the refused session's token still opens its stream.
    general[0]!.close();
    await general[0]!.closed;
    let opened = await attempt(secondUrl);
    while (!(opened instanceof WebSocket)) {
      expect(opened.status).toBe(429);
      await new Promise((resolve) => setTimeout(resolve, 20));
      opened = await attempt(secondUrl);
    }
    opened.close();
    stream.close();
    general[1]!.close();
  });
});
