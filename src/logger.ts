// The structured logger (pino): JSON lines with ISO times; credentials never logged.
import { pino, type Logger } from 'pino';
import type { AppConfig } from './config/config.js';
import { isoTime } from './iso-time.js';

/** Longest a logged line waits in the buffer before it is written. */
const flushIntervalMs = 500;

/** What a credential is replaced with in a logged line. */
export const redactedText = '[redacted]';

/**
 * The object with a `key` one level down (a created key's record, say) replaced by
 * `redactedText`; the same object when it has none. This is pino's `*.key` path done by hand:
 * pino sends every value of every line, its message and numbers too, through its redaction (a
 * clone and a `JSON.stringify` each) as soon as one path starts with a wildcard, which cost
 * about a µs of a 4–5 µs request line (bench/results/gateway-profile.md, "The connection pool").
 */
export function withoutNestedKeys(logged: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const name of Object.keys(logged)) {
    const value = logged[name];
    if (typeof value === 'object' && value !== null && Object.hasOwn(value, 'key')) {
      copy ??= { ...logged };
      copy[name] = withKeyRedacted(value);
    }
  }
  return copy ?? logged;
}

/** A copy of `value` with its `key` redacted; an error stays an error, its message and stack kept. */
function withKeyRedacted(value: object): object {
  if (!(value instanceof Error)) return { ...value, key: redactedText };
  const copy = Object.create(Object.getPrototypeOf(value) as object) as Error;
  return Object.assign(copy, value, {
    message: value.message,
    stack: value.stack,
    key: redactedText,
  });
}

export function createLogger(
  serviceName: string,
  level: AppConfig['server']['logLevel'],
  destination: pino.DestinationStream = bufferedStdout(),
): Logger {
  return pino(
    {
      level,
      base: { service: serviceName },
      // pino.stdTimeFunctions.isoTime's text, without a toISOString per line (./iso-time.ts).
      timestamp: () => `,"time":"${isoTime(Date.now())}"`,
      // A credential's own field at the top of a line, or in the request pino's serializer logs.
      redact: {
        paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'key', 'admin_key'],
        censor: redactedText,
      },
      // And one level down in a line's fields. (Not in a child logger's bindings, which pino
      // formats without this: the service makes no child loggers; Fastify's per request binds
      // only the request's id.)
      formatters: { log: withoutNestedKeys },
    },
    destination,
  );
}

/** Standard output, written in batches. */
function bufferedStdout(): pino.DestinationStream {
  // Lines gather until 4 KB or half a second has passed, whichever comes first, so a busy service
  // writes many lines per system call (one each cost ~8% of a proxied request's CPU); pino writes
  // what is left synchronously when the process exits.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  const timer = setInterval(() => {
    try {
      destination.flush();
    } catch {
      // Destroyed (the process is ending): nothing more to write.
      clearInterval(timer);
    }
  }, flushIntervalMs).unref();
  return destination;
}
