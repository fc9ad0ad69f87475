// The WebSocket endpoints: /v1/voice/stream/{session_id} (voice-stream.routes.ts) and /v1/ws (the
// general channel, general-channel.routes.ts), as one Fastify plugin. Here is what both share: the
// WebSocket plugin, each key's connection slots, the open connections (counted in the metrics,
// closed when the server stops), and the voice conversation a connection relays.
import websocket from '@fastify/websocket';
import type { FastifyRequest } from 'fastify';
import type { CredentialWatch } from '../../../auth/credential-watch.js';
import type { ChatService } from '../../chat/chat-service.js';
import type { AppConfig } from '../../../config/config.js';
import {
  featurePlugin,
  type FeatureApp,
  type FeaturePlugin,
} from '../../../http/feature-plugin.js';
import type { ModelRegistry } from '../../../models/model-registry.js';
import type { ConversationService } from '../../conversations/conversation-service.js';
import type { PlatformMetrics } from '../../metrics/metrics.js';
import type { SpeechService } from '../speech-service.js';
import { VoiceConversation, type VoiceSettings } from '../voice-conversation.js';
import type { VoiceSessionService } from '../voice-session-service.js';
import { closeCodes } from './close-codes.js';
import {
  Connection,
  ConnectionSlots,
  tooManyConnections,
  type ConnectionOptions,
  type TurnLimit,
} from './connection.js';
import { generalChannelRoute } from './general-channel.routes.js';
import { voiceStreamRoute } from './voice-stream.routes.js';

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

type WithSlot = FastifyRequest & { releaseSlot?: () => void };

function realtimeSockets(
  dependencies: RealtimeDependencies,
  open: Set<Connection>,
): RealtimeSockets {
  const limits = dependencies.config.speech.realtime;
  const slots = new ConnectionSlots(limits.maxConnectionsPerKey);
  return {
    dependencies,
    limits,
    takeSlot(request, keyId) {
      const release = slots.acquire(keyId);
      if (release === null) throw tooManyConnections(slots.perKey);
      (request as WithSlot).releaseSlot = release;
      request.raw.socket?.once('close', release);
      return release;
    },
    openConnection(request, channel, peer, onClose) {
      const counted = dependencies.metrics.webSocketOpened(channel);
      const connection: Connection = new Connection({
        ...peer,
        limits,
        watch: dependencies.credentialWatch,
        limitTurn: dependencies.limitTurn,
        onClose: () => {
          open.delete(connection);
          (request as WithSlot).releaseSlot?.();
          counted();
          onClose();
        },
      });
      open.add(connection);
      return connection;
    },
    converse(settings, connection, logger, onConversation) {
      return new VoiceConversation({
        settings,
        chat: dependencies.chat,
        speech: dependencies.speech,
        models: dependencies.models,
        limits,
        consumeTurn: () => connection.consumeTurn(),
        emit: (event) => connection.send(event),
        onConversation,
        logger,
      });
    },
  };
}

/**
 * Closes every open connection as the server stops. (A refused upgrade's socket is closed by the
 * app, src/app.ts: any route may answer an upgrade request.)
 */
function closeSocketsWithTheServer(app: FeatureApp, open: Set<Connection>): void {
  // Before the server stops accepting: open sockets would otherwise keep it from closing.
  app.addHook('preClose', (done) => {
    for (const connection of open) connection.close(closeCodes.goingAway, 'server shutting down');
    done();
  });
}

/**
 * The WebSocket routes, in a context of their own: the WebSocket plugin's hooks and decorators
 * serve these routes alone (it is registered last, after the HTTP routes).
 */
export function realtimePlugin(dependencies: RealtimeDependencies): FeaturePlugin {
  return featurePlugin('realtime', async (app) => {
    const limits = dependencies.config.speech.realtime;
    await app.register(websocket, {
      // One `message` event per turn of the event loop, even for frames that arrived together.
      options: { maxPayload: limits.maxMessageBytes, allowSynchronousEvents: false },
    });
    const open = new Set<Connection>();
    const sockets = realtimeSockets(dependencies, open);
    closeSocketsWithTheServer(app, open);
    voiceStreamRoute(app, sockets);
    generalChannelRoute(app, sockets);
  });
}
