// A voice session as the domain sees it: the chat and speech settings of one real-time voice
// conversation, opened by a key and joined once with a short-lived token.
import type { OutputFormat } from '../../audio/audio-types.js';

export interface VoiceSession {
  id: string;
  accountId: string;
  keyId: string;
  userId: string;
  conversationId: string | null;
  model: string;
  sttModel: string;
  ttsModel: string;
  voiceId: string;
  languageCode: string | null;
  /** Rate of the PCM the client streams. */
  sampleRate: number;
  /** Format of the audio_response chunks. */
  audioFormat: OutputFormat;
  tokenExpiresAt: string;
  expiresAt: string;
  connectedAt: string | null;
  createdAt: string;
}
