// The AsyncAPI 3.0 document of both WebSocket channels, built from the same message schemas that
// validate them, plus the schemas of what the service sends.
import Type, { type TSchema } from 'typebox';
import type { AppConfig } from '../../../config/config.js';
import { ErrorBodySchema } from '../../../http/schemas/common.js';
import { closeCodes } from './close-codes.js';
import { generalMessages, voiceStreamMessages } from './protocol.schemas.js';

const turnId = Type.String({
  description: 'Id of the user turn (and of its stored user message).',
});

/** What the service sends, on both channels unless noted. */
export const serverMessages: Record<string, TSchema> = {
  ready: Type.Object(
    {
      type: Type.Literal('ready'),
      session_id: Type.Optional(Type.String({ description: 'Voice stream only.' })),
      conversation_id: Type.Union([Type.String(), Type.Null()], {
        description: 'Null until the first turn creates the conversation.',
      }),
      model: Type.String(),
      stt_model: Type.Optional(Type.String()),
      tts_model: Type.Union([Type.String(), Type.Null()]),
      voice_id: Type.Union([Type.String(), Type.Null()]),
      sample_rate: Type.Optional(
        Type.Integer({ description: 'Voice stream: rate of the PCM to send.' }),
      ),
      audio_format: Type.Union([Type.String(), Type.Null()]),
    },
    {
      description:
        'The channel is set up (after connecting to a voice stream, after `init` on /v1/ws).',
    },
  ),
  speech_started: Type.Object(
    { type: Type.Literal('speech_started'), turn_id: turnId },
    { description: 'Voice stream: the detector heard the user start speaking.' },
  ),
  transcript: Type.Object(
    {
      type: Type.Literal('transcript'),
      turn_id: turnId,
      text: Type.String(),
      is_final: Type.Boolean({
        description: 'false: interim (the text so far); true: the utterance is complete.',
      }),
      confidence: Type.Union([Type.Number(), Type.Null()]),
      language: Type.Union([Type.String(), Type.Null()]),
    },
    { description: 'What the user said.' },
  ),
  text_response: Type.Union(
    [
      Type.Object({
        type: Type.Literal('text_response'),
        turn_id: turnId,
        delta: Type.String(),
        final: Type.Literal(false),
      }),
      Type.Object({
        type: Type.Literal('text_response'),
        turn_id: turnId,
        text: Type.String({ description: 'The whole answer.' }),
        final: Type.Literal(true),
        conversation_id: Type.Union([Type.String(), Type.Null()]),
        message_id: Type.String({ description: 'The stored answer (for feedback).' }),
      }),
    ],
    { description: 'The answer: deltas as the model writes, then the whole text once stored.' },
  ),
  audio_response: Type.Object(
    {
      type: Type.Literal('audio_response'),
      turn_id: turnId,
      sequence: Type.Integer({ description: 'From 0 within the turn; play in order.' }),
      audio: Type.String({
        description: 'Base64: one sentence, a complete mp3/wav file, or raw pcm.',
      }),
      format: Type.String({ description: 'mp3, wav or pcm (16-bit little-endian mono).' }),
      sample_rate: Type.Integer(),
      duration_seconds: Type.Number(),
      text: Type.String({ description: 'The sentence spoken.' }),
    },
    { description: 'The answer spoken, sentence by sentence, while the model still writes.' },
  ),
  interrupt: Type.Object(
    {
      type: Type.Literal('interrupt'),
      turn_id: turnId,
      reason: Type.Union([Type.Literal('user_speech'), Type.Literal('user_text')]),
    },
    {
      description: 'Stop playing: the user spoke (or wrote) over the answer, which was cancelled.',
    },
  ),
  turn_end: Type.Object(
    {
      type: Type.Literal('turn_end'),
      turn_id: turnId,
      conversation_id: Type.Union([Type.String(), Type.Null()]),
      message_id: Type.Union([Type.String(), Type.Null()]),
      interrupted: Type.Boolean({
        description: 'true: cancelled, nothing of the turn was stored.',
      }),
    },
    { description: 'The turn is over: every text_response and audio_response of it was sent.' },
  ),
  error: Type.Object(
    {
      type: Type.Literal('error'),
      turn_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      error: ErrorBodySchema.properties.error,
    },
    {
      description:
        'The contract’s error object (429 adds retry_after, limit, window, reset_at); the connection stays open.',
    },
  ),
};

export function asyncApiDocument(config: Pick<AppConfig, 'speech' | 'version'>): object {
  const limits = config.speech.realtime;
  const stream = voiceStreamMessages(32_000);
  const general = generalMessages(32_000, Math.ceil((config.speech.maxAudioBytes * 4) / 3) + 8);
  const message = (name: string, schema: TSchema) => ({ name, payload: schema });
  const messagesOf = (schemas: Record<string, TSchema>, prefix: string) =>
    Object.fromEntries(
      Object.entries(schemas).map(([name, schema]) => [`${prefix}${name}`, message(name, schema)]),
    );
  const sent = messagesOf(serverMessages, 'server_');
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Conversational AI Platform WebSockets',
      version: config.version,
      description: `JSON text messages, each an object with a string \`type\`. A message that is not JSON, has an unknown \`type\` or lacks a field is answered by an \`error\` message and the connection stays open. Each user turn counts against the key's rate limit. Close codes: ${closeCodes.credentialsInvalid} key revoked or expired, or session expired (within ${limits.credentialCheckMs} ms); ${closeCodes.idleTimeout} nothing sent or received for ${limits.idleTimeoutMs} ms; ${closeCodes.messageTooBig} message above ${limits.maxMessageBytes} bytes; ${closeCodes.goingAway} shutdown. The service pings every ${limits.pingIntervalMs} ms; a peer that misses two is dropped. A key holds at most ${limits.maxConnectionsPerKey} sockets open at once on an instance (both channels together); past it the upgrade answers HTTP 429 rate_limit_exceeded with window 'connections'.`,
    },
    defaultContentType: 'application/json',
    channels: {
      general: {
        address: '/v1/ws',
        description:
          "Authenticated by 'Authorization: Bearer', 'X-API-Key' or '?api_key=' (discouraged: URLs are logged). Needs chat:write; audio in needs voice:read, audio out voice:write.",
        messages: { ...messagesOf(general, 'client_'), ...sent },
      },
      voiceStream: {
        address: '/v1/voice/stream/{session_id}',
        parameters: { session_id: { description: 'From POST /v1/voice/sessions.' } },
        description:
          "Authenticated by the session's single-use token: '?token=' or 'Authorization: Bearer'. Binary frames carry PCM16 little-endian mono at the session's sample_rate.",
        messages: {
          ...messagesOf(stream, 'client_'),
          client_binary_audio: {
            name: 'binary audio',
            contentType: 'application/octet-stream',
            payload: { type: 'string', format: 'binary' },
          },
          ...sent,
        },
      },
    },
    operations: {
      sendGeneral: {
        action: 'receive',
        channel: { $ref: '#/channels/general' },
        messages: Object.keys(general).map((name) => ({
          $ref: `#/channels/general/messages/client_${name}`,
        })),
      },
      receiveGeneral: {
        action: 'send',
        channel: { $ref: '#/channels/general' },
        messages: Object.keys(serverMessages).map((name) => ({
          $ref: `#/channels/general/messages/server_${name}`,
        })),
      },
      sendVoice: {
        action: 'receive',
        channel: { $ref: '#/channels/voiceStream' },
        messages: [
          ...Object.keys(stream).map((name) => ({
            $ref: `#/channels/voiceStream/messages/client_${name}`,
          })),
          { $ref: '#/channels/voiceStream/messages/client_binary_audio' },
        ],
      },
      receiveVoice: {
        action: 'send',
        channel: { $ref: '#/channels/voiceStream' },
        messages: Object.keys(serverMessages).map((name) => ({
          $ref: `#/channels/voiceStream/messages/server_${name}`,
        })),
      },
    },
  };
}
