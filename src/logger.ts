// The structured logger (pino): JSON lines with ISO times; credentials never logged.
import { pino, type Logger } from 'pino';
import type { AppConfig } from './config/config.js';

export function createLogger(config: Pick<AppConfig, 'serviceName' | 'server'>): Logger {
  return pino({
    level: config.server.logLevel,
    base: { service: config.serviceName },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'key', 'admin_key', '*.key'],
      censor: '[redacted]',
    },
  });
}
