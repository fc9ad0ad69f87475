// Whether the service can do its work now: its database answers and, when configured, Redis.
import type { Redis } from 'ioredis';

export type CheckState = 'ok' | 'unavailable' | 'not_configured';

export interface HealthReport {
  healthy: boolean;
  checks: { database: Exclude<CheckState, 'not_configured'>; redis: CheckState };
}

export interface HealthServiceOptions {
  /** Answers when the database does; rejects after `timeoutMs` otherwise. */
  pingDatabase(timeoutMs: number): Promise<void>;
  redis: Redis | null;
}

export class HealthService {
  constructor(private readonly options: HealthServiceOptions) {}

  async check(): Promise<HealthReport> {
    const [database, redis] = await Promise.all([
      this.options
        .pingDatabase(1500)
        .then(() => 'ok' as const)
        .catch(() => 'unavailable' as const),
      this.options.redis === null
        ? Promise.resolve('not_configured' as const)
        : this.options.redis
            .ping()
            .then(() => 'ok' as const)
            .catch(() => 'unavailable' as const),
    ]);
    return { healthy: database === 'ok' && redis !== 'unavailable', checks: { database, redis } };
  }
}
