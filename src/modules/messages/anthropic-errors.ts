// Anthropic's error shape, for every error of the Messages routes and for a stream's error event.
import type { AppError } from '../../errors/app-error.js';

/**
 * Anthropic's error type for an error: the catalog's own for 4xx (they are Anthropic's names);
 * a busy or unavailable model is `overloaded_error`; any other failure is `api_error`.
 */
export function anthropicErrorType(error: AppError): string {
  if (error.status === 503) return 'overloaded_error';
  if (error.status >= 500) return 'api_error';
  return error.type;
}

/**
 * Anthropic's error body. The contract's `code` and `param` (and details such as a rate limit's
 * window) ride along inside `error`, where Anthropic's clients ignore them.
 */
export function anthropicErrorBody(error: AppError, requestId: string) {
  return {
    type: 'error' as const,
    error: {
      ...error.details,
      type: anthropicErrorType(error),
      message: error.message,
      code: error.code,
      param: error.param,
    },
    request_id: requestId,
  };
}
