// Redis (shared rate limits, the executions' change feed, the job queue), its key prefix, and the
// background runs the queue carries.
import Type, { type Static, type TObject } from 'typebox';
import { Closed, OptionalInteger, type EnvReader } from './config-kit.js';

const RedisUrl = () => Type.String({ pattern: '^rediss?://.+', message: "expected 'redis://…'" });
const RedisKeyPrefix = () =>
  Type.String({
    pattern: '^[A-Za-z0-9_.-]{0,64}:?$',
    message:
      "expected up to 64 letters, digits, dots, dashes or underscores (the ':' after it is added)",
  });

/** The prefix as keys are named with it: one ':' joins it to every name, so a trailing one goes. */
const bare = (prefix: string | undefined) => prefix?.replace(/:$/, '');

export const redisFileProperties = {
  redis_url: Type.Optional(RedisUrl()),
  redis_key_prefix: Type.Optional(RedisKeyPrefix()),
  jobs: Type.Optional(
    Closed({
      concurrency: OptionalInteger(1, 256),
      lock_ms: OptionalInteger(1000, 3_600_000),
      enqueue_wait_ms: OptionalInteger(0, 60_000),
      instance_timeout_ms: OptionalInteger(1200, 3_600_000),
    }),
  ),
};

type RedisFile = Static<TObject<typeof redisFileProperties>>;

const RedisUrlText = RedisUrl();
const RedisKeyPrefixText = RedisKeyPrefix();

export function readRedisEnv(env: EnvReader): RedisFile {
  return {
    redis_url: env.text('REDIS_URL', RedisUrlText),
    redis_key_prefix: env.text('REDIS_KEY_PREFIX', RedisKeyPrefixText),
    jobs: {
      concurrency: env.integer('JOB_CONCURRENCY', 1, 256),
      lock_ms: env.integer('JOB_LOCK_MS', 1000, 3_600_000),
      enqueue_wait_ms: env.integer('JOB_ENQUEUE_WAIT_MS', 0, 60_000),
      instance_timeout_ms: env.integer('JOB_INSTANCE_TIMEOUT_MS', 1200, 3_600_000),
    },
  };
}

export function redisConfig(fromEnv: RedisFile, file: RedisFile) {
  return {
    redisUrl: fromEnv.redis_url ?? file.redis_url ?? null,
    redisKeyPrefix: bare(fromEnv.redis_key_prefix ?? file.redis_key_prefix) ?? '',
    jobs: {
      concurrency: fromEnv.jobs?.concurrency ?? file.jobs?.concurrency ?? 4,
      lockMs: fromEnv.jobs?.lock_ms ?? file.jobs?.lock_ms ?? 30_000,
      enqueueWaitMs: fromEnv.jobs?.enqueue_wait_ms ?? file.jobs?.enqueue_wait_ms ?? 2000,
      instanceTimeoutMs:
        fromEnv.jobs?.instance_timeout_ms ?? file.jobs?.instance_timeout_ms ?? 30_000,
    },
  };
}
