// One call to a cloud speech API: bounded in time, retried on 408/409/429/5xx and unreachable
// servers (honouring a short Retry-After), and its failures mapped to the service's upstream
// errors — never carrying the vendor's body or key to the client.
import type { RemoteModelDefinition, SecretSource } from '../../../config/config.js';
import { RequestAbortedError, UpstreamError } from '../../spec.js';

const retryable = new Set([408, 409, 429, 500, 502, 503, 504]);

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new RequestAbortedError());
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new RequestAbortedError());
      },
      { once: true },
    );
  });
}

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

/** Sends the request (built afresh per attempt) and returns a 2xx response. */
export async function callSpeechApi(
  definition: RemoteModelDefinition,
  build: () => { url: string; init: RequestInit },
  signal: AbortSignal,
): Promise<Response> {
  const vendor = `The provider of model '${definition.name}'`;
  const timeout = AbortSignal.timeout(definition.timeoutMs);
  const combined = AbortSignal.any([signal, timeout]);
  for (let attempt = 0; ; attempt += 1) {
    const { url, init } = build();
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: combined });
    } catch (error) {
      if (signal.aborted) throw new RequestAbortedError();
      if (timeout.aborted) {
        throw new UpstreamError(
          'upstream_timeout',
          `${vendor} did not answer within ${definition.timeoutMs} ms.`,
          { cause: error },
        );
      }
      if (attempt < definition.maxRetries) {
        await wait(500 * 2 ** attempt, signal);
        continue;
      }
      throw new UpstreamError('model_unavailable', `${vendor} could not be reached.`, {
        cause: error,
      });
    }
    if (response.ok) return response;
    const body = await response.text().catch(() => '');
    const retryAfter = Number.parseFloat(response.headers.get('retry-after') ?? '');
    if (retryable.has(response.status) && attempt < definition.maxRetries) {
      const delay =
        Number.isFinite(retryAfter) && retryAfter <= 10 ? retryAfter * 1000 : 500 * 2 ** attempt;
      await wait(delay, signal);
      continue;
    }
    const cause = new Error(`HTTP ${response.status}: ${body.slice(0, 500)}`);
    if (response.status === 429 || response.status === 503) {
      throw new UpstreamError(
        'model_unavailable',
        `${vendor} is busy or rate-limited (HTTP ${response.status}).`,
        {
          cause,
          upstreamStatus: response.status,
          ...(Number.isFinite(retryAfter) ? { retryAfterSeconds: Math.ceil(retryAfter) } : {}),
        },
      );
    }
    if (response.status === 401 || response.status === 403) {
      throw new UpstreamError(
        'upstream_error',
        `${vendor} refused the service's API key (HTTP ${response.status}); check ${definition.apiKeyEnv ?? 'the key'}.`,
        { cause, upstreamStatus: response.status },
      );
    }
    throw new UpstreamError('upstream_error', `${vendor} answered HTTP ${response.status}.`, {
      cause,
      upstreamStatus: response.status,
    });
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
