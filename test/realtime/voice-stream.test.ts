// Voice sessions and the voice stream with a real WebSocket client on both dialects: session
// creation and its checks, a full spoken turn stored in the conversation, typed turns, every error
// message, the single-use token, rate limits per turn, barge-in, and the socket's closing rules.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects, type DialectUnderTest } from '../support/dialects.js';
import {
  startSpeechHarness,
  type SpeechHarness,
  type SpeechHarnessOptions,
} from '../support/speech-harness.js';
import { bearer, createKey } from '../support/test-app.js';
import type { UpstreamBehaviour } from '../support/fake-upstream.js';
import { connect, refusal, streamPcm, type TestSocket } from '../support/ws-client.js';

/** The spoken numbers at 16 kHz (the WAV's header skipped), then a second of silence. */
const numbersPcm = readFileSync(new URL('../fixtures/audio/numbers.wav', import.meta.url)).subarray(
  44,
);
const silence = (seconds: number) => Buffer.alloc(Math.round(seconds * 32000));
const numberWords = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

interface SessionJson {
  session_id: string;
  token: string;
  websocket_url: string;
  [field: string]: unknown;
}

interface ErrorJson {
  error: { code: string; param: string | null; message: string };
}

async function listening(options: SpeechHarnessOptions): Promise<SpeechHarness & { port: number }> {
  const harness = await startSpeechHarness(options);
  await harness.app.listen({ port: 0, host: '127.0.0.1' });
  return { ...harness, port: (harness.app.server.address() as AddressInfo).port };
}

async function createSession(
  harness: SpeechHarness,
  body: Record<string, unknown> = {},
  key = harness.adminKey,
): Promise<SessionJson> {
  const response = await harness.app.inject({
    method: 'POST',
    url: '/v1/voice/sessions',
    headers: bearer(key),
    payload: { user_id: 'alice', ...body },
  });
  if (response.statusCode !== 201) throw new Error(`${response.statusCode} ${response.body}`);
  return response.json<SessionJson>();
}

function streamUrl(harness: { port: number }, session: SessionJson): string {
  return `ws://127.0.0.1:${harness.port}/v1/voice/stream/${session.session_id}?token=${session.token}`;
}

async function open(harness: SpeechHarness & { port: number }, body: Record<string, unknown> = {}) {
  const session = await createSession(harness, body);
  const socket = await connect(streamUrl(harness, session));
  await socket.next('ready');
  return { session, socket };
}

describe.each(allDialects)(
  'voice sessions and the voice stream ($name)',
  (dialect: DialectUnderTest) => {
    let harness: SpeechHarness & { port: number };

    beforeAll(async () => {
      harness = await listening({
        dialect,
        overrides: {
          rate_limits: {
            default_tier: 'test',
            tiers: {
              test: { per_minute: 100_000, per_day: 1_000_000 },
              tiny: { per_minute: 3, per_day: 100 },
            },
          },
        },
      });
    });
    afterAll(() => harness.close());

    it('creates a session with a vs_ id, a single-use token and its WebSocket address', async () => {
      const session = await createSession(harness, { language_code: 'en-US', sample_rate: 16000 });
      expect(session.session_id).toMatch(/^vs_[A-Za-z0-9]{22}$/);
      expect(session.websocket_url).toBe(`ws://localhost:80/v1/voice/stream/${session.session_id}`);
      expect(session).toMatchObject({
        model: 'fake-chat',
        stt_model: 'pocketsphinx-en-us',
        tts_model: 'espeak-ng',
        voice_id: 'en-us',
        audio_format: 'mp3',
      });
      expect(session.token).not.toContain('sk-');
      const first = await connect(streamUrl(harness, session));
      expect((await first.next('ready')).session_id).toBe(session.session_id);
      expect(await refusal(streamUrl(harness, session))).toBe('HTTP 401');
      first.close();
      expect(
        await refusal(
          `ws://127.0.0.1:${harness.port}/v1/voice/stream/${session.session_id}?token=vst_wrong`,
        ),
      ).toBe('HTTP 401');
    });

    it('checks models and voice at creation', async () => {
      const post = (body: Record<string, unknown>) =>
        harness.app.inject({
          method: 'POST',
          url: '/v1/voice/sessions',
          headers: bearer(harness.adminKey),
          payload: { user_id: 'alice', ...body },
        });
      expect((await post({ model: 'nope' })).json<ErrorJson>().error).toMatchObject({
        code: 'unknown_model',
        param: 'model',
      });
      expect((await post({ stt_model: 'espeak-ng' })).json<ErrorJson>().error).toMatchObject({
        code: 'invalid_parameter',
        param: 'stt_model',
      });
      expect((await post({ tts_model: 'fake-chat' })).json<ErrorJson>().error.param).toBe(
        'tts_model',
      );
      expect((await post({ voice_id: 'zz-nobody' })).json<ErrorJson>().error).toMatchObject({
        code: 'invalid_parameter',
        param: 'voice_id',
      });
      expect((await post({ sample_rate: 11025 })).statusCode).toBe(400);
      const unavailable = await post({ stt_model: 'whisper-tiny' });
      expect(unavailable.statusCode).toBe(503);
      expect(unavailable.json<ErrorJson>().error.code).toBe('model_unavailable');
      expect((await post({ conversation_id: 'conv_doesnotexist0000000000' })).statusCode).toBe(404);
    });

    it('hears a spoken turn, answers in text and audio, and stores it in the conversation', async () => {
      const { session, socket } = await open(harness);
      await streamPcm(socket.socket, Buffer.concat([silence(0.3), numbersPcm, silence(1)]), {
        realTime: false,
      });
      const started = await socket.next('speech_started');
      const transcript = await socket.next('transcript');
      while (transcript.is_final !== true)
        Object.assign(transcript, await socket.next('transcript'));
      expect(transcript.turn_id).toBe(started.turn_id);
      const heard = String(transcript.text)
        .split(' ')
        .filter((word) => numberWords.includes(word));
      expect(heard.length).toBeGreaterThanOrEqual(4);
      const delta = await socket.next('text_response');
      expect(delta).toMatchObject({ final: false, turn_id: transcript.turn_id });
      const audio = await socket.next('audio_response');
      expect(audio).toMatchObject({
        format: 'mp3',
        sample_rate: 22050,
        sequence: 0,
        turn_id: transcript.turn_id,
      });
      expect(Buffer.from(String(audio.audio), 'base64').length).toBeGreaterThan(500);
      const end = await socket.next('turn_end');
      expect(end).toMatchObject({ interrupted: false });
      const final = socket.messages.find(
        (message) => message.type === 'text_response' && message.final === true,
      )!;
      expect(final.text).toBe(`Echo: ${String(transcript.text)}`);
      const conversationId = String(end.conversation_id);
      expect(conversationId).toMatch(/^conv_/);
      const history = await harness.app.inject({
        method: 'GET',
        url: `/v1/conversations/${conversationId}/messages`,
        headers: bearer(harness.adminKey),
      });
      const stored = history.json<{ messages: { role: string; content: string }[] }>().messages;
      expect(stored.map((message) => [message.role, message.content])).toEqual([
        ['user', transcript.text],
        ['assistant', final.text],
      ]);
      socket.close();
      void session;
    });

    it('answers typed turns sentence by sentence, and keeps the session’s conversation', async () => {
      const { socket } = await open(harness);
      socket.sendJson({ type: 'text', text: 'Good morning. Please read me the news.' });
      const end = await socket.next('turn_end');
      const audio = socket.messages.filter((message) => message.type === 'audio_response');
      expect(audio.map((message) => message.text)).toEqual([
        'Echo: Good morning.',
        'Please read me the news.',
      ]);
      expect(audio.map((message) => message.sequence)).toEqual([0, 1]);
      socket.sendJson({ type: 'text', text: 'Thanks.' });
      const second = await socket.next('turn_end');
      expect(second.conversation_id).toBe(end.conversation_id);
      socket.close();
    });

    it('answers every bad message with an error and stays open', async () => {
      const { socket } = await open(harness);
      const errorAfter = async (send: () => void) => {
        send();
        return (await socket.next('error')).error as ErrorJson['error'];
      };
      expect(await errorAfter(() => socket.socket.send('not json'))).toMatchObject({
        code: 'invalid_json',
        type: 'invalid_request_error',
      });
      expect(await errorAfter(() => socket.sendJson({ type: 'dance' }))).toMatchObject({
        code: 'unknown_message_type',
        param: 'type',
      });
      expect(await errorAfter(() => socket.sendJson({ text: 'no type' }))).toMatchObject({
        code: 'missing_parameter',
        param: 'type',
      });
      expect(await errorAfter(() => socket.sendJson({ type: 'text' }))).toMatchObject({
        code: 'missing_parameter',
        param: 'text',
      });
      expect(
        await errorAfter(() => socket.sendJson({ type: 'text', text: 'a\u0000b' })),
      ).toMatchObject({ code: 'invalid_parameter', param: 'text' });
      expect(
        await errorAfter(() => socket.sendJson({ type: 'audio', audio: '***' })),
      ).toMatchObject({ code: 'invalid_parameter', param: 'audio' });
      expect(await errorAfter(() => socket.sendJson([1, 2]))).toMatchObject({
        code: 'invalid_parameter',
      });
      socket.sendJson({ type: 'text', text: 'Still there?' });
      expect(await socket.next('turn_end')).toMatchObject({ interrupted: false });
      socket.close();
    });

    it('counts each turn against the key’s rate limit', async () => {
      const key = await createKey(harness.app, harness.adminKey, {
        scopes: ['voice:write', 'chat:write'],
        tier: 'tiny',
      });
      const session = await createSession(harness, {}, key.key);
      const socket = await connect(streamUrl(harness, session));
      await socket.next('ready');
      socket.sendJson({ type: 'text', text: 'One.' });
      await socket.next('turn_end');
      socket.sendJson({ type: 'text', text: 'Two.' });
      await socket.next('turn_end');
      socket.sendJson({ type: 'text', text: 'Three.' });
      const refused = (await socket.next('error')).error as ErrorJson['error'] & {
        retry_after: number;
        window: string;
      };
      expect(refused).toMatchObject({
        code: 'rate_limit_exceeded',
        type: 'rate_limit_error',
        window: 'minute',
      });
      expect(refused.retry_after).toBeGreaterThan(0);
      expect(socket.socket.readyState).toBe(socket.socket.OPEN);
      socket.close();
    });

    it('closes with 4401 when the session’s key is revoked', async () => {
      const key = await createKey(harness.app, harness.adminKey, {
        scopes: ['voice:write', 'chat:write'],
      });
      const session = await createSession(harness, {}, key.key);
      const socket = await connect(streamUrl(harness, session));
      await socket.next('ready');
      const revoke = await harness.app.inject({
        method: 'DELETE',
        url: `/v1/api-keys/${key.id}`,
        headers: bearer(harness.adminKey),
      });
      expect(revoke.statusCode).toBe(200);
      // The credential watch (every 250 ms by default) closes it; the idle timeout would say 4408.
      const closed = await socket.closed;
      expect(closed.code).toBe(4401);
      expect(closed.reason).toContain('revoked');
    });

    it('closes with 1009 when a message is larger than the limit', async () => {
      const { socket } = await open(harness);
      socket.socket.send(Buffer.alloc(1024 * 1024 + 1));
      expect((await socket.closed).code).toBe(1009);
    });
  },
);

describe.each(allDialects)(
  'barge-in, hang-ups, idle and expiry on the voice stream ($name)',
  (dialect) => {
    let harness: SpeechHarness & { port: number };
    const sessionTtl = 10;

    beforeAll(async () => {
      harness = await listening({
        dialect,
        // A slow model: each word 150 ms apart.
        upstream: { chunkDelayMs: 150 },
        overrides: {
          speech: {
            worker_threads: 1,
            realtime: {
              idle_timeout_ms: 1500,
              ping_interval_ms: 200,
              session_ttl_seconds: sessionTtl,
            },
          },
        },
      });
    });
    afterAll(() => harness.close());

    const longAnswer = Array.from({ length: 40 }, (_, index) => `Word${index}.`).join(' ');
    /**
     * Its first six words, then nothing more until the service hangs up: the answer is still in
     * progress when the test acts on it, however slowly the machine runs (streamed in full, a
     * loaded machine could let it end before the user's speech or the hang-up reached it).
     */
    const unfinishedAnswer = {
      kind: 'reply',
      content: longAnswer,
      holdAfterChunks: 7,
    } as const satisfies UpstreamBehaviour;

    it('interrupts the answer when the user speaks over it and aborts the model call', async () => {
      const { socket } = await open(harness);
      harness.upstream.reset();
      harness.upstream.enqueueFor('chat', unfinishedAnswer);
      socket.sendJson({ type: 'text', text: 'Tell me a long story.' });
      await socket.next('audio_response');
      // How soon is the speech benchmark's to measure (npm run bench -- speech); here, that the
      // user's speech interrupts the answer, ends the turn and aborts the model call.
      const speaking = streamPcm(socket.socket, numbersPcm, { realTime: true });
      const interrupt = await socket.next('interrupt');
      expect(interrupt).toMatchObject({ reason: 'user_speech' });
      expect((await socket.next('turn_end')).interrupted).toBe(true);
      await harness.upstream.settled();
      expect(harness.upstream.requests[0]!.aborted).toBe(true);
      await speaking;
      socket.close();
    });

    it('aborts the model call when the client hangs up mid-answer', async () => {
      const { socket } = await open(harness);
      harness.upstream.reset();
      harness.upstream.enqueueFor('chat', unfinishedAnswer);
      socket.sendJson({ type: 'text', text: 'Another long story.' });
      await socket.next('text_response');
      socket.close();
      await harness.upstream.settled();
      expect(harness.upstream.requests[0]!.aborted).toBe(true);
    });

    it('closes an idle socket with 4408, after keep-alive pings it answered', async () => {
      const { socket } = await open(harness);
      let pings = 0;
      socket.socket.on('ping', () => (pings += 1));
      const closed = await socket.closed;
      expect(closed.code).toBe(4408);
      expect(pings).toBeGreaterThanOrEqual(3);
    });

    it('drops a peer that stops answering pings', async () => {
      const session = await createSession(harness);
      const socket = await connect(streamUrl(harness, session), {}, { autoPong: false });
      const closed = await socket.closed;
      // Terminated (no close frame) after two unanswered pings: the idle timeout would close it
      // with 4408 instead.
      expect(closed.code).toBe(1006);
    });
  },
);

describe.each(allDialects)('session expiry ($name)', (dialect) => {
  it('closes the stream with 4401 once the session expires', async () => {
    const ttl = 10;
    // The service's clock runs 8.5 s behind: the session it makes ends 1.5 s from now.
    const harness = await listening({
      dialect,
      services: { now: () => Date.now() - (ttl * 1000 - 1500) },
      overrides: { speech: { worker_threads: 1, realtime: { session_ttl_seconds: ttl } } },
    });
    try {
      const session = await createSession(harness);
      const socket: TestSocket = await connect(streamUrl(harness, session));
      await socket.next('ready');
      // Closed by the credential watch for the session's end (an idle socket would get 4408).
      const closed = await socket.closed;
      expect(closed.code).toBe(4401);
      expect(closed.reason).toContain('expired');
    } finally {
      await harness.close();
    }
  });
});
