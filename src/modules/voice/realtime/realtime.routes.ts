// The WebSocket endpoints: /v1/voice/stream/{session_id} (voice-stream.routes.ts) and /v1/ws (the
// general channel, general-channel.routes.ts), as one Fastify plugin. Here is what both share: the
// WebSocket plugin, each key's connection slots, the open connections (counted in the metrics,
// closed when the server stops), and the voice conversation a connection relays.
import websocket from '@fastify/websocket';
import type { FastifyRequest } from 'fastify';
import {
  featurePlugin,
  type FeatureApp,
  type FeaturePlugin,
} from '../../../http/feature-plugin.js';
import { VoiceConversation } from '../voice-conversation.js';
import { closeCodes } from './close-codes.js';
import { Connection, ConnectionSlots, tooManyConnections } from './connection.js';
import { generalChannelRoute } from './general-channel.routes.js';
import { voiceStreamRoute } from './voice-stream.routes.js';

import type { RealtimeDependencies, RealtimeSockets } from './sockets.routes.js';

export type { Peer, RealtimeDependencies, RealtimeSockets } from './sockets.routes.js';

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
