// What the two WebSocket channels (voice-stream.routes.ts, general-channel.routes.ts) are handed by
// the plugin that serves them (realtime.routes.ts): its dependencies, each key's connection slots,
// the open connections and the voice conversation a connection relays. Apart, so that the
// channels need not import the plugin that imports them.
import type { FastifyRequest } from 'fastify';
import type { CredentialWatch } from '../../../auth/credential-watch.js';
import type { ChatService } from '../../chat/chat-service.js';
import type { AppConfig } from '../../../config/config.js';
import type { ModelRegistry } from '../../../models/model-registry.js';
import type { ConversationService } from '../../conversations/conversation-service.js';
import type { PlatformMetrics } from '../../metrics/metrics.js';
import type { SpeechService } from '../speech-service.js';
import type { VoiceConversation, VoiceSettings } from '../voice-conversation.js';
import type { VoiceSessionService } from '../voice-session-service.js';
import type { Connection, ConnectionOptions, TurnLimit } from './connection.js';

export interface RealtimeDependencies {
  readonly config: Pick<AppConfig, 'speech' | 'features'>;
  readonly voiceSessions: VoiceSessionService;
  readonly speech: SpeechService;
  readonly chat: ChatService;
  readonly models: ModelRegistry;
  readonly conversations: ConversationService;
  /** Ends the sockets whose key was revoked or expired, or whose voice session ended. */
  readonly credentialWatch: CredentialWatch;
  readonly metrics: Pick<PlatformMetrics, 'webSocketOpened'>;
  /** Counts each user turn against the key's rate limit. */
  readonly limitTurn: TurnLimit;
}

/** What the socket of a connection is, and whose. */
export type Peer = Pick<
  ConnectionOptions,
  'socket' | 'keyId' | 'tier' | 'accountId' | 'accountTier' | 'sessionExpiresAtMs' | 'logger'
>;

/** What both channels share: handed to each route. */
export interface RealtimeSockets {
  readonly dependencies: RealtimeDependencies;
  readonly limits: AppConfig['speech']['realtime'];
  /**
   * Takes one of the key's connection slots before the upgrade (429 when none is left); it is
   * given back when the connection closes, or when the socket does (a refused or failed upgrade).
   */
  takeSlot(request: FastifyRequest, keyId: string): () => void;
  /** A connection counted in the metrics and kept open until it closes. */
  openConnection(
    request: FastifyRequest,
    channel: 'voice' | 'realtime',
    peer: Peer,
    onClose: () => void,
  ): Connection;
  /** The voice conversation a connection relays: its turns counted there, its events sent there. */
  converse(
    settings: VoiceSettings,
    connection: Connection,
    logger: Peer['logger'],
    onConversation: (conversationId: string) => void,
  ): VoiceConversation;
}
