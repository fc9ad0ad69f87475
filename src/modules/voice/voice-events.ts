// What a voice conversation is given (its settings and the services it uses) and what it tells
// its client (VoiceEvent): the real-time layer serialises these events as they are.
import type { Logger } from 'pino';
import type { OutputFormat } from '../../audio/audio-types.js';
import type { ChatService } from '../chat/chat-service.js';
import type { AppConfig } from '../../config/config.js';
import type { AppError } from '../../errors/app-error.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { CallAttribution } from '../../models/spec.js';
import type { SpeechService } from './speech-service.js';

/** What the conversation tells its client; the real-time layer serialises these as they are. */
export type VoiceEvent =
  | { type: 'speech_started'; turn_id: string }
  | {
      type: 'transcript';
      turn_id: string;
      text: string;
      is_final: boolean;
      confidence: number | null;
      language: string | null;
    }
  | { type: 'text_response'; turn_id: string; delta: string; final: false }
  | {
      type: 'text_response';
      turn_id: string;
      text: string;
      final: true;
      conversation_id: string | null;
      message_id: string;
    }
  | {
      type: 'audio_response';
      turn_id: string;
      sequence: number;
      audio: string;
      format: OutputFormat;
      sample_rate: number;
      duration_seconds: number;
      text: string;
    }
  | { type: 'interrupt'; turn_id: string; reason: 'user_speech' | 'user_text' }
  | {
      type: 'turn_end';
      turn_id: string;
      conversation_id: string | null;
      message_id: string | null;
      interrupted: boolean;
    }
  | { type: 'error'; turn_id: string | null; error: ReturnType<AppError['toBody']>['error'] };

export interface VoiceSettings {
  accountId: string;
  /** The key that opened the socket (or the voice session): its turns are recorded under it. */
  apiKeyId: string;
  userId: string | null;
  conversationId: string | null;
  model: string | undefined;
  sttModel: string | undefined;
  /** Null: answer in text only. */
  ttsModel: string | null;
  voiceId: string | null;
  language: string | null;
  /** Rate of the PCM the client streams. */
  sampleRate: number;
  audioFormat: OutputFormat;
  /** The socket's route, as the usage ledger records its model calls under. */
  route: string;
}

/** Whose model calls a conversation's are: the socket's key and account, its user. */
export function voiceAttribution(settings: VoiceSettings): CallAttribution {
  return {
    accountId: settings.accountId,
    apiKeyId: settings.apiKeyId,
    endUser: settings.userId,
    route: settings.route,
  };
}

export interface VoiceConversationOptions {
  settings: VoiceSettings;
  chat: ChatService;
  speech: SpeechService;
  models: ModelRegistry;
  limits: AppConfig['speech']['realtime'];
  /** Counts a user turn against the key's rate limit; an error refuses the turn. */
  consumeTurn: () => Promise<AppError | null>;
  emit: (event: VoiceEvent) => void;
  /** The conversation the first turn created. */
  onConversation: (conversationId: string) => void;
  logger: Logger;
  now?: () => number;
}
