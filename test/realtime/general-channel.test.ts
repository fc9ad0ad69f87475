// The general WebSocket /v1/ws with a real client on both dialects: its three ways of presenting a
// key, init → ready, text turns, audio utterances (whole or in chunks) with spoken answers, the
// scopes audio needs, errors, and the configuration and AsyncAPI documents.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startSpeechHarness, type SpeechHarness } from '../support/speech-harness.js';
import { bearer, createKey } from '../support/test-app.js';
import { connect, refusal } from '../support/ws-client.js';

const wav = readFileSync(new URL('../fixtures/audio/numbers.wav', import.meta.url));
const numberWords = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

interface ErrorJson {
  code: string;
  param: string | null;
  required_scope?: string;
}

describe.each(allDialects)('the general WebSocket /v1/ws ($name)', (dialect) => {
  let harness: SpeechHarness;
  let url: string;

  beforeAll(async () => {
    harness = await startSpeechHarness({ dialect });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    url = `ws://127.0.0.1:${(harness.app.server.address() as AddressInfo).port}/v1/ws`;
    // The audio thread starts and loads eSpeak NG here, within the hook's time, rather than in the
    // first voice init (whose 'ready' waits for the voice check): on a loaded machine that start
    // took longer than a message is waited for.
    const voices = await harness.app.inject({
      method: 'GET',
      url: '/v1/speech/voices?model=espeak-ng',
      headers: bearer(harness.adminKey),
    });
    expect(voices.statusCode, voices.body).toBe(200);
  });
  afterAll(() => harness.close());

  it('takes the key as Bearer, X-API-Key or ?api_key=, and refuses a missing or weak one', async () => {
    for (const socket of [
      await connect(url, bearer(harness.adminKey)),
      await connect(url, { 'x-api-key': harness.adminKey }),
      await connect(`${url}?api_key=${harness.adminKey}`),
    ]) {
      socket.sendJson({ type: 'init' });
      expect(await socket.next('ready')).toMatchObject({ model: 'fake-chat', speech: false });
      socket.close();
    }
    expect(await refusal(url)).toBe('HTTP 401');
    const reader = await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] });
    expect(await refusal(url, bearer(reader.key))).toBe('HTTP 403');
  });

  it('answers a text turn after init, stored in the conversation it names', async () => {
    const created = await harness.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: bearer(harness.adminKey),
      payload: { user_id: 'bob' },
    });
    const conversationId = created.json<{ id: string }>().id;
    const socket = await connect(url, bearer(harness.adminKey));
    socket.sendJson({ type: 'text', text: 'too early' });
    expect((await socket.next('error')).error).toMatchObject({
      code: 'invalid_parameter',
      param: 'type',
    });
    socket.sendJson({ type: 'init', user_id: 'bob', conversation_id: conversationId });
    expect((await socket.next('ready')).conversation_id).toBe(conversationId);
    socket.sendJson({ type: 'text', text: 'Hello over the socket.' });
    const final = await socket.next('turn_end');
    expect(final).toMatchObject({ conversation_id: conversationId, interrupted: false });
    const deltas = socket.messages.filter(
      (message) => message.type === 'text_response' && message.final === false,
    );
    expect(deltas.map((message) => message.delta).join('')).toBe('Echo: Hello over the socket.');
    expect(socket.messages.some((message) => message.type === 'audio_response')).toBe(false);
    const history = await harness.app.inject({
      method: 'GET',
      url: `/v1/conversations/${conversationId}/messages`,
      headers: bearer(harness.adminKey),
    });
    expect(history.json<{ messages: unknown[] }>().messages).toHaveLength(2);
    socket.close();
  });

  it('transcribes an audio utterance sent in chunks and speaks the answer', async () => {
    const socket = await connect(url, bearer(harness.adminKey));
    socket.sendJson({
      type: 'init',
      voice: { enabled: true, voice_id: 'en-us', audio_format: 'wav' },
    });
    expect(await socket.next('ready')).toMatchObject({
      speech: true,
      tts_model: 'espeak-ng',
      voice_id: 'en-us',
      audio_format: 'wav',
    });
    const half = Math.floor(wav.length / 2);
    socket.sendJson({
      type: 'audio',
      audio: wav.subarray(0, half).toString('base64'),
      format: 'wav',
      final: false,
    });
    socket.sendJson({
      type: 'audio',
      audio: wav.subarray(half).toString('base64'),
      format: 'linear16',
      sample_rate: 16000,
    });
    const transcript = await socket.next('transcript');
    expect(transcript.is_final).toBe(true);
    expect(
      String(transcript.text)
        .split(' ')
        .filter((word) => numberWords.includes(word)).length,
    ).toBeGreaterThanOrEqual(4);
    const audio = await socket.next('audio_response');
    expect(audio).toMatchObject({ format: 'wav', sample_rate: 22050 });
    expect(Buffer.from(String(audio.audio), 'base64').subarray(0, 4).toString()).toBe('RIFF');
    await socket.next('turn_end');
    socket.close();
    // Recognition and synthesis each get the 30 s their waits above allow, not 30 s together.
  }, 120_000);

  it('needs voice:read for audio in and voice:write for audio out', async () => {
    const chatOnly = await createKey(harness.app, harness.adminKey, { scopes: ['chat:write'] });
    const socket = await connect(url, bearer(chatOnly.key));
    socket.sendJson({ type: 'init', voice: { enabled: true } });
    expect((await socket.next('error')).error).toMatchObject({
      code: 'insufficient_permissions',
      required_scope: 'voice:write',
    } satisfies Partial<ErrorJson>);
    socket.sendJson({ type: 'init' });
    await socket.next('ready');
    socket.sendJson({ type: 'audio', audio: wav.toString('base64') });
    expect((await socket.next('error')).error).toMatchObject({
      code: 'insufficient_permissions',
      required_scope: 'voice:read',
    });
    socket.sendJson({ type: 'hello' });
    expect((await socket.next('error')).error).toMatchObject({ code: 'unknown_message_type' });
    socket.sendJson({ type: 'init', model: 'espeak-ng' });
    expect((await socket.next('error')).error).toMatchObject({
      code: 'invalid_parameter',
      param: 'model',
    });
    socket.socket.send(Buffer.from([1, 2, 3]));
    expect((await socket.next('error')).error).toMatchObject({
      code: 'invalid_parameter',
      param: 'type',
    });
    socket.close();
  });

  it('describes itself in /v1/ws/config and /asyncapi.json', async () => {
    const config = await harness.app.inject({
      method: 'GET',
      url: '/v1/ws/config',
      headers: bearer(harness.adminKey),
    });
    expect(config.statusCode).toBe(200);
    const body = config.json<{
      ws_url: string;
      server_messages: Record<string, string[]>;
      close_codes: Record<string, string>;
    }>();
    expect(body.ws_url).toBe('ws://localhost:80/v1/ws');
    expect(Object.keys(body.server_messages)).toEqual(
      expect.arrayContaining([
        'transcript',
        'text_response',
        'audio_response',
        'interrupt',
        'error',
        'ready',
      ]),
    );
    expect(body.close_codes['4401']).toContain('revoked');
    const asyncapi = await harness.app.inject({ method: 'GET', url: '/asyncapi.json' });
    const document = asyncapi.json<{
      asyncapi: string;
      channels: Record<string, { address: string; messages: Record<string, { name: string }> }>;
    }>();
    expect(document.asyncapi).toBe('3.0.0');
    expect(document.channels.general!.address).toBe('/v1/ws');
    expect(document.channels.voiceStream!.address).toBe('/v1/voice/stream/{session_id}');
    const names = Object.values(document.channels.general!.messages).map((message) => message.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'init',
        'text',
        'audio',
        'transcript',
        'text_response',
        'audio_response',
        'interrupt',
        'error',
        'turn_end',
      ]),
    );
  });
});
