// WebSocket turns are recorded under the key that opened the socket: a /v1/ws turn under the key of
// the upgrade, a voice-stream turn under the key that created the voice session. They were stored
// with key_id null and showed as "unattributed" in GET /v1/usage. Usage reads the ledger: each
// model call of a turn (the chat model's answer, and the speech a voice turn speaks) is a record.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startSpeechHarness, type SpeechHarness } from '../support/speech-harness.js';
import { bearer, createKey } from '../support/test-app.js';
import { connect } from '../support/ws-client.js';

interface UsageJson {
  totals: { requests: number };
  by_key: { key_id: string | null; totals: { requests: number } }[];
  by_model: { model: string | null; totals: { requests: number } }[];
  by_source: { source: string; totals: { requests: number } }[];
  recent_activity: { key_id: string | null; source: string }[];
}

describe.each(allDialects)('the key of WebSocket turns ($name)', (dialect) => {
  let harness: SpeechHarness;
  let origin: string;

  const usage = async (query = '') => {
    const response = await harness.app.inject({
      method: 'GET',
      url: `/v1/usage${query}`,
      headers: bearer(harness.adminKey),
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<UsageJson>();
  };

  beforeAll(async () => {
    harness = await startSpeechHarness({ dialect });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    origin = `127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
  });
  afterAll(() => harness.close());

  it('records a /v1/ws turn under the key that opened the socket', async () => {
    const key = await createKey(harness.app, harness.adminKey, {
      name: 'socket key',
      scopes: ['chat:write'],
    });
    const socket = await connect(`ws://${origin}/v1/ws`, bearer(key.key));
    socket.sendJson({ type: 'init', user_id: 'ws-user' });
    await socket.next('ready');
    socket.sendJson({ type: 'text', text: 'Hello over the socket.' });
    await socket.next('turn_end');
    socket.close();

    const mine = await usage(`?key_id=${key.id}`);
    expect(mine.totals.requests).toBe(1);
    expect(mine.by_key).toEqual([
      expect.objectContaining({ key_id: key.id, totals: expect.objectContaining({ requests: 1 }) }),
    ]);
    const all = await usage();
    expect(all.by_key.map((group) => group.key_id)).not.toContain(null);
    // The latest calls, whatever the filter: under their key, none without one.
    expect(all.recent_activity.map((entry) => entry.key_id)).toContain(key.id);
    expect(all.recent_activity.map((entry) => entry.key_id)).not.toContain(null);
  });

  it("records a voice-stream turn under the voice session's key", async () => {
    const key = await createKey(harness.app, harness.adminKey, {
      name: 'voice key',
      scopes: ['chat:write', 'voice:write'],
    });
    const created = await harness.app.inject({
      method: 'POST',
      url: '/v1/voice/sessions',
      headers: bearer(key.key),
      payload: { user_id: 'voice-user' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const session = created.json<{ session_id: string; token: string }>();
    const socket = await connect(
      `ws://${origin}/v1/voice/stream/${session.session_id}?token=${session.token}`,
    );
    await socket.next('ready');
    socket.sendJson({ type: 'text', text: 'Good morning.' });
    await socket.next('turn_end');
    socket.close();

    const mine = await usage(`?key_id=${key.id}`);
    // The answer, and its speech.
    expect(mine.totals.requests).toBe(2);
    expect(mine.by_model.map((group) => group.totals.requests)).toEqual([1, 1]);
    expect(mine.by_key).toEqual([
      expect.objectContaining({ key_id: key.id, totals: expect.objectContaining({ requests: 2 }) }),
    ]);
    const all = await usage();
    expect(all.by_key.map((group) => group.key_id)).not.toContain(null);
    // The latest calls, whatever the filter: under their key, none without one.
    expect(all.recent_activity.map((entry) => entry.key_id)).toContain(key.id);
    expect(all.recent_activity.map((entry) => entry.key_id)).not.toContain(null);
  });
});
