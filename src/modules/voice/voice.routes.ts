// Voice sessions (op 14), the WebSocket configuration and the AsyncAPI document of the sockets.
import Type from 'typebox';
import { access } from '../../auth/scopes.js';
import { asyncApiDocument } from './realtime/asyncapi.schemas.js';
import { closeCodes } from './realtime/close-codes.js';
import { inputFormats } from '../../audio/audio-types.js';
import type { AppConfig } from '../../config/config.js';
import { featurePlugin, type FeatureApp, type FeaturePlugin } from '../../http/feature-plugin.js';
import { streamSampleRates } from './voice-session-service.js';
import { commonParameters } from '../../http/schemas/common.js';
import { CreateVoiceSessionBody, VoiceSessionCreatedSchema } from './voice.schemas.js';
import { principalOf } from '../../http/types.js';
import type { VoiceSessionService } from './voice-session-service.js';

function wsBase(request: { protocol: string; host: string }): string {
  return `${request.protocol === 'https' ? 'wss' : 'ws'}://${request.host}`;
}

export interface VoiceRoutesDependencies {
  /** The speech limits and the version the AsyncAPI document states. */
  readonly config: Pick<AppConfig, 'speech' | 'version'>;
  readonly voiceSessions: VoiceSessionService;
}

/** The voice-session and WebSocket-description routes, registered by app.ts like any plugin. */
export function voicePlugin(dependencies: VoiceRoutesDependencies): FeaturePlugin {
  return featurePlugin('voice', (app) => {
    sessionRoutes(app, dependencies);
    webSocketConfigRoutes(app, dependencies.config);
    asyncApiRoutes(app, dependencies.config);
  });
}

function sessionRoutes(app: FeatureApp, { config, voiceSessions }: VoiceRoutesDependencies): void {
  const limits = config.speech.realtime;
  app.post(
    '/v1/voice/sessions',
    {
      config: { access: access.scopes('voice:write', 'chat:write'), feature: 'voice_chat' },
      schema: {
        operationId: 'createVoiceSession',
        tags: ['Voice'],
        summary: 'Create a voice session',
        description: `Checks every model and the voice now (400 for an unknown one, 503 with the fix for an unavailable one), then answers the session's WebSocket address and a single-use token (valid ${limits.tokenTtlSeconds} s; the session lives ${limits.sessionTtlSeconds} s). The token is stored only as a hash and is never an API key.`,
        body: CreateVoiceSessionBody,
        response: { 201: VoiceSessionCreatedSchema },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const body = request.body;
      const { session, token } = await voiceSessions.create({
        accountId: principal.accountId,
        keyId: principal.keyId,
        userId: body.user_id,
        conversationId: body.conversation_id ?? null,
        model: body.model,
        sttModel: body.stt_model,
        ttsModel: body.tts_model,
        voiceId: body.voice_id,
        languageCode: body.language_code,
        sampleRate: body.sample_rate,
        audioFormat: body.audio_format,
      });
      return reply.code(201).send({
        session_id: session.id,
        token,
        websocket_url: `${wsBase(request)}/v1/voice/stream/${session.id}`,
        expires_at: session.expiresAt,
        token_expires_at: session.tokenExpiresAt,
        model: session.model,
        stt_model: session.sttModel,
        tts_model: session.ttsModel,
        voice_id: session.voiceId,
        sample_rate: session.sampleRate,
        audio_format: session.audioFormat,
      });
    },
  );
}

/** The fields of each message type, by channel and direction. */
const messageFields = {
  client_messages: {
    init: [
      'user_id',
      'conversation_id',
      'model',
      'voice{enabled,stt_model,tts_model,voice_id,language_code,audio_format}',
    ],
    text: ['text'],
    audio: ['audio (base64)', 'format', 'sample_rate', 'final'],
    voice_stream: ['binary PCM16 frames', 'audio{audio}', 'text{text}'],
  },
  server_messages: {
    ready: [
      'conversation_id',
      'model',
      'tts_model',
      'voice_id',
      'audio_format',
      'session_id',
      'sample_rate',
    ],
    speech_started: ['turn_id'],
    transcript: ['turn_id', 'text', 'is_final', 'confidence', 'language'],
    text_response: ['turn_id', 'delta', 'final', 'text', 'conversation_id', 'message_id'],
    audio_response: [
      'turn_id',
      'sequence',
      'audio',
      'format',
      'sample_rate',
      'duration_seconds',
      'text',
    ],
    interrupt: ['turn_id', 'reason'],
    turn_end: ['turn_id', 'conversation_id', 'message_id', 'interrupted'],
    error: ['turn_id', 'error{message,type,code,param}'],
  },
};

/** GET /v1/ws/config: the addresses, authentication, message fields, audio formats and limits. */
function webSocketConfig(config: VoiceRoutesDependencies['config'], base: string) {
  const limits = config.speech.realtime;
  return {
    ws_url: `${base}/v1/ws`,
    voice_stream_url: `${base}/v1/voice/stream/{session_id}`,
    asyncapi_url: '/asyncapi.json',
    authentication: {
      ws: [
        'Authorization: Bearer <key>',
        'X-API-Key: <key>',
        '?api_key=<key> (discouraged: URLs are logged)',
      ],
      voice_stream: ['?token=<session token>', 'Authorization: Bearer <session token>'],
    },
    ...messageFields,
    audio: {
      input_formats: [...inputFormats],
      output_formats: ['mp3', 'wav', 'pcm'],
      stream_sample_rates: streamSampleRates,
      stream_encoding: 'PCM16 little-endian mono',
    },
    limits: {
      max_message_bytes: limits.maxMessageBytes,
      max_audio_bytes: config.speech.maxAudioBytes,
      max_utterance_seconds: limits.maxUtteranceSeconds,
      idle_timeout_ms: limits.idleTimeoutMs,
      ping_interval_ms: limits.pingIntervalMs,
      end_of_speech_ms: limits.endOfSpeechMs,
      token_ttl_seconds: limits.tokenTtlSeconds,
      session_ttl_seconds: limits.sessionTtlSeconds,
      max_connections_per_key: limits.maxConnectionsPerKey,
    },
    close_codes: {
      [closeCodes.credentialsInvalid]: 'key revoked or expired, or voice session expired',
      [closeCodes.idleTimeout]: 'idle timeout',
      [closeCodes.messageTooBig]: 'message too big',
      [closeCodes.goingAway]: 'server shutting down',
      [closeCodes.internalError]: 'internal error',
    },
  };
}

function webSocketConfigRoutes(app: FeatureApp, config: VoiceRoutesDependencies['config']): void {
  app.get(
    '/v1/ws/config',
    {
      config: { access: access.anyKey() },
      schema: {
        operationId: 'getWebSocketConfig',
        tags: ['Voice'],
        summary: 'WebSocket configuration',
        description:
          'The WebSocket addresses, message types with their fields, audio formats and limits. The full description is the AsyncAPI document at /asyncapi.json.',
        querystring: Type.Object(commonParameters()),
        response: { 200: Type.Object({}, { additionalProperties: true }) },
      },
    },
    (request) => webSocketConfig(config, wsBase(request)),
  );
}

function asyncApiRoutes(app: FeatureApp, config: VoiceRoutesDependencies['config']): void {
  const document = asyncApiDocument(config);
  app.get(
    '/asyncapi.json',
    { config: { access: access.public() }, schema: { hide: true } },
    () => document,
  );
}
