// PostgreSQL LISTEN/NOTIFY: one dedicated connection per process listens on a channel (pg's own
// `notification` events) and reconnects with backoff when it is lost; NOTIFY goes through the pool.
import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { DatabaseSchema } from '../schema.js';

export interface NotificationHandlers {
  message(payload: string): void;
  /** The connection was lost and is back: notifications sent meanwhile were missed. */
  resumed(): void;
}

export interface PostgresListenerOptions {
  url: string;
  db: Kysely<DatabaseSchema>;
  channel: string;
  logger: Logger;
  /** First reconnection delay; doubled up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
}

/** A channel name is an identifier: quoted for LISTEN, so only plain names are accepted. */
const channelName = /^[a-z_][a-z0-9_]{0,62}$/;

export class PostgresListener {
  private client: pg.Client | null = null;
  private handlers: NotificationHandlers | null = null;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs: number;
  private pid: number | null = null;

  constructor(private readonly options: PostgresListenerOptions) {
    if (!channelName.test(options.channel)) {
      throw new Error(`invalid PostgreSQL notification channel name '${options.channel}'`);
    }
    this.retryMs = options.retryMs ?? 500;
  }

  /** Listens from now on: resolves once LISTEN is in effect, so no later NOTIFY is missed. */
  async listen(handlers: NotificationHandlers): Promise<void> {
    this.handlers = handlers;
    await this.connect();
  }

  /** Delivered to every listener of the channel when the surrounding transaction (if any) commits. */
  async notify(payload: string): Promise<void> {
    await sql`select pg_notify(${this.options.channel}, ${payload})`.execute(this.options.db);
  }

  /** The PostgreSQL backend process of the listening connection (tests end it to test recovery). */
  get backendPid(): number | null {
    return this.client === null ? null : this.pid;
  }

  private async connect(): Promise<void> {
    // Loaded here, not with the module: only PostgreSQL deployments ever listen.
    const [{ default: pgModule }, { postgresConnection }] = await Promise.all([
      import('pg'),
      import('./postgres.js'),
    ]);
    const client = new pgModule.Client({
      ...postgresConnection(this.options.url),
      connectionTimeoutMillis: 5000,
      // The connection is idle between notifications; keep-alive notices a silently dropped one.
      keepAlive: true,
    });
    client.on('notification', (message) => {
      if (message.channel === this.options.channel && message.payload !== undefined) {
        this.handlers?.message(message.payload);
      }
    });
    client.on('error', (error) => {
      this.options.logger.warn({ err: error }, 'notification connection failed; reconnecting');
      this.lost(client);
    });
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN "${this.options.channel}"`);
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      this.pid = rows[0]?.pid ?? null;
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer !== undefined) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(delay * 2, this.options.maxRetryMs ?? 30_000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect()
        .then(() => {
          this.retryMs = this.options.retryMs ?? 500;
          this.options.logger.info('notification connection restored');
          this.handlers?.resumed();
        })
        .catch((error: unknown) => {
          this.options.logger.warn({ err: error }, 'notification connection still failing');
          this.scheduleReconnect();
        });
    }, delay);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    if (client !== null) await client.end().catch(() => undefined);
  }
}
