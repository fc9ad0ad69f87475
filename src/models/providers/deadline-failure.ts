// What a failed upstream call is reported as, once its deadlines are known: the client went away,
// the total timeout (`timeout_ms`) or the idle timeout (`idle_timeout_ms`) ran out, or else the
// failure as the provider's adapter describes it. Shared by the AI SDK adapter and the lean path.
import { RequestAbortedError, UpstreamError } from '../spec.js';
import { RetriesExhaustedError } from './retry.js';

export interface DeadlineState {
  clientAborted: boolean;
  timedOut: 'total' | 'idle' | null;
  totalMs: number;
  idleMs: number | null;
}

export function explainDeadlineFailure(
  state: DeadlineState,
  error: unknown,
  describe: (error: unknown) => UpstreamError,
): Error {
  if (state.clientAborted) return new RequestAbortedError();
  // A limit that ran out while waiting to retry ended the retries, not an answer in progress: the
  // client hears what the provider answered (502 for its HTTP 500), streamed or not.
  if (error instanceof RetriesExhaustedError && error.cutShort) return describe(error);
  if (state.timedOut === 'total') {
    return new UpstreamError(
      'upstream_timeout',
      `The model did not finish its answer within ${state.totalMs} ms (timeout_ms).`,
      { cause: error },
    );
  }
  if (state.timedOut === 'idle') {
    return new UpstreamError(
      'upstream_timeout',
      `The model sent nothing for ${state.idleMs ?? 0} ms (idle_timeout_ms).`,
      { cause: error },
    );
  }
  return describe(error);
}
