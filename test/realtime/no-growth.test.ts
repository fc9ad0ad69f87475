// Memory that must not grow with WebSocket traffic (issue 17): the message validators are compiled
// once per process, not per connection (Ajv keeps every schema object it compiled), and neither
// channel leaves anything behind per closed connection — counted, and weighed on the heap after a
// forced GC against a budget per connection (a ratio, not a time).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledMessageValidators } from '../../src/modules/voice/realtime/protocol.schemas.js';
import { allDialects } from '../support/dialects.js';
import { startSpeechHarness, type SpeechHarness } from '../support/speech-harness.js';
import { bearer } from '../support/test-app.js';
import { connect } from '../support/ws-client.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** heapUsed after full collections (two: the first may leave finalised objects for the second). */
function settledHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe.each(allDialects)('WebSocket traffic leaves nothing behind ($name)', (dialect) => {
  let harness: SpeechHarness;
  let port: number;

  beforeAll(async () => {
    harness = await startSpeechHarness({ dialect });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    port = (harness.app.server.address() as AddressInfo).port;
  });
  afterAll(() => harness.close());

  /** One /v1/ws session: init, ready, a message the schema refuses, close. */
  async function generalSession(): Promise<void> {
    const socket = await connect(`ws://127.0.0.1:${port}/v1/ws`, bearer(harness.adminKey));
    socket.sendJson({ type: 'init', user_id: 'leak-check' });
    await socket.next('ready');
    socket.sendJson({ type: 'text', text: '' });
    await socket.next('error');
    socket.close();
    await socket.closed;
  }

  /** One voice stream: a session, ready, a bad message, close. */
  async function voiceSession(): Promise<void> {
    const created = await harness.app.inject({
      method: 'POST',
      url: '/v1/voice/sessions',
      headers: bearer(harness.adminKey),
      payload: { user_id: 'leak-check' },
    });
    const session = created.json<{ session_id: string; token: string }>();
    const socket = await connect(
      `ws://127.0.0.1:${port}/v1/voice/stream/${session.session_id}?token=${session.token}`,
    );
    await socket.next('ready');
    socket.sendJson({ type: 'audio' });
    await socket.next('error');
    socket.close();
    await socket.closed;
  }

  async function openSockets(): Promise<number> {
    const metrics = await harness.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: bearer(harness.adminKey),
    });
    return [...metrics.body.matchAll(/^platform_websocket_sessions\{[^}]*\} (\d+)/gm)].reduce(
      (sum, match) => sum + Number(match[1]),
      0,
    );
  }

  it('compiles the general channel’s validators once, however many connections send init', async () => {
    await generalSession();
    const afterOne = compiledMessageValidators();
    for (let index = 0; index < 200; index += 1) await generalSession();
    expect(compiledMessageValidators()).toBe(afterOne);
  });

  it('compiles the voice stream’s validators once, however many streams open', async () => {
    await voiceSession();
    const afterOne = compiledMessageValidators();
    for (let index = 0; index < 30; index += 1) await voiceSession();
    expect(compiledMessageValidators()).toBe(afterOne);
  });

  it('keeps no connection after it closes, and holds under 2 KiB of heap per closed session', async () => {
    // Warm-up: everything loaded on first use (validators, serializers, statements, JIT).
    for (let index = 0; index < 30; index += 1) await generalSession();
    const sessions = 300;
    const before = settledHeap();
    for (let index = 0; index < sessions; index += 1) await generalSession();
    const perSession = (settledHeap() - before) / sessions;
    // With the validators compiled per connection this was 15–16 KiB.
    expect(perSession).toBeLessThan(2048);
    await expect.poll(openSockets).toBe(0);
  });
});
