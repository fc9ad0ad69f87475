// The WebSocket endpoints: /v1/voice/stream/{session_id} (a voice session's audio in, transcripts,
// answers and audio out, barge-in) and /v1/ws (the general channel: init, text, audio). They
// authenticate, parse and validate messages, and relay to and from a VoiceConversation.
import websocket from '@fastify/websocket';
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { RawData, WebSocket } from 'ws';
import { access, missingScope } from '../auth/scopes.js';
import { AppError, FeatureDisabledError } from '../errors/app-error.js';
import { principalOf, type App } from '../http/types.js';
import type { Services } from '../services.js';
import { VoiceConversation, type VoiceSettings } from '../voice/voice-conversation.js';
import {
  Connection,
  ConnectionSlots,
  tooManyConnections,
  type ConnectionOptions,
} from './connection.js';
import {
  closeCodes,
  generalMessages,
  parseMessage,
  voiceStreamMessages,
  type InitMessage,
} from './protocol.js';

/** Bytes of the raw frame as one Buffer. */
function bytesOf(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** PCM16 little-endian samples (copied: a frame need not be aligned). */
function pcmOf(bytes: Buffer): Int16Array {
  const samples = new Int16Array(Math.floor(bytes.length / 2));
  for (let index = 0; index < samples.length; index += 1)
    samples[index] = bytes.readInt16LE(index * 2);
  return samples;
}

function decodeBase64(value: string, param: string): Buffer {
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
    throw new AppError('invalid_parameter', `'${param}' is not valid base64.`, { param });
  }
  return Buffer.from(compact, 'base64');
}

function sessionToken(request: FastifyRequest): string | undefined {
  const query = request.query as { token?: unknown };
  if (typeof query.token === 'string') return query.token;
  const authorization = request.headers.authorization;
  return authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : undefined;
}

export async function realtimeRoutes(app: App, services: Services): Promise<void> {
  const limits = services.config.speech.realtime;
  const enabled = services.config.features.voice_chat;
  await app.register(websocket, {
    // One `message` event per turn of the event loop, even for frames that arrived together.
    options: { maxPayload: limits.maxMessageBytes, allowSynchronousEvents: false },
  });
  const watch = services.credentialWatch;
  const open = new Set<Connection>();
  const slots = new ConnectionSlots(limits.maxConnectionsPerKey);
  type WithSlot = FastifyRequest & { releaseSlot?: () => void };
  /**
   * Takes one of the key's connection slots before the upgrade (429 when none is left); it is
   * given back when the connection closes, or when the socket does (a refused or failed upgrade).
   */
  const takeSlot = (request: FastifyRequest, keyId: string): (() => void) => {
    const release = slots.acquire(keyId);
    if (release === null) throw tooManyConnections(slots.perKey);
    (request as WithSlot).releaseSlot = release;
    request.raw.socket?.once('close', release);
    return release;
  };
  /** A connection counted in the metrics and kept in `open` until it closes. */
  const openConnection = (
    request: FastifyRequest,
    channel: 'voice' | 'realtime',
    peer: Pick<
      ConnectionOptions,
      'socket' | 'keyId' | 'tier' | 'accountId' | 'accountTier' | 'sessionExpiresAtMs' | 'logger'
    >,
    onClose: () => void,
  ): Connection => {
    const counted = services.metrics.webSocketOpened(channel);
    const connection: Connection = new Connection({
      ...peer,
      limits,
      watch,
      rateLimiter: services.rateLimiter,
      onClose: () => {
        open.delete(connection);
        (request as WithSlot).releaseSlot?.();
        counted();
        onClose();
      },
    });
    open.add(connection);
    return connection;
  };
  // A refused upgrade (401, 403, …) leaves its connection with nobody reading it, which would keep
  // the server from ever closing: the answer was the last thing it carries.
  app.addHook('onResponse', (request, reply, done) => {
    if (request.headers.upgrade?.toLowerCase() === 'websocket' && reply.statusCode >= 400) {
      request.raw.socket.destroy();
    }
    done();
  });
  // Before the server stops accepting: open sockets would otherwise keep it from closing.
  app.addHook('preClose', (done) => {
    for (const connection of open) connection.close(closeCodes.goingAway, 'server shutting down');
    done();
  });
  const maxText = 32_000;
  // Built once here, not per connection (see protocol.ts).
  const streamMessages = voiceStreamMessages(maxText);
  const channelMessages = generalMessages(
    maxText,
    Math.ceil((services.config.speech.maxAudioBytes * 4) / 3) + 8,
  );

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
        const keyId = await services.voiceSessions.keyIdForToken(sessionId, token);
        const release = keyId === undefined ? null : takeSlot(request, keyId);
        try {
          (request as FastifyRequest & { voiceSession?: unknown }).voiceSession =
            await services.voiceSessions.redeem(sessionId, token);
        } catch (error) {
          release?.();
          throw error;
        }
      },
    },
    (socket: WebSocket, request: FastifyRequest) => {
      const { session, tier, accountTier } = (
        request as FastifyRequest & {
          voiceSession: Awaited<ReturnType<Services['voiceSessions']['redeem']>>;
        }
      ).voiceSession;
      const logger = request.log as never;
      let conversation: VoiceConversation | null = null;
      const connection = openConnection(
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
      const settings: VoiceSettings = {
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
      };
      conversation = new VoiceConversation({
        settings,
        chat: services.chat,
        speech: services.speech,
        models: services.models,
        limits,
        consumeTurn: () => connection.consumeTurn(),
        emit: (event) => connection.send(event),
        onConversation: (id) => {
          void services.voiceSessions.setConversation(session.id, id).catch(() => undefined);
        },
        logger,
      });
      const started = conversation.start().then(
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
      const messages = streamMessages;
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

  app.get(
    '/v1/ws',
    {
      websocket: true,
      config: { access: access.scopes('chat:write'), queryKey: true },
      schema: {
        hide: true,
        querystring: Type.Object({
          api_key: Type.Optional(Type.String({ maxLength: 200 })),
        }),
      },
      preHandler: (request, _reply, done) => {
        try {
          takeSlot(request, principalOf(request).keyId);
          done();
        } catch (error) {
          done(error as Error);
        }
      },
    },
    (socket: WebSocket, request: FastifyRequest) => {
      const principal = principalOf(request);
      const logger = request.log as never;
      const messages = channelMessages;
      let conversation: VoiceConversation | null = null;
      let speak = false;
      /** Chunks of an utterance sent with `final: false`. */
      let chunks: Buffer[] = [];
      let chunkBytes = 0;
      const connection = openConnection(
        request,
        'realtime',
        {
          socket,
          keyId: principal.keyId,
          tier: principal.tier,
          accountId: principal.accountId,
          accountTier: principal.accountTier,
          sessionExpiresAtMs: null,
          logger,
        },
        () => conversation?.close(),
      );
      const requireScope = (scope: 'voice:read' | 'voice:write') => {
        if (missingScope(principal.scopes, [scope]) !== null) {
          throw new AppError(
            'insufficient_permissions',
            `This API key lacks the '${scope}' scope.`,
            {
              details: { required_scope: scope },
            },
          );
        }
      };
      const initialise = async (init: InitMessage) => {
        const voice = init.voice ?? {};
        speak = voice.enabled ?? false;
        if (speak || voice.stt_model !== undefined) {
          if (!enabled) throw new FeatureDisabledError('voice_chat');
        }
        if (speak) requireScope('voice:write');
        const model = services.models.resolveChatModelName(init.model, 'model');
        if (init.conversation_id !== undefined) {
          await services.conversations.get(
            principal.accountId,
            init.conversation_id,
            init.user_id ?? null,
          );
        }
        const ttsModel = speak
          ? services.speech.resolveSpeechModel(voice.tts_model, 'voice.tts_model')
          : null;
        const voiceId =
          ttsModel === null
            ? null
            : await services.speech.checkVoice(
                ttsModel,
                voice.voice_id ?? null,
                voice.language_code ?? null,
                'voice.voice_id',
              );
        if (voice.stt_model !== undefined)
          services.models.resolve('transcription', voice.stt_model, 'voice.stt_model');
        conversation?.close();
        const settings: VoiceSettings = {
          accountId: principal.accountId,
          apiKeyId: principal.keyId,
          userId: init.user_id ?? null,
          conversationId: init.conversation_id ?? null,
          model,
          sttModel: voice.stt_model,
          ttsModel,
          voiceId,
          language: voice.language_code ?? null,
          sampleRate: 16000,
          audioFormat: voice.audio_format ?? 'mp3',
        };
        conversation = new VoiceConversation({
          settings,
          chat: services.chat,
          speech: services.speech,
          models: services.models,
          limits,
          consumeTurn: () => connection.consumeTurn(),
          emit: (event) => connection.send(event),
          onConversation: () => undefined,
          logger,
        });
        connection.send({
          type: 'ready',
          conversation_id: settings.conversationId,
          model,
          speech: speak,
          tts_model: ttsModel,
          voice_id: voiceId,
          audio_format: speak ? settings.audioFormat : null,
        });
      };
      // Messages are handled one at a time, in order, each in its own turn of the loop, with a
      // bounded backlog (Connection.receive).
      socket.on('message', (data: RawData, isBinary: boolean) => {
        connection.receive(async () => {
          try {
            if (isBinary) {
              throw new AppError(
                'invalid_parameter',
                'This channel takes JSON text messages; send audio as an `audio` message.',
                { param: 'type' },
              );
            }
            const parsed = parseMessage(bytesOf(data).toString('utf8'), messages);
            if (parsed.type === 'init') return await initialise(parsed.message);
            if (conversation === null) {
              throw new AppError('invalid_parameter', "Send an 'init' message first.", {
                param: 'type',
              });
            }
            if (parsed.type === 'text') return conversation.pushText(parsed.message.text);
            if (!enabled) throw new FeatureDisabledError('voice_chat');
            requireScope('voice:read');
            const bytes = decodeBase64(parsed.message.audio, 'audio');
            chunkBytes += bytes.length;
            if (chunkBytes > services.config.speech.maxAudioBytes) {
              chunks = [];
              chunkBytes = 0;
              throw new AppError(
                'payload_too_large',
                `An utterance may have at most ${services.config.speech.maxAudioBytes} bytes of audio.`,
                { param: 'audio' },
              );
            }
            chunks.push(bytes);
            if (parsed.message.final === false) return;
            const utterance = Buffer.concat(chunks);
            chunks = [];
            chunkBytes = 0;
            const current = conversation;
            void current.pushUtterance(
              utterance,
              parsed.message.format ?? null,
              parsed.message.sample_rate,
            );
          } catch (error) {
            connection.sendError(error);
          }
        });
      });
    },
  );
}
