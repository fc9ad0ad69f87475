// A speech engine's call metered as the registry's models are (the usage ledger, budgets): its use
// is known before it is made (the audio's length, the text's characters), so it is reserved on
// the budgets first and recorded once the call ends.
import type { ModelDefinition } from '../../config/config.js';
import { AppError } from '../../errors/app-error.js';
import {
  noUsage,
  type CallAttribution,
  type MeteredUsage,
  type UsageMeter,
} from '../../models/metering.js';
import { RequestAbortedError } from '../../models/spec.js';

/** Runs `call` under `meter` when the call is attributed; unmetered without an attribution. */
export async function meteredCall<T>(
  meter: UsageMeter,
  definition: ModelDefinition,
  attribution: CallAttribution | undefined,
  usage: MeteredUsage,
  call: () => Promise<T>,
): Promise<T> {
  if (attribution === undefined) return call();
  const ticket = await meter.start({
    definition,
    attribution,
    worstCase: () => Promise.resolve(usage),
  });
  const started = performance.now();
  try {
    const result = await call();
    ticket.end({ status: 'ok', usage, latencyMs: performance.now() - started });
    return result;
  } catch (error) {
    const aborted = error instanceof RequestAbortedError;
    ticket.end({
      status: aborted ? 'aborted' : 'error',
      errorCode: aborted ? null : error instanceof AppError ? error.code : 'internal_error',
      usage: noUsage,
      latencyMs: performance.now() - started,
    });
    throw error;
  }
}
