// The typed API client: paths and bodies come from the service's own OpenAPI document
// (generated/schema.ts, written at build time), so a changed route breaks the build, not the page.
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './generated/schema';

export type { components, paths };

let csrfToken: string | null = null;
const unauthorizedListeners = new Set<() => void>();

/** The session's CSRF token, sent on every request that changes state. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when a request is refused for lack of a valid session (it ended or the key was revoked). */
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

const sessionMiddleware: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD' && csrfToken !== null) {
      request.headers.set('X-CSRF-Token', csrfToken);
    }
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401 && !request.url.endsWith('/v1/auth/login')) {
      for (const listener of unauthorizedListeners) listener();
    }
    return response;
  },
};

export const api = createClient<paths>({
  baseUrl: window.location.origin,
  credentials: 'same-origin',
});
api.use(sessionMiddleware);

export interface ApiErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

/** Headers for requests made without the typed client (streams, features not in the document yet). */
export function sessionHeaders(json = true): Record<string, string> {
  const headers: Record<string, string> = {};
  if (json) headers['Content-Type'] = 'application/json';
  if (csrfToken !== null) headers['X-CSRF-Token'] = csrfToken;
  return headers;
}

export function isApiError(value: unknown): value is ApiErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    'error' in value &&
    typeof value.error === 'object' &&
    (value as { error: { message?: unknown } }).error !== null &&
    typeof (value as { error: { message?: unknown } }).error.message === 'string'
  );
}

/** A readable message for whatever a failed call produced. */
export function errorMessage(error: unknown): string {
  if (isApiError(error)) return error.error.message;
  if (error instanceof Error) return error.message;
  return 'The request failed.';
}

/** Throws the API's error body when a call failed, else returns its data. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || result.data === undefined) {
    throw new ApiCallError(result.response.status, result.error);
  }
  return result.data;
}

export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(isApiError(body) ? body.error.message : `The request failed with status ${status}.`);
    this.name = 'ApiCallError';
  }

  get param(): string | null {
    return isApiError(this.body) ? this.body.error.param : null;
  }

  get code(): string | null {
    return isApiError(this.body) ? this.body.error.code : null;
  }
}

/** Reads a `text/event-stream` body: yields each `data:` payload parsed as JSON. */
export async function* readEventStream(response: Response): AsyncGenerator<unknown> {
  if (response.body === null) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let boundary = buffer.indexOf('\n\n');
    while (boundary !== -1) {
      const event = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data !== '' && data !== '[DONE]') yield JSON.parse(data) as unknown;
      boundary = buffer.indexOf('\n\n');
    }
  }
}
