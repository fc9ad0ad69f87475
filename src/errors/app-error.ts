// Typed errors thrown by domain code; the HTTP layer alone turns them into the contract's error body.
import { errorCatalog, type ErrorCode, type ErrorType } from './catalog.js';

export interface ErrorBody {
  error: {
    message: string;
    type: ErrorType;
    code: ErrorCode;
    param: string | null;
    [extra: string]: unknown;
  };
}

export interface AppErrorOptions {
  param?: string | null;
  /** Extra fields carried inside the error object (for example `limit`, `window`, `reset_at`). */
  details?: Record<string, unknown>;
  /** Response headers that belong with this error (for example `Retry-After`). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = errorCatalog[code].status;
    this.type = errorCatalog[code].type;
    this.param = options.param ?? null;
    this.details = options.details ?? {};
    this.headers = options.headers ?? {};
  }

  toBody(): ErrorBody {
    return {
      error: {
        message: this.message,
        type: this.type,
        code: this.code,
        param: this.param,
        ...this.details,
      },
    };
  }
}

export class NotFoundError extends AppError {
  constructor(what: string, id?: string) {
    super('not_found', id === undefined ? `${what} not found.` : `${what} '${id}' not found.`);
  }
}

export class InvalidParameterError extends AppError {
  constructor(param: string, message: string) {
    super('invalid_parameter', message, { param });
  }
}

export class MissingParameterError extends AppError {
  constructor(param: string, message = `'${param}' is required.`) {
    super('missing_parameter', message, { param });
  }
}

/** A feature of the catalog this deployment switched off in its configuration. */
export class FeatureDisabledError extends AppError {
  constructor(feature: string, what = `The '${feature}' feature`) {
    super(
      'feature_disabled',
      `${what} is switched off in this deployment's configuration (features.${feature}).`,
    );
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super('conflict', message);
  }
}

/** The error for an unexpected failure: never carries the cause's message. */
export function internalError(requestId?: string): AppError {
  const suffix = requestId === undefined ? '' : ` (request id ${requestId})`;
  return new AppError(
    'internal_error',
    `The service failed to handle this request${suffix}. The failure was logged.`,
  );
}

/** The error body for an unexpected failure: never carries the cause's message. */
export function internalErrorBody(requestId?: string): ErrorBody {
  return internalError(requestId).toBody();
}
