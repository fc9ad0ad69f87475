// The structured logger (pino): JSON lines with ISO times; credentials never logged.
import { pino, type Logger } from 'pino';
import type { AppConfig } from './config/config.js';
import { isoTime } from './iso-time.js';

/** Longest a logged line waits in the buffer before it is written. */
const flushIntervalMs = 500;

export function createLogger(serviceName: string, level: AppConfig['server']['logLevel']): Logger {
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
  return pino(
    {
      level,
      base: { service: serviceName },
      // pino.stdTimeFunctions.isoTime's text, without a toISOString per line (./iso-time.ts).
      timestamp: () => `,"time":"${isoTime(Date.now())}"`,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["x-api-key"]',
          'key',
          'admin_key',
          '*.key',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
