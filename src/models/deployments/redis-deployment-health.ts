// The deployments' health in Redis, for several instances: one hash per deployment (`until`,
// `failures`) changed by a script, so that two instances failing at once count one failure, and a
// message on a channel to every instance when a state changes. Each instance keeps a copy, updated
// by those messages at once and read again from Redis when older than a second (a message lost
// while reconnecting costs at most that). The probe after a cooldown is a key set only if absent.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { UpstreamSettings } from '../../config/config.js';
import { resubscribeOnReconnect, subscriberConnection } from '../../storage/redis-subscriber.js';
import {
  healthy,
  memoryMs,
  type DeploymentHealth,
  type DeploymentState,
} from './deployment-health.js';

/** A copy older than this is read again before it is used. */
export const freshForMs = 1000;

/**
 * KEYS: the state hash, the probe key. ARGV: now, first cooldown, longest, requested (Retry-After,
 * or -1), memory, channel, id. A failure while the deployment already cools is not counted: the
 * call was sent before its cooldown was known.
 */
const failScript = `
local now = tonumber(ARGV[1])
local state = redis.call('HMGET', KEYS[1], 'until', 'failures')
local untilMs = tonumber(state[1] or '0') or 0
local failures = tonumber(state[2] or '0') or 0
if untilMs > now then return {tostring(untilMs), failures} end
failures = failures + 1
local cool = math.min(tonumber(ARGV[3]), tonumber(ARGV[2]) * (2 ^ math.min(30, failures - 1)))
local requested = tonumber(ARGV[4])
if requested > cool then cool = math.min(requested, 3600000) end
untilMs = now + cool
redis.call('HSET', KEYS[1], 'until', tostring(untilMs), 'failures', failures)
redis.call('PEXPIRE', KEYS[1], math.floor(cool + tonumber(ARGV[5])))
redis.call('DEL', KEYS[2])
redis.call('PUBLISH', ARGV[6], ARGV[7] .. ' ' .. tostring(untilMs) .. ' ' .. failures)
return {tostring(untilMs), failures}
`;

interface Copy {
  state: DeploymentState;
  readAt: number;
}

export class RedisDeploymentHealth implements DeploymentHealth {
  private readonly copies = new Map<string, Copy>();
  /** Reads under way, by the ids they read. */
  private readonly reading = new Map<string, Promise<DeploymentState[]>>();
  private readonly subscriber: Redis;
  private readonly channel: string;
  private started: Promise<void> | null = null;

  constructor(
    private readonly client: Redis,
    /** Prefix of this service's keys (`<REDIS_KEY_PREFIX>:deployments`). */
    private readonly prefix: string,
    private readonly settings: UpstreamSettings,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.channel = `${prefix}:changes`;
    this.subscriber = subscriberConnection(client, this.channel);
    this.subscriber.on('error', (error: Error) =>
      logger.warn({ err: error }, 'redis subscriber connection error (deployment health)'),
    );
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.heard(message);
    });
  }

  /**
   * Subscribes on first use (a service whose models have no deployments never connects); the
   * service's start calls it when a model has deployments, so that no change is missed.
   */
  start(): Promise<void> {
    this.started ??= (async () => {
      await this.subscriber.connect();
      await this.subscriber.subscribe(this.channel);
      // Changes published while it reconnected were lost: the copies are read again within a
      // second anyway (freshForMs).
      resubscribeOnReconnect(this.subscriber, this.channel, this.logger);
    })().catch((error: unknown) => {
      this.started = null;
      this.logger.warn({ err: error }, 'deployment health: could not subscribe to its channel');
    });
    return this.started;
  }

  private heard(message: string): void {
    const [id, until, failures] = message.split(' ');
    if (id === undefined || until === undefined || failures === undefined) return;
    this.copies.set(id, {
      state: { until: Number(until), failures: Number(failures) },
      readAt: this.now(),
    });
  }

  private keyOf(id: string): string {
    return `${this.prefix}:${id}`;
  }

  states(ids: readonly string[]): DeploymentState[] | Promise<DeploymentState[]> {
    const now = this.now();
    const stale = ids.filter((id) => {
      const copy = this.copies.get(id);
      return copy === undefined || now - copy.readAt >= freshForMs;
    });
    if (stale.length === 0) return ids.map((id) => this.copies.get(id)?.state ?? healthy);
    // Requests arriving together share one read (the copies go stale for all of them at once).
    const key = ids.join('\n');
    let reading = this.reading.get(key);
    if (reading === undefined) {
      reading = this.read(ids, stale).finally(() => this.reading.delete(key));
      this.reading.set(key, reading);
    }
    return reading;
  }

  private async read(ids: readonly string[], stale: readonly string[]): Promise<DeploymentState[]> {
    await this.start();
    const pipeline = this.client.pipeline();
    for (const id of stale) {
      pipeline.hmget(this.keyOf(id), 'until', 'failures');
      pipeline.pttl(`${this.keyOf(id)}:probe`);
    }
    const answers = (await pipeline.exec()) ?? [];
    const readAt = this.now();
    stale.forEach((id, index) => {
      const [error, fields] = answers[index * 2] ?? [null, null];
      const [, probeTtl] = answers[index * 2 + 1] ?? [null, -2];
      if (error !== null) throw error;
      const [until, failures] = (fields as (string | null)[] | null) ?? [null, null];
      const state: DeploymentState = {
        until: Number(until ?? 0),
        failures: Number(failures ?? 0),
      };
      // A probe under way keeps the others away, as a cooldown does.
      const probing = typeof probeTtl === 'number' && probeTtl > 0;
      this.copies.set(id, {
        state: probing ? { until: readAt + probeTtl, failures: state.failures } : state,
        readAt,
      });
    });
    return ids.map((id) => this.copies.get(id)?.state ?? healthy);
  }

  async failed(id: string, retryAfterMs: number | null): Promise<void> {
    const now = this.now();
    const key = this.keyOf(id);
    const [until, failures] = (await this.client.eval(
      failScript,
      2,
      key,
      `${key}:probe`,
      String(now),
      String(this.settings.cooldownMs),
      String(this.settings.maxCooldownMs),
      String(retryAfterMs ?? -1),
      String(memoryMs),
      this.channel,
      id,
    )) as [string, number];
    this.copies.set(id, { state: { until: Number(until), failures }, readAt: this.now() });
  }

  succeeded(id: string): void {
    const copy = this.copies.get(id);
    // Only a deployment known to have failed is written: a healthy one's success costs nothing.
    if (copy === undefined || copy.state.failures === 0) return;
    this.copies.set(id, { state: healthy, readAt: this.now() });
    const key = this.keyOf(id);
    this.client
      .multi()
      .del(key, `${key}:probe`)
      .publish(this.channel, `${id} 0 0`)
      .exec()
      .catch((error: unknown) =>
        this.logger.warn({ err: error, deployment: id }, 'deployment health: could not clear'),
      );
  }

  async claimProbe(id: string, holdMs: number): Promise<boolean> {
    const claimed = await this.client.set(
      `${this.keyOf(id)}:probe`,
      '1',
      'PX',
      Math.max(1, Math.round(holdMs)),
      'NX',
    );
    if (claimed !== 'OK') {
      const copy = this.copies.get(id);
      if (copy !== undefined) {
        this.copies.set(id, {
          state: {
            until: this.now() + Math.min(holdMs, freshForMs),
            failures: copy.state.failures,
          },
          readAt: this.now(),
        });
      }
    }
    return claimed === 'OK';
  }

  async close(): Promise<void> {
    if (this.started === null) {
      this.subscriber.disconnect();
      return;
    }
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }
}
