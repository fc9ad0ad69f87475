// Which deployments of a model are cooling down after failures, shared by every instance: in this
// process when there is no Redis, in Redis (./redis-deployment-health.ts) when there is. A
// deployment that fails (5xx, 429, 402, 408, a timeout, a refused or cut connection) cools down for
// a time that doubles with each failure in a row (from `deployment_cooldown_ms` up to
// `deployment_max_cooldown_ms`), or for as long as its Retry-After asks when that is longer. When the
// time is up, one request (a probe) is let through; the others keep away until it answers: a
// success ends the cooldowns, a failure starts a longer one.
import type { UpstreamSettings } from '../../config/config.js';

/** One deployment's state as the instance knows it. */
export interface DeploymentState {
  /** Epoch ms until which it is not used; 0 when it is not cooling. */
  readonly until: number;
  /** Failures in a row (0: healthy). */
  readonly failures: number;
}

export const healthy: DeploymentState = { until: 0, failures: 0 };

/** What a router may do with a deployment now. */
export type Availability = 'use' | 'probe' | 'cooling';

export function availabilityOf(state: DeploymentState, now: number): Availability {
  if (state.failures === 0) return 'use';
  return state.until > now ? 'cooling' : 'probe';
}

/** Longest cooldown a Retry-After may ask for. */
const longestRequestedMs = 3_600_000;

/** The cooldown after failure number `failures` (1 for the first), honouring a Retry-After. */
export function cooldownMs(
  settings: UpstreamSettings,
  failures: number,
  retryAfterMs: number | null,
): number {
  const backoff = Math.min(
    settings.maxCooldownMs,
    settings.cooldownMs * 2 ** Math.min(30, Math.max(0, failures - 1)),
  );
  return Math.max(backoff, Math.min(retryAfterMs ?? 0, longestRequestedMs));
}

/**
 * The deployments' shared health. Ids are `<model>/<deployment>`. `states` is what the instance
 * knows, never older than a second; `failed` and `succeeded` tell every instance.
 */
export interface DeploymentHealth {
  /** The states of `ids`, read again where the instance's copy is older than a second. */
  states(ids: readonly string[]): DeploymentState[] | Promise<DeploymentState[]>;
  /** A call to it failed: it cools down (unless it already is: that call was sent before). */
  failed(id: string, retryAfterMs: number | null): Promise<void>;
  /** A call to it succeeded: its failures are forgotten. */
  succeeded(id: string): void;
  /** Starts hearing of other instances' changes (at start-up, when a model has deployments). */
  start(): Promise<void>;
  /** Claims the probe of a deployment whose cooldown is over: true for one caller only. */
  claimProbe(id: string, holdMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Failures are remembered this long after a cooldown ends, for the next one to be longer. */
export const memoryMs = 10 * 60_000;

/** The health of one instance's deployments, in its memory. */
export class MemoryDeploymentHealth implements DeploymentHealth {
  private readonly known = new Map<string, DeploymentState & { probeUntil: number }>();

  constructor(
    private readonly settings: UpstreamSettings,
    private readonly now: () => number = Date.now,
  ) {}

  start(): Promise<void> {
    return Promise.resolve();
  }

  states(ids: readonly string[]): DeploymentState[] {
    const now = this.now();
    return ids.map((id) => {
      const state = this.known.get(id);
      if (state === undefined) return healthy;
      if (state.until + memoryMs < now) {
        this.known.delete(id);
        return healthy;
      }
      // A probe under way keeps the others away, as a cooldown does.
      return state.probeUntil > now ? { until: state.probeUntil, failures: state.failures } : state;
    });
  }

  failed(id: string, retryAfterMs: number | null): Promise<void> {
    const now = this.now();
    const state = this.known.get(id);
    if (state !== undefined && state.until > now) return Promise.resolve();
    const failures = (state?.failures ?? 0) + 1;
    this.known.set(id, {
      failures,
      until: now + cooldownMs(this.settings, failures, retryAfterMs),
      probeUntil: 0,
    });
    return Promise.resolve();
  }

  succeeded(id: string): void {
    this.known.delete(id);
  }

  claimProbe(id: string, holdMs: number): Promise<boolean> {
    const now = this.now();
    const state = this.known.get(id);
    if (state === undefined) return Promise.resolve(true);
    if (state.until > now || state.probeUntil > now) return Promise.resolve(false);
    this.known.set(id, { ...state, probeUntil: now + holdMs });
    return Promise.resolve(true);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
