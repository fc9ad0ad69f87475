// /v1/ws: the general channel of a key. `init` chooses the chat model and, optionally, speech;
// then `text` messages and `audio` utterances (sent in chunks until `final`) are turns of one voice
// conversation, answered in text and, when asked for, in audio.
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { RawData, WebSocket } from 'ws';
import { access, missingScope } from '../../../auth/scopes.js';
import { AppError, FeatureDisabledError } from '../../../errors/app-error.js';
import type { FeatureApp } from '../../../http/feature-plugin.js';
import { principalOf } from '../../../http/types.js';
import type { Principal } from '../../accounts/authenticator.js';
import type { VoiceConversation, VoiceSettings } from '../voice-conversation.js';
import type { Connection } from './connection.js';
import { bytesOf, decodeBase64 } from './frames.js';
import {
  generalMessages,
  parseMessage,
  type GeneralAudioMessage,
  type GeneralMessages,
  type InitMessage,
} from './protocol.schemas.js';
import type { Peer, RealtimeSockets } from './sockets.routes.js';

/** One socket of the general channel: its conversation (once `init` came) and pending audio. */
class GeneralChannel {
  private conversation: VoiceConversation | null = null;
  /** Chunks of an utterance sent with `final: false`. */
  private chunks: Buffer[] = [];
  private chunkBytes = 0;

  constructor(
    private readonly sockets: RealtimeSockets,
    private readonly principal: Principal,
    private readonly connection: Connection,
    private readonly logger: Peer['logger'],
    private readonly messages: GeneralMessages,
  ) {}

  private get enabled(): boolean {
    return this.sockets.dependencies.config.features.voice_chat;
  }

  close(): void {
    this.conversation?.close();
  }

  /** One message; a failure is answered with an `error` message and the socket stays open. */
  async handle(data: RawData, isBinary: boolean): Promise<void> {
    try {
      if (isBinary) {
        throw new AppError(
          'invalid_parameter',
          'This channel takes JSON text messages; send audio as an `audio` message.',
          { param: 'type' },
        );
      }
      const parsed = parseMessage(bytesOf(data).toString('utf8'), this.messages);
      if (parsed.type === 'init') return await this.initialise(parsed.message);
      if (this.conversation === null) {
        throw new AppError('invalid_parameter', "Send an 'init' message first.", {
          param: 'type',
        });
      }
      if (parsed.type === 'text') return this.conversation.pushText(parsed.message.text);
      this.receiveAudio(this.conversation, parsed.message);
    } catch (error) {
      this.connection.sendError(error);
    }
  }

  private requireScope(scope: 'voice:read' | 'voice:write'): void {
    if (missingScope(this.principal.scopes, [scope]) !== null) {
      throw new AppError('insufficient_permissions', `This API key lacks the '${scope}' scope.`, {
        details: { required_scope: scope },
      });
    }
  }

  /** Checks every model, the conversation and the voice `init` names; null voice: text only. */
  private async check(init: InitMessage, speak: boolean) {
    const { models, conversations, speech } = this.sockets.dependencies;
    const voice = init.voice ?? {};
    if (speak || voice.stt_model !== undefined) {
      if (!this.enabled) throw new FeatureDisabledError('voice_chat');
    }
    if (speak) this.requireScope('voice:write');
    const model = models.resolveChatModelName(init.model, 'model');
    if (init.conversation_id !== undefined) {
      await conversations.get(this.principal.accountId, init.conversation_id, init.user_id ?? null);
    }
    const ttsModel = speak ? speech.resolveSpeechModel(voice.tts_model, 'voice.tts_model') : null;
    const voiceId =
      ttsModel === null
        ? null
        : await speech.checkVoice(
            ttsModel,
            voice.voice_id ?? null,
            voice.language_code ?? null,
            'voice.voice_id',
          );
    if (voice.stt_model !== undefined)
      models.resolve('transcription', voice.stt_model, 'voice.stt_model');
    return { model, ttsModel, voiceId };
  }

  /** `init`: a new conversation replaces the one before, and `ready` says what it uses. */
  private async initialise(init: InitMessage): Promise<void> {
    const voice = init.voice ?? {};
    const speak = voice.enabled ?? false;
    const { model, ttsModel, voiceId } = await this.check(init, speak);
    this.conversation?.close();
    const settings: VoiceSettings = {
      accountId: this.principal.accountId,
      apiKeyId: this.principal.keyId,
      userId: init.user_id ?? null,
      conversationId: init.conversation_id ?? null,
      model,
      sttModel: voice.stt_model,
      ttsModel,
      voiceId,
      language: voice.language_code ?? null,
      sampleRate: 16000,
      audioFormat: voice.audio_format ?? 'mp3',
      route: 'GET /v1/ws',
    };
    this.conversation = this.sockets.converse(
      settings,
      this.connection,
      this.logger,
      () => undefined,
    );
    this.connection.send({
      type: 'ready',
      conversation_id: settings.conversationId,
      model,
      speech: speak,
      tts_model: ttsModel,
      voice_id: voiceId,
      audio_format: speak ? settings.audioFormat : null,
    });
  }

  /** A chunk of an utterance; the `final` one (or the only one) is transcribed and answered. */
  private receiveAudio(conversation: VoiceConversation, message: GeneralAudioMessage): void {
    if (!this.enabled) throw new FeatureDisabledError('voice_chat');
    this.requireScope('voice:read');
    const maxAudioBytes = this.sockets.dependencies.config.speech.maxAudioBytes;
    const bytes = decodeBase64(message.audio, 'audio');
    this.chunkBytes += bytes.length;
    if (this.chunkBytes > maxAudioBytes) {
      this.chunks = [];
      this.chunkBytes = 0;
      throw new AppError(
        'payload_too_large',
        `An utterance may have at most ${maxAudioBytes} bytes of audio.`,
        { param: 'audio' },
      );
    }
    this.chunks.push(bytes);
    if (message.final === false) return;
    const utterance = Buffer.concat(this.chunks);
    this.chunks = [];
    this.chunkBytes = 0;
    void conversation.pushUtterance(utterance, message.format ?? null, message.sample_rate);
  }
}

export function generalChannelRoute(app: FeatureApp, sockets: RealtimeSockets): void {
  const { config } = sockets.dependencies;
  // Built once here, not per connection (see protocol.schemas.ts).
  const messages = generalMessages(32_000, Math.ceil((config.speech.maxAudioBytes * 4) / 3) + 8);

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
          sockets.takeSlot(request, principalOf(request).keyId);
          done();
        } catch (error) {
          done(error as Error);
        }
      },
    },
    (socket: WebSocket, request: FastifyRequest) => {
      const principal = principalOf(request);
      const logger = request.log as never;
      let channel: GeneralChannel | null = null;
      const connection = sockets.openConnection(
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
        () => channel?.close(),
      );
      const opened = new GeneralChannel(sockets, principal, connection, logger, messages);
      channel = opened;
      // Messages are handled one at a time, in order, each in its own turn of the loop, with a
      // bounded backlog (Connection.receive).
      socket.on('message', (data: RawData, isBinary: boolean) => {
        connection.receive(() => opened.handle(data, isBinary));
      });
    },
  );
}
