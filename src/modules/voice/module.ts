// The voice module, wired: speech (transcription, synthesis, voices), voice sessions and their
// storage, and one plugin for app.ts with their HTTP routes and WebSockets.
import type { Kysely } from 'kysely';
import type { AudioPool } from '../../audio/audio-pool.js';
import type { CredentialWatch } from '../../auth/credential-watch.js';
import type { ChatService } from '../chat/chat-service.js';
import type { KeyState } from '../accounts/api-key.js';
import type { AppConfig } from '../../config/config.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import type { PlatformMetrics } from '../metrics/metrics.js';
import type { TurnLimit } from './realtime/connection.js';
import { openAiAudioPlugin } from './openai-audio.routes.js';
import { realtimePlugin } from './realtime/realtime.routes.js';
import { SpeechService } from './speech-service.js';
import { speechPlugin } from './speech.routes.js';
import { VoiceSessionService } from './voice-session-service.js';
import { VoiceSessionsRepository } from './voice-sessions.repository.js';
import { voicePlugin } from './voice.routes.js';

export interface VoiceModuleDependencies {
  readonly config: Pick<AppConfig, 'speech' | 'features' | 'version'>;
  readonly db: Kysely<DatabaseSchema>;
  /** The speech models are the registry's (built over the speech engines). */
  readonly models: ModelRegistry;
  /** The audio threads of the speech engines: decoding, resampling, encoding and synthesis. */
  readonly audio: AudioPool;
  readonly conversations: ConversationService;
  /** Voice turns are chat turns, stored like any other. */
  readonly chat: ChatService;
  /** Revocation, expiry and tier of keys (the accounts module's). */
  readonly keyStates: (keyIds: readonly string[]) => Promise<KeyState[]>;
  /** Ends the WebSockets whose key is revoked or expires (the accounts module's). */
  readonly credentialWatch: CredentialWatch;
  /** Counts each user turn on a WebSocket against its key's rate limit. */
  readonly limitTurn: TurnLimit;
  readonly metrics: Pick<PlatformMetrics, 'webSocketOpened'>;
  readonly now: () => number;
}

export interface VoiceModule {
  readonly speech: SpeechService;
  readonly voiceSessions: VoiceSessionService;
  /**
   * /v1/speech, OpenAI's /v1/audio/transcriptions and /v1/audio/speech, /v1/voice/sessions,
   * /v1/ws/config and /asyncapi.json, then the WebSockets (/v1/voice/stream/{session_id}, /v1/ws),
   * each part in a context of its own; the WebSockets' closes the open connections as the server
   * stops.
   */
  readonly plugin: FeaturePlugin;
}

export function createVoiceModule(dependencies: VoiceModuleDependencies): VoiceModule {
  const { config, db, models, conversations, chat, credentialWatch, now } = dependencies;
  const speech = new SpeechService({ models, pool: dependencies.audio, config: config.speech });
  const voiceSessions = new VoiceSessionService({
    repository: new VoiceSessionsRepository(db),
    keyStates: dependencies.keyStates,
    models,
    speech,
    conversations,
    limits: config.speech.realtime,
    now,
  });
  const realtime = realtimePlugin({
    config,
    voiceSessions,
    speech,
    chat,
    models,
    conversations,
    credentialWatch,
    metrics: dependencies.metrics,
    limitTurn: dependencies.limitTurn,
  });
  // The speech engines and their audio threads are the service's (the model registry uses them
  // too), as are the database and the credential watch: the module itself holds nothing open.
  return {
    speech,
    voiceSessions,
    plugin: featurePlugin('voice', async (app) => {
      await app.register(speechPlugin(speech));
      await app.register(openAiAudioPlugin(speech));
      await app.register(voicePlugin({ config, voiceSessions }));
      await app.register(realtime);
    }),
  };
}
