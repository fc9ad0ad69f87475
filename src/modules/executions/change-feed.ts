// The change feed of execution records: "execution X changed" reaches every follower of X in this
// process at once and, through a transport, in every other instance (PostgreSQL LISTEN/NOTIFY or
// Redis pub/sub). It carries only the id: followers read the records, which are the truth, so a
// change made anywhere — by this instance, another, or one recovering orphaned runs — is seen alike.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { resubscribeOnReconnect, subscriberConnection } from '../../storage/redis-subscriber.js';
import type { PostgresListener } from '../../storage/dialects/postgres-notifications.js';

/** Carries short text messages between the instances sharing one database. */
export interface ChangeTransport {
  readonly kind: 'postgres' | 'redis';
  /** Resolves once messages published from now on will be delivered. */
  start(handlers: { message(payload: string): void; resumed(): void }): Promise<void>;
  publish(payload: string): Promise<void>;
  close(): Promise<void>;
}

export type FeedReach = 'process' | ChangeTransport['kind'];

export interface ExecutionChangeFeedOptions {
  /** Null: changes reach followers in this process only. */
  transport: ChangeTransport | null;
  /** This instance's id: its own messages coming back through the transport are ignored. */
  origin: string;
  logger: Logger;
}

const maxPayloadLength = 300;

export class ExecutionChangeFeed {
  private readonly watchers = new Map<string, Set<() => void>>();
  private readonly publishing = new Set<Promise<void>>();

  constructor(private readonly options: ExecutionChangeFeedOptions) {}

  /** Where changes are seen: this process only, or every instance through the transport. */
  get reach(): FeedReach {
    return this.options.transport?.kind ?? 'process';
  }

  async start(): Promise<void> {
    await this.options.transport?.start({
      message: (payload) => this.received(payload),
      // Messages sent while the transport was down are lost: every follower reads again.
      resumed: () => {
        for (const id of [...this.watchers.keys()]) this.wake(id);
      },
    });
  }

  /** Execution `executionId` changed: wakes its followers here, then tells the other instances. */
  changed(executionId: string): void {
    this.wake(executionId);
    const transport = this.options.transport;
    if (transport === null) return;
    const sent = transport
      .publish(`${this.options.origin} ${executionId}`)
      .catch((error: unknown) =>
        this.options.logger.warn(
          { err: error, execution_id: executionId, transport: transport.kind },
          'could not publish an execution change; followers on other instances see it at the next change',
        ),
      )
      .finally(() => this.publishing.delete(sent));
    this.publishing.add(sent);
  }

  /** Calls `wake` after every change of `executionId` until the returned function is called. */
  watch(executionId: string, wake: () => void): () => void {
    let set = this.watchers.get(executionId);
    if (set === undefined) {
      set = new Set();
      this.watchers.set(executionId, set);
    }
    set.add(wake);
    return () => {
      const current = this.watchers.get(executionId);
      if (current === undefined) return;
      current.delete(wake);
      if (current.size === 0) this.watchers.delete(executionId);
    };
  }

  /** Waits for changes still being published, then stops the transport. */
  async close(): Promise<void> {
    await Promise.all([...this.publishing]);
    await this.options.transport?.close();
  }

  private wake(executionId: string): void {
    const set = this.watchers.get(executionId);
    if (set === undefined) return;
    for (const wake of [...set]) wake();
  }

  private received(payload: string): void {
    if (payload.length > maxPayloadLength) return;
    const space = payload.indexOf(' ');
    if (space <= 0) return;
    if (payload.slice(0, space) === this.options.origin) return;
    this.wake(payload.slice(space + 1));
  }
}

/** Through PostgreSQL: NOTIFY on the pool, LISTEN on one dedicated connection. */
export function postgresChangeTransport(listener: PostgresListener): ChangeTransport {
  return {
    kind: 'postgres',
    start: (handlers) => listener.listen(handlers),
    publish: (payload) => listener.notify(payload),
    close: () => listener.close(),
  };
}

/** Through Redis pub/sub: PUBLISH on the shared client, SUBSCRIBE on a duplicate in subscriber mode. */
export function redisChangeTransport(
  client: Redis,
  channel: string,
  logger: Logger,
): ChangeTransport {
  const subscriber = subscriberConnection(client, `${channel}-subscriber`);
  subscriber.on('error', (error: Error) =>
    logger.warn({ err: error }, 'redis subscriber connection error'),
  );
  return {
    kind: 'redis',
    async start(handlers) {
      subscriber.on('message', (from: string, payload: string) => {
        if (from === channel) handlers.message(payload);
      });
      await subscriber.connect();
      await subscriber.subscribe(channel);
      // Every later 'ready' is a reconnection: once the subscription is confirmed again,
      // followers read again (messages published meanwhile were lost).
      resubscribeOnReconnect(subscriber, channel, logger, () => handlers.resumed());
    },
    async publish(payload) {
      await client.publish(channel, payload);
    },
    async close() {
      await subscriber.quit().catch(() => subscriber.disconnect());
    },
  };
}
