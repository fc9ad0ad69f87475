// What both WebSocket channels share: sending events, the `error` message, keep-alive pings, the
// idle timeout, and closing when the key or session behind the socket stops being valid (checked
// for every open socket in one query, several times a second).
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { CredentialWatch, WatchedCredential } from '../../../auth/credential-watch.js';
import type { AppConfig } from '../../../config/config.js';
import { AppError } from '../../../errors/app-error.js';
import { closeCodes } from './close-codes.js';

/**
 * How many WebSockets each key holds open on this instance (both channels together), so one key
 * cannot open thousands: a slot is taken before the upgrade and given back when the socket closes.
 * Counted per instance, not in Redis: a count shared there would outlive an instance that dies
 * with sockets open, and a key spread over N instances holds at most N × the cap.
 */
export class ConnectionSlots {
  private readonly held = new Map<string, number>();

  constructor(readonly perKey: number) {}

  /** A slot for `keyId` and the function that gives it back (once), or null when all are taken. */
  acquire(keyId: string): (() => void) | null {
    const count = this.held.get(keyId) ?? 0;
    if (count >= this.perKey) return null;
    this.held.set(keyId, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(keyId) ?? 1) - 1;
      if (left <= 0) this.held.delete(keyId);
      else this.held.set(keyId, left);
    };
  }

  count(keyId: string): number {
    return this.held.get(keyId) ?? 0;
  }
}

/** The 429 of an upgrade past the cap (no Retry-After: a slot frees when a socket closes). */
export function tooManyConnections(perKey: number): AppError {
  return new AppError(
    'rate_limit_exceeded',
    `This API key already has ${perKey} WebSocket connections open (the most it may hold at once on /v1/ws and voice streams together). Close one and connect again.`,
    { details: { limit: perKey, window: 'connections', limit_scope: 'key' } },
  );
}

/** The key (and account) a user turn is counted against. */
export interface TurnCredential {
  keyId: string;
  tier: string;
  accountId: string;
  accountTier: string | null;
}

/** Counts a user turn against its key's rate limit: the 429 to send when refused, else null. */
export type TurnLimit = (credential: TurnCredential) => Promise<AppError | null>;

export interface ConnectionOptions {
  socket: WebSocket;
  keyId: string;
  tier: string;
  /** The key's account and the tier of its ceiling (turns count against both). */
  accountId: string;
  accountTier: string | null;
  sessionExpiresAtMs: number | null;
  limits: AppConfig['speech']['realtime'];
  watch: CredentialWatch;
  limitTurn: TurnLimit;
  logger: Logger;
  onClose: () => void;
}

/**
 * Messages a connection holds before it stops reading from its socket: past this many, TCP's own
 * flow control makes the client wait (the socket is paused until half of them are handled).
 */
export const maxPendingMessages = 32;

export class Connection {
  private readonly entry: WatchedCredential & { accountId: string };
  /** Received messages not yet handled, oldest first (at most `maxPendingMessages`). */
  private readonly inbox: Array<() => unknown> = [];
  private draining = false;
  private paused = false;
  private readonly unwatch: () => void;
  private idleTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout;
  private missedPongs = 0;
  private open = true;

  constructor(private readonly options: ConnectionOptions) {
    const { socket } = options;
    this.entry = {
      keyId: options.keyId,
      sessionExpiresAtMs: options.sessionExpiresAtMs,
      tier: options.tier,
      accountId: options.accountId,
      accountTier: options.accountTier,
      end: (why) => this.close(closeCodes.credentialsInvalid, why.reason),
    };
    this.unwatch = options.watch.add(this.entry);
    socket.on('pong', () => {
      this.missedPongs = 0;
    });
    // A peer that answers two pings in a row with nothing is gone.
    this.pingTimer = setInterval(() => {
      if (this.missedPongs >= 2) return socket.terminate();
      this.missedPongs += 1;
      socket.ping();
    }, options.limits.pingIntervalMs);
    this.pingTimer.unref();
    this.touch();
    socket.on('close', () => this.closed());
    socket.on('error', (error) => options.logger.debug({ err: error }, 'websocket error'));
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** Called for every message either way: the idle timeout starts again. */
  touch(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(
      () => this.close(closeCodes.idleTimeout, 'idle timeout'),
      this.options.limits.idleTimeoutMs,
    );
    this.idleTimer.unref();
  }

  /**
   * Queues the handling of one received message. Messages are handled one at a time, in order,
   * each in its own turn of the event loop: a burst of thousands of frames (which the WebSocket
   * library may read in one go) never holds the loop, and never piles up in memory — past
   * `maxPendingMessages` the socket stops being read until the backlog halves.
   */
  receive(handle: () => unknown): void {
    if (!this.open) return;
    this.touch();
    this.inbox.push(handle);
    if (this.inbox.length >= maxPendingMessages && !this.paused) {
      this.paused = true;
      this.options.socket.pause();
    }
    if (!this.draining) void this.drain();
  }

  /** Handled messages waiting (for tests and metrics). */
  get pendingMessages(): number {
    return this.inbox.length;
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.open && this.inbox.length > 0) {
        await nextTurn();
        const handle = this.inbox.shift()!;
        if (this.paused && this.inbox.length <= maxPendingMessages / 2) {
          this.paused = false;
          this.options.socket.resume();
        }
        try {
          await handle();
        } catch (error) {
          this.sendError(error);
        }
      }
    } finally {
      this.draining = false;
      if (!this.open) this.inbox.length = 0;
    }
  }

  /** Sends an event; an answer in progress is activity too, so the idle timeout starts again. */
  send(event: object): void {
    if (this.open && this.options.socket.readyState === this.options.socket.OPEN) {
      this.options.socket.send(JSON.stringify(event));
      this.touch();
    }
  }

  /** The contract's error object in an `error` message; the connection stays open. */
  sendError(error: unknown, extra: Record<string, unknown> = {}): void {
    const appError =
      error instanceof AppError
        ? error
        : new AppError(
            'internal_error',
            'The message could not be handled. The failure was logged.',
          );
    if (!(error instanceof AppError))
      this.options.logger.error({ err: error }, 'websocket message failed');
    this.send({ type: 'error', ...extra, error: appError.toBody().error });
  }

  /** Counts a user turn against the key's rate limit; the refusal to send when refused. */
  consumeTurn(): Promise<AppError | null> {
    const { keyId, tier, accountId, accountTier } = this.entry;
    return this.options.limitTurn({ keyId, tier, accountId, accountTier });
  }

  close(code: number, reason: string): void {
    if (!this.open) return;
    const { socket } = this.options;
    socket.close(code, reason);
    // A peer that does not answer the closing handshake is cut off.
    setTimeout(() => socket.terminate(), 1000).unref();
    this.closed();
  }

  private closed(): void {
    if (!this.open) return;
    this.open = false;
    clearInterval(this.pingTimer);
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.unwatch();
    this.options.onClose();
  }
}
