// One call to a cloud speech API, within the same time limits and retries as every provider call
// (../../upstream/: the model's timeout_ms over the whole call, the answer's body included;
// 408/409/429/5xx and unreachable servers retried, honouring a short Retry-After), and its
// failures mapped to the service's upstream errors — never carrying the vendor's body or key to
// the client.
import { APICallError } from '@ai-sdk/provider';
import type { RemoteModelDefinition, SecretSource } from '../../../config/config.js';
import { UpstreamError } from '../../spec.js';
import { CallLimits } from '../../upstream/call-limits.js';
import { RetriesExhaustedError, withRetries, type RetryPolicy } from '../../upstream/retry.js';

const retryable = new Set([408, 409, 429, 500, 502, 503, 504]);

/** Speech is waited for by a listener: a shorter first backoff, and only short waits honoured. */
const speechRetries: Omit<RetryPolicy, 'maxRetries'> = {
  initialDelayMs: 500,
  longestHonouredWaitMs: 10_000,
};

export function apiKeyOf(
  definition: RemoteModelDefinition,
  secrets: SecretSource,
): string | undefined {
  return definition.apiKeyEnv === null ? undefined : secrets.get(definition.apiKeyEnv);
}

/** The endpoint's base URL: the model's `base_url`, else the vendor's, without a trailing slash. */
export function baseUrlOf(definition: RemoteModelDefinition, vendorDefault: string): string {
  return (definition.baseUrl ?? vendorDefault).replace(/\/+$/, '');
}

/** The `authorization` header with the model's key under `scheme` (none without a key). */
export function authorizationOf(
  definition: RemoteModelDefinition,
  secrets: SecretSource,
  scheme: 'Bearer' | 'Token',
): Record<string, string> {
  const key = apiKeyOf(definition, secrets);
  return key === undefined ? {} : { authorization: `${scheme} ${key}` };
}

/** One attempt: a 2xx answer, or its failure as the APICallError the retries understand. */
async function attempt(
  request: { url: string; init: RequestInit },
  limits: CallLimits,
): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(request.url, { ...request.init, signal: limits.signal });
  } catch (error) {
    if (limits.stopped) throw error;
    throw new APICallError({
      message: 'Cannot connect to API',
      url: request.url,
      requestBodyValues: {},
      cause: error,
      isRetryable: true,
    });
  }
  if (response.ok) return response;
  const body = await response.text().catch(() => '');
  throw new APICallError({
    message: `HTTP ${response.status}`,
    url: request.url,
    requestBodyValues: {},
    statusCode: response.status,
    responseHeaders: Object.fromEntries(response.headers),
    responseBody: body.slice(0, 500),
    isRetryable: retryable.has(response.status),
  });
}

/** What a failed speech call is reported as; the vendor's body stays in the cause (the log). */
function describeSpeechFailure(definition: RemoteModelDefinition, error: unknown): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const vendor = `The provider of model '${definition.name}'`;
  const last = error instanceof RetriesExhaustedError ? error.lastError : error;
  if (!APICallError.isInstance(last)) {
    // The answer began but its body could not be read to the end.
    return new UpstreamError('upstream_error', `${vendor} sent an answer that could not be read.`, {
      cause: error,
    });
  }
  const status = last.statusCode;
  if (status === undefined) {
    return new UpstreamError('model_unavailable', `${vendor} could not be reached.`, {
      cause: error,
    });
  }
  const cause = new Error(`HTTP ${status}: ${last.responseBody ?? ''}`);
  if (status === 429 || status === 503) {
    const retryAfter = Number.parseFloat(last.responseHeaders?.['retry-after'] ?? '');
    return new UpstreamError(
      'model_unavailable',
      `${vendor} is busy or rate-limited (HTTP ${status}).`,
      {
        cause,
        upstreamStatus: status,
        ...(Number.isFinite(retryAfter) ? { retryAfterSeconds: Math.ceil(retryAfter) } : {}),
      },
    );
  }
  if (status === 401 || status === 403) {
    return new UpstreamError(
      'upstream_error',
      `${vendor} refused the service's API key (HTTP ${status}); check ${definition.apiKeyEnv ?? 'the key'}.`,
      { cause, upstreamStatus: status },
    );
  }
  return new UpstreamError('upstream_error', `${vendor} answered HTTP ${status}.`, {
    cause,
    upstreamStatus: status,
  });
}

/**
 * Sends the request (built afresh per attempt) and reads its 2xx answer with `read`, all within
 * the model's time limit and the client's signal.
 */
export async function callSpeechApi<T>(
  definition: RemoteModelDefinition,
  build: () => { url: string; init: RequestInit },
  signal: AbortSignal,
  read: (response: Response) => Promise<T>,
): Promise<T> {
  const limits = new CallLimits(signal, definition.timeoutMs);
  try {
    const response = await withRetries(() => attempt(build(), limits), limits, {
      maxRetries: definition.maxRetries,
      ...speechRetries,
    });
    return await read(response);
  } catch (error) {
    throw limits.explain(error, (cause) => describeSpeechFailure(definition, cause));
  } finally {
    limits.dispose();
  }
}

/** Parses a JSON answer, or fails as an upstream error. */
export async function jsonOf<T>(definition: RemoteModelDefinition, response: Response): Promise<T> {
  try {
    return (await response.json()) as T;
  } catch (error) {
    throw new UpstreamError(
      'upstream_error',
      `The provider of model '${definition.name}' sent an answer that is not JSON.`,
      { cause: error },
    );
  }
}

/** 16-bit little-endian PCM bytes as samples (copied: the bytes need not be aligned). */
export function pcmFromBytes(bytes: Uint8Array): Int16Array {
  const samples = new Int16Array(Math.floor(bytes.length / 2));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let index = 0; index < samples.length; index += 1)
    samples[index] = view.getInt16(index * 2, true);
  return samples;
}
