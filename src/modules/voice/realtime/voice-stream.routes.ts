// /v1/voice/stream/{session_id}: a voice session's socket. Its single-use token authenticates it;
// audio comes in (binary PCM16 frames or `audio` messages) and typed `text`, and the session's
// voice conversation answers with transcripts, text, audio and barge-in.
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { RawData, WebSocket } from 'ws';
import { access } from '../../../auth/scopes.js';
import type { FeatureApp } from '../../../http/feature-plugin.js';
import type { VoiceConversation, VoiceSettings } from '../voice-conversation.js';
import type { VoiceSession } from '../voice-session.js';
import type { VoiceSessionService } from '../voice-session-service.js';
import { closeCodes } from './close-codes.js';
import type { Connection } from './connection.js';
import { bytesOf, decodeBase64, pcmOf } from './frames.js';
import { parseMessage, voiceStreamMessages } from './protocol.schemas.js';
import type { RealtimeSockets } from './sockets.routes.js';

type RedeemedSession = Awaited<ReturnType<VoiceSessionService['redeem']>>;
type WithSession = FastifyRequest & { voiceSession?: RedeemedSession };

function sessionToken(request: FastifyRequest): string | undefined {
  const query = request.query as { token?: unknown };
  if (typeof query.token === 'string') return query.token;
  const authorization = request.headers.authorization;
  return authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : undefined;
}

function settingsOf(session: VoiceSession): VoiceSettings {
  return {
    accountId: session.accountId,
    apiKeyId: session.keyId,
    userId: session.userId,
    conversationId: session.conversationId,
    model: session.model,
    sttModel: session.sttModel,
    ttsModel: session.ttsModel,
    voiceId: session.voiceId,
    language: session.languageCode,
    sampleRate: session.sampleRate,
    audioFormat: session.audioFormat,
    route: 'GET /v1/voice/stream/:session_id',
  };
}

/** `ready` once the conversation has started; a failed start ends the socket. */
function announce(
  session: VoiceSession,
  conversation: VoiceConversation,
  connection: Connection,
): Promise<void> {
  return conversation.start().then(
    () =>
      connection.send({
        type: 'ready',
        session_id: session.id,
        conversation_id: session.conversationId,
        model: session.model,
        stt_model: session.sttModel,
        tts_model: session.ttsModel,
        voice_id: session.voiceId,
        language_code: session.languageCode,
        sample_rate: session.sampleRate,
        audio_format: session.audioFormat,
        expires_at: session.expiresAt,
      }),
    (error: unknown) => {
      connection.sendError(error);
      connection.close(closeCodes.internalError, 'voice detection failed to start');
    },
  );
}

export function voiceStreamRoute(app: FeatureApp, sockets: RealtimeSockets): void {
  const { voiceSessions } = sockets.dependencies;
  // Built once here, not per connection (see protocol.schemas.ts).
  const messages = voiceStreamMessages(32_000);

  app.get(
    '/v1/voice/stream/:session_id',
    {
      websocket: true,
      // The session's token authenticates this socket (checked below, before the upgrade).
      config: { access: access.public(), feature: 'voice_chat' },
      schema: {
        hide: true,
        params: Type.Object({ session_id: Type.String({ maxLength: 100 }) }),
        querystring: Type.Object({ token: Type.Optional(Type.String({ maxLength: 200 })) }),
      },
      preValidation: async (request) => {
        const { session_id: sessionId } = request.params;
        const token = sessionToken(request);
        // The key's connection cap is checked before the single-use token is spent.
        const keyId = await voiceSessions.keyIdForToken(sessionId, token);
        const release = keyId === undefined ? null : sockets.takeSlot(request, keyId);
        try {
          (request as WithSession).voiceSession = await voiceSessions.redeem(sessionId, token);
        } catch (error) {
          release?.();
          throw error;
        }
      },
    },
    (socket: WebSocket, request: FastifyRequest) => {
      const { session, tier, accountTier } = (request as WithSession).voiceSession!;
      const logger = request.log as never;
      let conversation: VoiceConversation | null = null;
      const connection = sockets.openConnection(
        request,
        'voice',
        {
          socket,
          keyId: session.keyId,
          tier,
          accountId: session.accountId,
          accountTier,
          sessionExpiresAtMs: Date.parse(session.expiresAt),
          logger,
        },
        () => conversation?.close(),
      );
      conversation = sockets.converse(settingsOf(session), connection, logger, (id) => {
        void voiceSessions.setConversation(session.id, id).catch(() => undefined);
      });
      const started = announce(session, conversation, connection);
      socket.on('message', (data: RawData, isBinary: boolean) => {
        // Handled one at a time, each in its own turn of the loop, with a bounded backlog.
        connection.receive(async () => {
          await started;
          if (isBinary) return conversation?.pushAudio(pcmOf(bytesOf(data)));
          const parsed = parseMessage(bytesOf(data).toString('utf8'), messages);
          if (parsed.type === 'audio') {
            conversation?.pushAudio(pcmOf(decodeBase64(parsed.message.audio, 'audio')));
          } else {
            conversation?.pushText(parsed.message.text);
          }
        });
      });
    },
  );
}
