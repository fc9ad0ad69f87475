// Re-checks the keys (and voice sessions) behind long-lived answers — WebSockets and Server-Sent
// Event streams — and ends those whose key was revoked or expired: one query for every open one,
// several times a second (`speech.realtime.credential_check_ms`), so another instance's revocation
// (written to the shared database) ends them within a second without a message bus; the instance
// that revokes a key checks at once.
import type { Logger } from 'pino';

/** What open sockets re-check: whether the key that stands behind them still may be used. */
export interface KeyState {
  keyId: string;
  tier: string;
  /** The tier of the key's account's rate-limit ceiling (null: none, the owner's account). */
  accountTier: string | null;
  revoked: boolean;
  /** Epoch ms, or null. */
  expiresAtMs: number | null;
}

/** Why a watched answer must end, with the contract's code for it. */
export interface CredentialEnd {
  code: 'revoked_api_key' | 'expired_api_key' | 'session_expired';
  reason: string;
}

export interface WatchedCredential {
  keyId: string;
  /** Epoch ms when the voice session ends; null for key-authenticated answers. */
  sessionExpiresAtMs: number | null;
  tier: string;
  accountTier: string | null;
  end(why: CredentialEnd): void;
}

export class CredentialWatch {
  private readonly watched = new Set<WatchedCredential>();
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly keyStates: (keyIds: readonly string[]) => Promise<KeyState[]>,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  /** Watches `entry` until the returned function is called (or it is ended). */
  add(entry: WatchedCredential): () => void {
    this.watched.add(entry);
    if (this.timer === null) {
      this.timer = setInterval(() => void this.check(), this.intervalMs);
      this.timer.unref();
    }
    return () => {
      this.watched.delete(entry);
      if (this.watched.size === 0 && this.timer !== null) {
        clearInterval(this.timer);
        this.timer = null;
      }
    };
  }

  /** Checks now rather than at the next tick (this instance just revoked a key). */
  checkNow(): Promise<void> {
    if (this.watched.size === 0) return Promise.resolve();
    return this.check();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private check(): Promise<void> {
    if (this.checking !== null) {
      // A check already reading may have read before the change: one more follows it.
      this.again = true;
      return this.checking;
    }
    this.checking = this.checkOnce().finally(() => {
      this.checking = null;
      if (this.again) {
        this.again = false;
        void this.check();
      }
    });
    return this.checking;
  }

  private async checkOnce(): Promise<void> {
    try {
      const entries = [...this.watched];
      if (entries.length === 0) return;
      const states = new Map(
        (await this.keyStates([...new Set(entries.map((entry) => entry.keyId))])).map((state) => [
          state.keyId,
          state,
        ]),
      );
      const now = Date.now();
      for (const entry of entries) {
        const state = states.get(entry.keyId);
        let why: CredentialEnd | null = null;
        if (state === undefined || state.revoked) {
          why = { code: 'revoked_api_key', reason: 'the API key was revoked' };
        } else if (state.expiresAtMs !== null && now >= state.expiresAtMs) {
          why = { code: 'expired_api_key', reason: 'the API key expired' };
        } else if (entry.sessionExpiresAtMs !== null && now >= entry.sessionExpiresAtMs) {
          why = { code: 'session_expired', reason: 'the voice session expired' };
        }
        if (why !== null) {
          this.watched.delete(entry);
          entry.end(why);
        } else if (state !== undefined) {
          entry.tier = state.tier;
          entry.accountTier = state.accountTier;
        }
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'could not re-check the keys of open streams and sockets');
    }
  }
}
