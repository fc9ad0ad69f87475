// A call of an OpenAPI operation: the request built from the base URL (default: the document's
// first server) and the arguments (path, query and header parameters, the JSON `body`), sent
// through the policy fetch, answered with the status and the start of the body; 4xx/5xx answer
// `ok: false`.
import type { FetchFunction } from '../../net/policy-fetch.js';
import { shown } from '../../net/web-fetch-error.js';
import type { OpenApiOperation } from './openapi-tools.js';
import type { ToolOutcome } from './tool.js';
import { brief, cutText, policyFailure } from './tool-text.js';

export interface OpenApiCallContext {
  fetch: FetchFunction;
  baseUrl: string;
  /** Headers sent with every request (the entry's, and `authorization` with a bearer token). */
  headers: Readonly<Record<string, string>>;
  timeoutMs: number;
  maxResultChars: number;
}

function queryValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function pathSegment(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  // `.` and `..` would move the request up the path.
  if (text === '.' || text === '..') return text.replace(/\./g, '%2E');
  return encodeURIComponent(text);
}

/** Reads at most `maxBytes` of a body as UTF-8, then stops reading. */
async function boundedText(response: Response, maxBytes: number): Promise<string> {
  if (response.body === null) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    while (bytes < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      bytes += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, maxBytes));
}

/** Runs one operation; resolves `ok: false` on every failure but the signal's. */
export async function callOperation(
  operation: OpenApiOperation,
  args: Record<string, unknown>,
  context: OpenApiCallContext,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  const base = new URL(context.baseUrl);
  let path = operation.path;
  const query = new URLSearchParams();
  const headers = new Headers({ accept: 'application/json, text/*;q=0.9, */*;q=0.5' });
  for (const [name, value] of Object.entries(context.headers)) headers.set(name, value);
  for (const argument of operation.arguments) {
    const value = Object.hasOwn(args, argument.property) ? args[argument.property] : undefined;
    if (value === undefined || value === null) {
      if (argument.in === 'path') {
        return { ok: false, content: `The path parameter '${argument.property}' is required.` };
      }
      continue;
    }
    if (argument.in === 'path') {
      path = path.split(`{${argument.name}}`).join(pathSegment(value));
    } else if (argument.in === 'query') {
      for (const item of Array.isArray(value) ? value : [value])
        query.append(argument.name, queryValue(item));
    } else {
      const text = queryValue(value);
      if (/[\r\n]/.test(text)) {
        return {
          ok: false,
          content: `The header parameter '${argument.property}' may not contain line breaks.`,
        };
      }
      headers.set(argument.name, text);
    }
  }
  const url = new URL(`${base.pathname.replace(/\/+$/, '')}${path}`, base);
  if (url.origin !== base.origin) {
    return { ok: false, content: `The request would leave ${shown(base.origin)}.` };
  }
  const search = query.toString();
  if (search !== '') url.search = search;
  const init: RequestInit = { method: operation.method.toUpperCase(), headers };
  const body = Object.hasOwn(args, 'body') ? args.body : undefined;
  if (operation.hasBody && body !== undefined) {
    headers.set('content-type', 'application/json');
    init.body = JSON.stringify(body);
  }
  const deadline = AbortSignal.timeout(context.timeoutMs);
  init.signal = AbortSignal.any([signal, deadline]);
  try {
    const response = await context.fetch(url, init);
    const text = await boundedText(response, context.maxResultChars * 4 + 4);
    const status = `HTTP ${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`}`;
    const content = cutText(text === '' ? status : `${status}\n${text}`, context.maxResultChars);
    return { ok: response.status < 400, content };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (deadline.aborted) {
      return {
        ok: false,
        content: `${shown(url.origin + url.pathname)} did not answer within ${context.timeoutMs} ms.`,
      };
    }
    const refused = policyFailure(error);
    if (refused !== null) return { ok: false, content: refused.message };
    const message = error instanceof Error ? brief(error.message) : 'it failed';
    return { ok: false, content: `Calling ${shown(url.origin + url.pathname)} failed: ${message}` };
  }
}
