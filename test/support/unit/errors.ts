// The AppError a call fails with, for asserting its code, status, param and details.
import { expect } from 'vitest';
import { AppError } from '../../../src/errors/app-error.js';

/** Awaits `attempt` (or calls it) and returns the AppError it failed with; fails the test otherwise. */
export async function appErrorOf(attempt: Promise<unknown> | (() => unknown)): Promise<AppError> {
  const error = await Promise.resolve()
    .then(() => (typeof attempt === 'function' ? attempt() : attempt))
    .then(
      () => undefined,
      (failure: unknown) => failure,
    );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}
