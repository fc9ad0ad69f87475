// The structured logger (pino): JSON lines with ISO times; credentials never logged.
import { pino, type Logger } from 'pino';
import type { AppConfig } from './config/config.js';

export function createLogger(serviceName: string, level: AppConfig['server']['logLevel']): Logger {
  return pino(
    {
      level,
      base: { service: serviceName },
      timestamp: pino.stdTimeFunctions.isoTime,
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
    // Asynchronous writes: lines logged while a write is in flight go out together in one system
    // call instead of one each. pino flushes what is left synchronously when the process exits.
    pino.destination({ dest: 1, sync: false }),
  );
}
