// Voice sessions: created with their chat and speech settings checked up front (a bad model or
// voice is a 400 now, not an error on the socket later), joined once with a short-lived token
// that is stored only as a hash, and ended by their expiry or their key's revocation.
import { createHash } from 'node:crypto';
import { randomBase62 } from '../../ids.js';
import type { AppConfig } from '../../config/config.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import { AppError, InvalidParameterError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { OutputFormat } from '../../audio/audio-types.js';
import { normaliseLanguageTag } from '../../models/speech/speech-models.js';
import type { SpeechService } from './speech-service.js';
import type { VoiceSessionsRepository } from './voice-sessions.repository.js';
import type { KeyState } from '../accounts/api-key.js';
import type { VoiceSession } from './voice-session.js';

/** Rates a client may stream PCM at. */
export const streamSampleRates = [8000, 16000, 24000, 32000, 44100, 48000];

export interface CreateVoiceSession {
  accountId: string;
  keyId: string;
  userId: string;
  conversationId: string | null;
  model: string | undefined;
  sttModel: string | undefined;
  ttsModel: string | undefined;
  voiceId: string | undefined;
  languageCode: string | undefined;
  sampleRate: number | undefined;
  audioFormat: OutputFormat | undefined;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class VoiceSessionService {
  private readonly now: () => number;

  constructor(
    private readonly options: {
      repository: VoiceSessionsRepository;
      /** Revocation, expiry and tier of keys (the accounts module's). */
      keyStates: (keyIds: readonly string[]) => Promise<KeyState[]>;
      models: ModelRegistry;
      speech: SpeechService;
      conversations: ConversationService;
      limits: AppConfig['speech']['realtime'];
      now?: () => number;
    },
  ) {
    this.now = options.now ?? Date.now;
  }

  async create(input: CreateVoiceSession): Promise<{ session: VoiceSession; token: string }> {
    const { models, speech } = this.options;
    if (input.conversationId !== null) {
      await this.options.conversations.get(input.accountId, input.conversationId, input.userId);
    }
    const model = models.resolveChatModelName(input.model, 'model');
    const sttModel = speech.resolveTranscriptionModel(input.sttModel, undefined, 'stt_model');
    // Unavailable engines are refused now (503 with the fix), not on the socket.
    models.model('transcription', sttModel);
    models.model('chat', model);
    const ttsModel = speech.resolveSpeechModel(input.ttsModel, 'tts_model');
    const language =
      input.languageCode === undefined ? null : normaliseLanguageTag(input.languageCode);
    const voiceId = await speech.checkVoice(ttsModel, input.voiceId ?? null, language, 'voice_id');
    const sampleRate = input.sampleRate ?? 16000;
    if (!streamSampleRates.includes(sampleRate)) {
      throw new InvalidParameterError(
        'sample_rate',
        `'sample_rate' must be one of ${streamSampleRates.join(', ')}.`,
      );
    }
    const now = this.now();
    const token = `vst_${randomBase62(43)}`;
    const session: VoiceSession = {
      id: newId('vs'),
      accountId: input.accountId,
      keyId: input.keyId,
      userId: input.userId,
      conversationId: input.conversationId,
      model,
      sttModel,
      ttsModel,
      voiceId,
      languageCode: language,
      sampleRate,
      audioFormat: input.audioFormat ?? 'mp3',
      tokenExpiresAt: new Date(now + this.options.limits.tokenTtlSeconds * 1000).toISOString(),
      expiresAt: new Date(now + this.options.limits.sessionTtlSeconds * 1000).toISOString(),
      connectedAt: null,
      createdAt: new Date(now).toISOString(),
    };
    await this.options.repository.insert(session, hashToken(token));
    return { session, token };
  }

  /**
   * The key behind a session whose token is valid and unused, without using the token (the
   * connection cap is checked before the token is spent); undefined otherwise.
   */
  keyIdForToken(sessionId: string, token: string | undefined): Promise<string | undefined> {
    if (token === undefined || token === '') return Promise.resolve(undefined);
    return this.options.repository.keyIdForToken(
      sessionId,
      hashToken(token),
      new Date(this.now()).toISOString(),
    );
  }

  /**
   * Uses a session's token (once); 401 when it is wrong, used or expired, or when the key that
   * created the session was revoked or expired since. Answers the key's tier with the session.
   */
  async redeem(
    sessionId: string,
    token: string | undefined,
  ): Promise<{ session: VoiceSession; tier: string; accountTier: string | null }> {
    if (token === undefined || token === '') {
      throw new AppError(
        'missing_api_key',
        "The voice session's token is required: '?token=' or 'Authorization: Bearer <token>'.",
      );
    }
    const session = await this.options.repository.redeem(
      sessionId,
      hashToken(token),
      new Date(this.now()).toISOString(),
    );
    if (session === undefined) {
      throw new AppError(
        'invalid_api_key',
        'The voice session token is invalid, already used, or expired; create a new session.',
      );
    }
    const [key] = await this.options.keyStates([session.keyId]);
    if (key === undefined || key.revoked) {
      throw new AppError(
        'revoked_api_key',
        'The API key that created this voice session was revoked.',
      );
    }
    if (key.expiresAtMs !== null && this.now() >= key.expiresAtMs) {
      throw new AppError(
        'expired_api_key',
        'The API key that created this voice session has expired.',
      );
    }
    return { session, tier: key.tier, accountTier: key.accountTier };
  }

  setConversation(sessionId: string, conversationId: string): Promise<void> {
    return this.options.repository.setConversation(sessionId, conversationId);
  }
}
