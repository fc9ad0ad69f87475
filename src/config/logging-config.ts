// What the service logs: the level, and the share of successful requests that get a log line.
import Type, { type Static, type TObject } from 'typebox';
import type { EnvReader } from './config-kit.js';

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const loggingFileProperties = {
  log_level: Type.Optional(Type.Enum(logLevels)),
  request_log_sample: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
};

type LoggingFile = Static<TObject<typeof loggingFileProperties>>;

export function readLoggingEnv(env: EnvReader): LoggingFile {
  return {
    log_level: env.oneOf('LOG_LEVEL', logLevels),
    request_log_sample: env.fraction('REQUEST_LOG_SAMPLE'),
  };
}

export function loggingConfig(fromEnv: LoggingFile, file: LoggingFile) {
  return {
    logLevel: fromEnv.log_level ?? file.log_level ?? 'info',
    requestLogSample: fromEnv.request_log_sample ?? file.request_log_sample ?? 1,
  };
}
