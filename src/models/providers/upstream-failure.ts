// What a failed call to a chat provider is reported as: the AI SDK's failures (and the same
// APICallErrors the lean client raises) mapped to the contract's 502/503/504, the message naming
// the model and what went wrong but no upstream detail, body or secret.
import { APICallError, JSONParseError, TypeValidationError } from '@ai-sdk/provider';
import { UpstreamError } from '../spec.js';
import { RetriesExhaustedError, retryAfterMs } from '../upstream/retry.js';

function retryAfterSecondsOf(error: APICallError): number | null {
  const header = error.responseHeaders?.['retry-after'];
  if (header === undefined) return null;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : null;
}

/** Where a failure happened: before the answer began, or in the middle of a streamed one. */
export type FailurePhase = 'request' | 'stream';

/** A failure as an HTTP answer of the provider: its status says what the client is told. */
function describeAnswer(
  modelName: string,
  error: unknown,
  last: APICallError,
  tried: string,
  phase: FailurePhase,
): UpstreamError {
  const status = last.statusCode;
  if (status !== undefined && status >= 200 && status < 300) {
    // The status was fine; the body was not: cut short, or not in the provider's format.
    if (phase === 'stream') {
      return describeUpstreamFailure(modelName, last.cause ?? new Error('cut'), phase);
    }
    return new UpstreamError(
      'upstream_error',
      `The provider of model '${modelName}' sent a response that could not be read (cut short or not in its API's format).`,
      { cause: error, upstreamStatus: status },
    );
  }
  if (status === undefined) {
    return new UpstreamError(
      'model_unavailable',
      `The provider of model '${modelName}' could not be reached${tried}.`,
      { cause: error },
    );
  }
  if (status === 429) {
    return new UpstreamError(
      'model_unavailable',
      `The provider of model '${modelName}' is rate-limiting requests${tried}; retry later.`,
      { cause: error, upstreamStatus: status, retryAfterSeconds: retryAfterSecondsOf(last) },
    );
  }
  if (status === 503 || status === 502 || status === 529) {
    return new UpstreamError(
      'upstream_error',
      `The provider of model '${modelName}' answered HTTP ${status}${tried}.`,
      { cause: error, upstreamStatus: status, upstreamRetryAfterMs: retryAfterMs(last) },
    );
  }
  if (status === 401 || status === 403) {
    return new UpstreamError(
      'upstream_error',
      `The provider of model '${modelName}' refused the configured credentials (HTTP ${status}). Check the key in the model's api_key_env.`,
      { cause: error, upstreamStatus: status },
    );
  }
  if (status === 408 || status === 504) {
    return new UpstreamError(
      'upstream_timeout',
      `The provider of model '${modelName}' timed out${tried}.`,
      { cause: error, upstreamStatus: status },
    );
  }
  return new UpstreamError(
    'upstream_error',
    `The provider of model '${modelName}' answered HTTP ${status}${tried}.`,
    { cause: error, upstreamStatus: status },
  );
}

/** Maps an SDK failure to the contract's upstream errors; the message names no upstream detail. */
export function describeUpstreamFailure(
  modelName: string,
  error: unknown,
  phase: FailurePhase = 'request',
): UpstreamError {
  const last = error instanceof RetriesExhaustedError ? error.lastError : error;
  const attempts = error instanceof RetriesExhaustedError ? error.attempts : 1;
  const stopped =
    error instanceof RetriesExhaustedError && error.cutShort
      ? " (the model's time limit ended the retries)"
      : '';
  const tried = `${attempts > 1 ? ` after ${attempts} attempts` : ''}${stopped}`;
  const midAnswer = phase === 'stream' ? ' mid-answer; the answer is incomplete' : '';
  if (JSONParseError.isInstance(last) || TypeValidationError.isInstance(last)) {
    return new UpstreamError(
      'upstream_error',
      phase === 'stream'
        ? `The provider of model '${modelName}' sent an invalid chunk${midAnswer}.`
        : `The provider of model '${modelName}' sent a response that is not in its API's format.`,
      { cause: error },
    );
  }
  if (APICallError.isInstance(last)) return describeAnswer(modelName, error, last, tried, phase);
  if (phase === 'stream') {
    return new UpstreamError(
      'upstream_error',
      `The connection to the provider of model '${modelName}' was cut${midAnswer}.`,
      { cause: error },
    );
  }
  return new UpstreamError(
    'upstream_error',
    `The provider of model '${modelName}' failed or sent a response that could not be read.`,
    { cause: error },
  );
}
