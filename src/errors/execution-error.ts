// The error object of a failed run or stage, as executions store and show it: the contract's error
// body, shared by every area that records runs (agents, pipelines).
import type { AppError } from './app-error.js';
import { errorCatalog, type ErrorCode, type ErrorType } from './catalog.js';

/**
 * How a run or a stage failed: the contract's error object. `code` is a code of the error catalog
 * (the type checker holds every stored code to it), `type` the catalog's type for that code.
 */
export interface ExecutionError {
  message: string;
  type: ErrorType;
  code: ErrorCode;
  [detail: string]: unknown;
}

/** The contract's error object for `code`, with the catalog's type. */
export function executionError(
  code: ErrorCode,
  message: string,
  details: Record<string, unknown> = {},
): ExecutionError {
  return { ...details, message, type: errorCatalog[code].type, code };
}

/** An AppError as an execution's error (its `param`, when it has one, and its details kept). */
export function executionErrorFrom(error: AppError): ExecutionError {
  const { message, type, code, param, ...details } = error.toBody().error;
  return { ...details, message, type, code, ...(param === null ? {} : { param }) };
}
