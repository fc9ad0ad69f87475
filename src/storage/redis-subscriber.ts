// A Redis connection of its own for one channel's messages (a subscribed connection can do nothing
// else), shared by the executions' change feed and the deployments' health.
//
// ioredis can resubscribe by itself after a reconnection (its `autoResubscribe`), but it sends that
// SUBSCRIBE without a handler on its promise: when the connection is closed before Redis answers
// (the service stopping just after Redis came back), the promise rejects ("Connection is closed.")
// with no one to catch it, and Node stops the process on an unhandled rejection. (A connection
// lost again meanwhile is not enough: ioredis sends the command again on the next one.) So the
// connection resubscribes itself on every reconnection, and a failure there is logged.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** A connection for subscribing, named so that CLIENT LIST shows what it is for. */
export function subscriberConnection(client: Redis, connectionName: string): Redis {
  return client.duplicate({
    connectionName,
    lazyConnect: true,
    // Commands wait while it reconnects, rather than fail at once.
    enableOfflineQueue: true,
    maxRetriesPerRequest: null,
    autoResubscribe: false,
  });
}

/**
 * Once the first subscription is confirmed: subscribes to `channel` again at each reconnection
 * (every later 'ready'), then calls `resumed` (messages published meanwhile were lost).
 */
export function resubscribeOnReconnect(
  subscriber: Redis,
  channel: string,
  logger: Logger,
  resumed: () => void = () => undefined,
): void {
  subscriber.on('ready', () => {
    subscriber
      .subscribe(channel)
      .then(resumed)
      .catch((error: unknown) =>
        logger.warn({ err: error, channel }, 'redis: could not subscribe again after reconnecting'),
      );
  });
}
