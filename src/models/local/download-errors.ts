// Why a model download failed, in words that say what to do next.
import type { DownloadContext } from './download-context.js';

export type ModelDownloadErrorReason =
  /** The source, revision or sha256 option is malformed. */
  | 'invalid_request'
  /** DNS, connection or TLS failure, or no response within the connect timeout. */
  | 'unreachable'
  /** HTTP 401/403: a gated or private model needs a token with access. */
  | 'unauthorized'
  /** HTTP 404 (or the Hub's RepoNotFound): no such repository, revision or file. */
  | 'not_found'
  /** Any other unexpected HTTP status (429, 5xx, …). */
  | 'http_error'
  /** The connection dropped or stalled mid-body; the partial file is kept for a resume. */
  | 'interrupted'
  /** More bytes arrived than the server announced; the partial file is deleted. */
  | 'size_mismatch'
  /** The finished file's sha256 differs from the expected one; the partial file is deleted. */
  | 'checksum_mismatch'
  /** The caller's signal aborted; the partial file is kept for a resume. */
  | 'aborted'
  /** Another download into the same destination holds the lock. */
  | 'in_progress';

export class ModelDownloadError extends Error {
  /** HTTP status when the failure was an HTTP answer. */
  readonly status: number | null;

  constructor(
    readonly reason: ModelDownloadErrorReason,
    message: string,
    options: { status?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ModelDownloadError';
    this.status = options.status ?? null;
  }
}

/** Why a request's own controller aborted it: no headers in time, or a body that stalled. */
export class TimeoutMarker extends Error {
  constructor(readonly kind: 'connect' | 'stall') {
    super(`${kind} timeout`);
  }
}

export function classifyRequestError(
  context: DownloadContext,
  error: unknown,
  requestSignal: AbortSignal,
): ModelDownloadError {
  if (context.options.signal?.aborted) return abortedError(context);
  const host = hostOf(context.resolved.url);
  const detail =
    requestSignal.aborted && requestSignal.reason instanceof TimeoutMarker
      ? `no response within ${context.connectTimeoutMs / 1000} s`
      : networkErrorCode(error);
  const mirrorHint =
    context.resolved.huggingFace !== null ? ' (or set HF_ENDPOINT to a reachable mirror)' : '';
  return new ModelDownloadError(
    'unreachable',
    `Could not reach ${host} (${detail}). Check the network connection${mirrorHint}, ` +
      `or download ${context.displayUrl} by other means and place the file at ${context.options.destination}.`,
    { cause: error },
  );
}

/** Network failures mid-body become 'interrupted'; disk errors (ENOSPC, EACCES) pass through. */
export function classifyTransferError(context: DownloadContext, error: unknown): unknown {
  if (error instanceof ModelDownloadError) return error;
  if (context.options.signal?.aborted) return abortedError(context);
  const isStall =
    error instanceof TimeoutMarker ||
    (error instanceof Error && error.cause instanceof TimeoutMarker);
  const isNetwork =
    isStall ||
    error instanceof TypeError ||
    (error instanceof Error && error.name === 'AbortError') ||
    /^(UND_ERR|ECONNRESET|ETIMEDOUT|EPIPE)/.test(errorCode(error) ?? '');
  if (!isNetwork) return error;
  const what = isStall
    ? `sent no data for ${context.stallTimeoutMs / 1000} s`
    : `dropped the connection (${networkErrorCode(error)})`;
  return new ModelDownloadError(
    'interrupted',
    `${hostOf(context.resolved.url)} ${what}. The partial file ${context.partialPath} was kept; ` +
      `run the download again to resume.`,
    { cause: error },
  );
}

export function abortedError(context: DownloadContext): ModelDownloadError {
  return new ModelDownloadError(
    'aborted',
    `Download of ${context.displayUrl} was aborted; the partial file ${context.partialPath} is kept for a later resume.`,
    { cause: context.options.signal?.reason },
  );
}

export function httpFailure(context: DownloadContext, response: Response): ModelDownloadError {
  const { status } = response;
  const hub = context.resolved.huggingFace;
  // The Hub explains itself in these headers (RepoNotFound, GatedRepo, EntryNotFound, …).
  const hubCode = response.headers.get('x-error-code');
  const hubMessage = response.headers.get('x-error-message');
  const explanation = hubMessage ? ` The server says: ${hubMessage}` : '';
  const where = hub ? `${hub.owner}/${hub.repo}` : context.displayUrl;
  const tokenAdvice = context.options.token
    ? 'The token given was rejected or has no access to it'
    : 'Gated and private models need a Hugging Face token (HF_TOKEN) with access';
  if (hubCode === 'RepoNotFound') {
    return new ModelDownloadError(
      'not_found',
      `Repository ${where} was not found on ${hub?.endpoint ?? hostOf(context.resolved.url)}. ` +
        `Check the name; if it is private or gated: ${tokenAdvice.toLowerCase()}.${explanation}`,
      { status },
    );
  }
  if (status === 401 || status === 403 || hubCode === 'GatedRepo') {
    const page = hub
      ? ` Accept the model's terms at ${hub.endpoint}/${hub.owner}/${hub.repo} if it is gated.`
      : '';
    return new ModelDownloadError(
      'unauthorized',
      `Access to ${context.displayUrl} was refused (HTTP ${status}). ${tokenAdvice}.${page}${explanation}`,
      { status },
    );
  }
  if (status === 404) {
    const message = hub
      ? `${hub.file} does not exist in ${where} at revision '${hub.revision}' (HTTP 404). ` +
        `Check the file name and revision at ${hub.endpoint}/${hub.owner}/${hub.repo}/tree/${encodeURIComponent(hub.revision)}.`
      : `${context.displayUrl} does not exist (HTTP 404).`;
    return new ModelDownloadError('not_found', `${message}${explanation}`, { status });
  }
  const retry =
    status === 429 || status >= 500 ? ' Try again later; a partial download resumes.' : '';
  return new ModelDownloadError(
    'http_error',
    `Downloading ${context.displayUrl} failed with HTTP ${status} ${response.statusText}.${retry}${explanation}`,
    { status },
  );
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new ModelDownloadError('aborted', 'Download aborted before it started.', {
      cause: signal.reason,
    });
  }
}

export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** undici reports `fetch failed` with the useful part (ECONNREFUSED, ENOTFOUND, …) in `cause`. */
export function networkErrorCode(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const nested =
    cause instanceof AggregateError ? (cause.errors as unknown[])[0] : (cause ?? undefined);
  return (
    errorCode(cause) ??
    errorCode(nested) ??
    errorCode(error) ??
    (nested instanceof Error ? nested.message : undefined) ??
    (error instanceof Error ? error.message : String(error))
  );
}

export function hostOf(url: string): string {
  return new URL(url).host;
}
