// Downloads one model file from Hugging Face or a plain URL: resumable, verified by sha256, renamed into place.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export const defaultHuggingFaceEndpoint = 'https://huggingface.co';
export const defaultRevision = 'main';
export const defaultConnectTimeoutMs = 5_000;
export const defaultStallTimeoutMs = 30_000;

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

export interface DownloadProgress {
  /** Bytes on disk so far, including a resumed partial file. */
  receivedBytes: number;
  totalBytes: number | null;
  /** Recent transfer rate (a few seconds' window), 0 until measurable. */
  bytesPerSecond: number;
}

export interface DownloadOptions {
  /** `hf:<owner>/<repo>/<file>`, `hf:<owner>/<repo>:<revision>/<file>`, or an http(s) URL. */
  source: string;
  /** Final path; bytes go to `<destination>.partial` until verified. */
  destination: string;
  /** Revision for `hf:` sources without one in the reference (default `main`). */
  revision?: string;
  /** Expected hex sha256; when absent for `hf:` sources, the Hub's published digest is used. */
  sha256?: string;
  /** Hugging Face base URL (callers pass HF_ENDPOINT); default https://huggingface.co. */
  endpoint?: string;
  /** Hugging Face token for gated or private models; sent only to the endpoint's origin. */
  token?: string;
  signal?: AbortSignal;
  /** Called at most every ~100 ms, plus once at the start and once at the end. */
  onProgress?: (progress: DownloadProgress) => void;
  /** How long to wait for response headers (redirects included) before giving up. */
  connectTimeoutMs?: number;
  /** How long the body may deliver no bytes before the download counts as interrupted. */
  stallTimeoutMs?: number;
}

export interface DownloadResult {
  path: string;
  /** The URL requested (without any query string). */
  url: string;
  sizeBytes: number;
  /** The sha256 of the file now at `path`. */
  sha256: string;
  /** Where the expected digest came from; 'none' means the file could not be verified. */
  checksumSource: 'option' | 'hub' | 'none';
  /** Size of the partial file this call continued from (0 for a fresh download). */
  resumedFromBytes: number;
  /** Bytes transferred over the network by this call. */
  downloadedBytes: number;
}

export interface HuggingFaceFile {
  owner: string;
  repo: string;
  revision: string;
  file: string;
}

export interface ResolvedSource {
  url: string;
  /** Set for `hf:` sources. */
  huggingFace: (HuggingFaceFile & { endpoint: string }) | null;
}

const sha256Pattern = /^[0-9a-f]{64}$/;
const repoPartPattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const progressIntervalMs = 100;
const maxAttempts = 3;

/** Turns a source reference into the URL to fetch (the Hub's `resolve` URL for `hf:` sources). */
export function resolveModelSource(
  source: string,
  options: { endpoint?: string; revision?: string } = {},
): ResolvedSource {
  if (/^https?:\/\//i.test(source)) {
    try {
      return { url: new URL(source).href, huggingFace: null };
    } catch (error) {
      throw new ModelDownloadError('invalid_request', `'${source}' is not a valid URL.`, {
        cause: error,
      });
    }
  }
  if (!source.startsWith('hf:')) {
    throw new ModelDownloadError(
      'invalid_request',
      `Unsupported model source '${source}': expected hf:<owner>/<repo>/<file> or an http(s) URL.`,
    );
  }
  const [owner, repoAndRevision, ...fileParts] = source.slice('hf:'.length).split('/');
  const separator = repoAndRevision?.indexOf(':') ?? -1;
  const repo = separator === -1 ? repoAndRevision : repoAndRevision?.slice(0, separator);
  const inlineRevision = separator === -1 ? undefined : repoAndRevision?.slice(separator + 1);
  const file = fileParts.join('/');
  if (
    owner === undefined ||
    repo === undefined ||
    !repoPartPattern.test(owner) ||
    !repoPartPattern.test(repo) ||
    fileParts.length === 0 ||
    fileParts.some((part) => part === '' || part === '.' || part === '..')
  ) {
    throw new ModelDownloadError(
      'invalid_request',
      `Malformed Hugging Face reference '${source}': expected hf:<owner>/<repo>/<file> or hf:<owner>/<repo>:<revision>/<file>.`,
    );
  }
  if (
    inlineRevision !== undefined &&
    options.revision !== undefined &&
    inlineRevision !== options.revision
  ) {
    throw new ModelDownloadError(
      'invalid_request',
      `'${source}' names revision '${inlineRevision}' but revision '${options.revision}' was also given.`,
    );
  }
  const revision = inlineRevision ?? options.revision ?? defaultRevision;
  if (revision === '') {
    throw new ModelDownloadError('invalid_request', `Empty revision in '${source}'.`);
  }
  const endpoint = (options.endpoint ?? defaultHuggingFaceEndpoint).replace(/\/+$/, '');
  if (!/^https?:\/\/.+/i.test(endpoint)) {
    throw new ModelDownloadError(
      'invalid_request',
      `Hugging Face endpoint '${endpoint}' must be an http(s) URL.`,
    );
  }
  // The revision is one path segment even when it contains slashes (refs/pr/1), as the Hub expects.
  const encodedFile = fileParts.map(encodeURIComponent).join('/');
  const url = `${endpoint}/${owner}/${repo}/resolve/${encodeURIComponent(revision)}/${encodedFile}`;
  return { url, huggingFace: { owner, repo, revision, file, endpoint } };
}

/** Downloads `source` to `destination`, continuing `<destination>.partial` when present. */
export async function downloadModelFile(options: DownloadOptions): Promise<DownloadResult> {
  const resolved = resolveModelSource(options.source, options);
  const expectedFromOption = options.sha256?.trim().toLowerCase();
  if (expectedFromOption !== undefined && !sha256Pattern.test(expectedFromOption)) {
    throw new ModelDownloadError(
      'invalid_request',
      `Expected sha256 '${options.sha256}' is not 64 hexadecimal characters.`,
    );
  }
  const context: DownloadContext = {
    options,
    resolved,
    displayUrl: withoutQuery(resolved.url),
    partialPath: `${options.destination}.partial`,
    authorization: authorizationFor(resolved, options.token),
    connectTimeoutMs: options.connectTimeoutMs ?? defaultConnectTimeoutMs,
    stallTimeoutMs: options.stallTimeoutMs ?? defaultStallTimeoutMs,
  };
  throwIfAborted(options.signal);
  await mkdir(path.dirname(options.destination), { recursive: true });
  const lock = await acquireLock(options.destination);
  try {
    let expectedSha256 = expectedFromOption ?? null;
    let expectedSize: number | null = null;
    let checksumSource: DownloadResult['checksumSource'] = expectedSha256 ? 'option' : 'none';
    if (expectedSha256 === null && resolved.huggingFace !== null) {
      const metadata = await fetchHubFileMetadata(context);
      expectedSha256 = metadata.sha256;
      expectedSize = metadata.sizeBytes;
      if (expectedSha256 !== null) checksumSource = 'hub';
    }
    const transfer = await transferToPartial(context, expectedSize);
    if (expectedSha256 !== null && transfer.sha256 !== expectedSha256) {
      await rm(context.partialPath, { force: true });
      throw new ModelDownloadError(
        'checksum_mismatch',
        `Checksum mismatch for ${context.displayUrl}: expected sha256 ${expectedSha256}, got ${transfer.sha256}. ` +
          `The partial file was deleted; run the download again.`,
      );
    }
    lock.assertHeld();
    await rename(context.partialPath, options.destination);
    return {
      path: options.destination,
      url: context.displayUrl,
      sizeBytes: transfer.sizeBytes,
      sha256: transfer.sha256,
      checksumSource,
      resumedFromBytes: transfer.resumedFromBytes,
      downloadedBytes: transfer.downloadedBytes,
    };
  } finally {
    await lock.release();
  }
}

interface DownloadContext {
  options: DownloadOptions;
  resolved: ResolvedSource;
  displayUrl: string;
  partialPath: string;
  authorization: string | null;
  connectTimeoutMs: number;
  stallTimeoutMs: number;
}

interface Transfer {
  sizeBytes: number;
  sha256: string;
  resumedFromBytes: number;
  downloadedBytes: number;
}

/*
 * The expected digest comes from a HEAD on the file's `resolve` URL without following the redirect
 * to the CDN, reading `X-Linked-Etag` (the LFS object id, i.e. the file's sha256) and
 * `X-Linked-Size`. This is how both official clients fetch file metadata (huggingface_hub's
 * get_hf_file_metadata, huggingface.js's fileDownloadInfo); it costs one small request for exactly
 * this file, whereas the tree API lists a whole directory and is paginated. The headers sit on the
 * Hub's own 302 answer: after the redirect they would describe the CDN object instead. Files not
 * stored in LFS carry a git blob sha1 as ETag; that is not a sha256, so such files go unverified.
 */
async function fetchHubFileMetadata(
  context: DownloadContext,
): Promise<{ sha256: string | null; sizeBytes: number | null }> {
  let url = context.resolved.url;
  // Same-host redirects (a renamed repository) are followed; the first cross-host one is the CDN.
  for (let hop = 0; hop < 5; hop += 1) {
    const { response, release } = await sendRequest(context, url, {
      method: 'HEAD',
      redirect: 'manual',
      headers: requestHeaders(context, url, 0),
    });
    release();
    const linkedEtag = response.headers.get('x-linked-etag');
    const location = response.headers.get('location');
    const isRedirect = response.status >= 300 && response.status < 400;
    if (isRedirect && linkedEtag === null && location !== null) {
      const next = new URL(location, url);
      if (next.origin === new URL(url).origin) {
        url = next.href;
        continue;
      }
    }
    if (!isRedirect && !response.ok) throw httpFailure(context, response);
    const sha256 = sha256FromEtag(linkedEtag ?? response.headers.get('etag'));
    const sizeText =
      response.headers.get('x-linked-size') ??
      (isRedirect ? null : response.headers.get('content-length'));
    return { sha256, sizeBytes: parseSize(sizeText) };
  }
  throw new ModelDownloadError(
    'http_error',
    `Too many redirects from ${context.displayUrl} while reading file metadata.`,
  );
}

/** Fills `<destination>.partial` (continuing it when possible) and returns its size and sha256. */
async function transferToPartial(
  context: DownloadContext,
  expectedSize: number | null,
): Promise<Transfer> {
  const { options, partialPath } = context;
  for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
    let offset = await sizeOf(partialPath);
    if (expectedSize !== null && offset > expectedSize) {
      await rm(partialPath, { force: true });
      offset = 0;
    }
    if (expectedSize !== null && offset === expectedSize && offset > 0) {
      // A previous run received everything but stopped before verifying.
      return await completedPartial(context, offset);
    }

    const { response, release, stallTimer } = await sendRequest(context, context.resolved.url, {
      method: 'GET',
      redirect: 'follow',
      headers: requestHeaders(context, context.resolved.url, offset),
    });
    try {
      if (response.status === 416) {
        await response.body?.cancel();
        const total = parseContentRange(response.headers.get('content-range'))?.total ?? null;
        if (offset > 0 && total === offset) return await completedPartial(context, offset);
        // The partial file does not fit what the server has now: start over.
        await rm(partialPath, { force: true });
        continue;
      }
      if (response.status !== 200 && response.status !== 206) {
        await response.body?.cancel();
        throw httpFailure(context, response);
      }
      let startAt = 0;
      let totalBytes = expectedSize;
      if (response.status === 206) {
        const range = parseContentRange(response.headers.get('content-range'));
        if (range === null || range.start !== offset) {
          await response.body?.cancel();
          await rm(partialPath, { force: true });
          continue;
        }
        startAt = offset;
        totalBytes = range.total ?? totalBytes;
      } else {
        // 200: the server ignored the Range header and sends the whole file.
        totalBytes = parseSize(response.headers.get('content-length')) ?? totalBytes;
      }
      if (response.body === null) {
        throw new ModelDownloadError('http_error', `${context.displayUrl} answered with no body.`);
      }

      const hash = createHash('sha256');
      if (startAt > 0) await hashInto(hash, partialPath, startAt, options.signal);
      const downloadedBytes = await writeBody(context, response.body, {
        hash,
        startAt,
        totalBytes,
        stallTimer,
      });
      const sizeBytes = startAt + downloadedBytes;
      if (totalBytes !== null && sizeBytes < totalBytes) {
        throw new ModelDownloadError(
          'interrupted',
          `The connection to ${hostOf(context.resolved.url)} closed after ${sizeBytes} of ${totalBytes} bytes. ` +
            `The partial file ${partialPath} was kept; run the download again to resume.`,
        );
      }
      if (totalBytes !== null && sizeBytes > totalBytes) {
        await rm(partialPath, { force: true });
        throw new ModelDownloadError(
          'size_mismatch',
          `Received ${sizeBytes} bytes from ${context.displayUrl} but ${totalBytes} were announced. ` +
            `The partial file was deleted; run the download again.`,
        );
      }
      return { sizeBytes, sha256: hash.digest('hex'), resumedFromBytes: startAt, downloadedBytes };
    } catch (error) {
      throw classifyTransferError(context, error);
    } finally {
      release();
    }
  }
  throw new ModelDownloadError(
    'http_error',
    `${context.displayUrl} kept answering range requests inconsistently; delete ${partialPath} and try again.`,
  );
}

async function writeBody(
  context: DownloadContext,
  body: ReadableStream<Uint8Array>,
  state: { hash: Hash; startAt: number; totalBytes: number | null; stallTimer: StallTimer },
): Promise<number> {
  const { hash, startAt, totalBytes, stallTimer } = state;
  const progress = new ProgressMeter(context.options.onProgress, startAt, totalBytes);
  let received = 0;
  const handle = await open(context.partialPath, startAt > 0 ? 'a' : 'w');
  try {
    stallTimer.start();
    // Awaiting each write is the backpressure: the socket is read no faster than the disk takes it.
    await pipeline(Readable.fromWeb(body), async (source: AsyncIterable<Uint8Array>) => {
      for await (const chunk of source) {
        stallTimer.start();
        hash.update(chunk);
        await writeFully(handle, chunk);
        received += chunk.length;
        progress.update(startAt + received);
      }
    });
    stallTimer.stop();
    // Flushed before the rename, so a crash cannot leave a truncated file under the final name.
    await handle.datasync();
    progress.finish(startAt + received);
    return received;
  } finally {
    stallTimer.stop();
    await handle.close();
  }
}

async function writeFully(handle: FileHandle, chunk: Uint8Array): Promise<void> {
  let written = 0;
  while (written < chunk.length) {
    const { bytesWritten } = await handle.write(chunk, written, chunk.length - written);
    written += bytesWritten;
  }
}

/** Restarts on every chunk; fires when the body delivers nothing for the stall timeout. */
interface StallTimer {
  start(): void;
  stop(): void;
}

interface SentRequest {
  response: Response;
  /** Detaches the caller's signal and timers; call once the body is consumed or cancelled. */
  release: () => void;
  stallTimer: StallTimer;
}

class TimeoutMarker extends Error {
  constructor(readonly kind: 'connect' | 'stall') {
    super(`${kind} timeout`);
  }
}

/** fetch with a deadline for the response headers and an abort for a stalled body. */
async function sendRequest(
  context: DownloadContext,
  url: string,
  init: { method: string; redirect: 'follow' | 'manual'; headers: Record<string, string> },
): Promise<SentRequest> {
  const controller = new AbortController();
  const callerSignal = context.options.signal;
  const signal = callerSignal
    ? AbortSignal.any([callerSignal, controller.signal])
    : controller.signal;
  const connectTimer = setTimeout(
    () => controller.abort(new TimeoutMarker('connect')),
    context.connectTimeoutMs,
  );
  let stallTimeout: NodeJS.Timeout | undefined;
  const stallTimer: StallTimer = {
    start() {
      clearTimeout(stallTimeout);
      stallTimeout = setTimeout(
        () => controller.abort(new TimeoutMarker('stall')),
        context.stallTimeoutMs,
      );
    },
    stop() {
      clearTimeout(stallTimeout);
    },
  };
  const release = () => {
    clearTimeout(connectTimer);
    stallTimer.stop();
  };
  try {
    const response = await fetch(url, { ...init, signal });
    clearTimeout(connectTimer);
    return { response, release, stallTimer };
  } catch (error) {
    release();
    throw classifyRequestError(context, error, controller.signal);
  }
}

function classifyRequestError(
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
function classifyTransferError(context: DownloadContext, error: unknown): unknown {
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

function abortedError(context: DownloadContext): ModelDownloadError {
  return new ModelDownloadError(
    'aborted',
    `Download of ${context.displayUrl} was aborted; the partial file ${context.partialPath} is kept for a later resume.`,
    { cause: context.options.signal?.reason },
  );
}

function httpFailure(context: DownloadContext, response: Response): ModelDownloadError {
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

function requestHeaders(
  context: DownloadContext,
  url: string,
  offset: number,
): Record<string, string> {
  // Compressed transfer would make byte ranges and Content-Length refer to different bytes.
  const headers: Record<string, string> = { 'accept-encoding': 'identity' };
  if (offset > 0) headers.range = `bytes=${offset}-`;
  // fetch drops Authorization on cross-origin redirects, so the token never reaches the CDN.
  if (context.authorization !== null && sameOrigin(url, context.resolved.url)) {
    headers.authorization = context.authorization;
  }
  return headers;
}

function authorizationFor(resolved: ResolvedSource, token: string | undefined): string | null {
  // A Hub token is only for the Hub: a plain URL elsewhere must not receive it.
  if (!token || resolved.huggingFace === null) return null;
  return `Bearer ${token}`;
}

class ProgressMeter {
  private readonly samples: { at: number; bytes: number }[] = [];
  private lastReportAt = 0;

  constructor(
    private readonly onProgress: DownloadOptions['onProgress'],
    initialBytes: number,
    private readonly totalBytes: number | null,
  ) {
    this.samples.push({ at: performance.now(), bytes: initialBytes });
    this.report(initialBytes, 0);
  }

  update(receivedBytes: number): void {
    const now = performance.now();
    if (now - this.lastReportAt < progressIntervalMs) return;
    this.samples.push({ at: now, bytes: receivedBytes });
    // A few seconds of history: recent enough to follow changes, long enough to be steady.
    while (this.samples.length > 2 && now - this.samples[0]!.at > 5_000) this.samples.shift();
    const oldest = this.samples[0]!;
    const seconds = (now - oldest.at) / 1000;
    this.report(receivedBytes, seconds > 0 ? (receivedBytes - oldest.bytes) / seconds : 0);
  }

  finish(receivedBytes: number): void {
    const first = this.samples[0]!;
    const seconds = (performance.now() - first.at) / 1000;
    this.report(receivedBytes, seconds > 0 ? (receivedBytes - first.bytes) / seconds : 0);
  }

  private report(receivedBytes: number, bytesPerSecond: number): void {
    this.lastReportAt = performance.now();
    this.onProgress?.({ receivedBytes, totalBytes: this.totalBytes, bytesPerSecond });
  }
}

/** How long a lock left by a stopped process holds (proper-lockfile refreshes a live one). */
export const downloadLockStaleMs = 15_000;

interface DownloadLock {
  /** Throws when another process took the lock over meanwhile (this one looked stale). */
  assertHeld(): void;
  release(): Promise<void>;
}

/**
 * `<destination>.lock`, held with proper-lockfile: `npm start`'s background pull and
 * `npm run models -- pull` may race for one file. A live holder refreshes the lock; one whose
 * process stopped leaves it stale after `downloadLockStaleMs`, and the next download takes over.
 */
async function acquireLock(destination: string): Promise<DownloadLock> {
  let compromised: Error | null = null;
  let release: () => Promise<void>;
  try {
    const { default: lockfile } = await import('proper-lockfile');
    release = await lockfile.lock(destination, {
      realpath: false,
      lockfilePath: `${destination}.lock`,
      stale: downloadLockStaleMs,
      update: downloadLockStaleMs / 3,
      retries: 0,
      onCompromised: (error) => {
        compromised = error;
      },
    });
  } catch (error) {
    if (errorCode(error) !== 'ELOCKED') throw error;
    throw new ModelDownloadError(
      'in_progress',
      `Another download into ${destination} is running. Wait for it; a lock left by a stopped process is taken over after ${downloadLockStaleMs / 1000} s.`,
    );
  }
  return {
    assertHeld() {
      if (compromised !== null) {
        throw new ModelDownloadError(
          'in_progress',
          `Another download into ${destination} took over during this one; its file is kept.`,
        );
      }
    },
    release: () => release().catch(() => undefined),
  };
}

/** A partial file that already holds the whole file: only its digest is needed. */
async function completedPartial(context: DownloadContext, sizeBytes: number): Promise<Transfer> {
  const hash = createHash('sha256');
  await hashInto(hash, context.partialPath, sizeBytes, context.options.signal);
  context.options.onProgress?.({
    receivedBytes: sizeBytes,
    totalBytes: sizeBytes,
    bytesPerSecond: 0,
  });
  return { sizeBytes, sha256: hash.digest('hex'), resumedFromBytes: sizeBytes, downloadedBytes: 0 };
}

async function hashInto(
  hash: Hash,
  filePath: string,
  sizeBytes: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  try {
    await pipeline(
      createReadStream(filePath, { end: sizeBytes - 1 }),
      async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) hash.update(chunk);
      },
      { signal },
    );
  } catch (error) {
    if (signal?.aborted) {
      throw new ModelDownloadError('aborted', `Aborted while checking ${filePath}.`, {
        cause: error,
      });
    }
    throw error;
  }
}

async function sizeOf(filePath: string): Promise<number> {
  try {
    return (await stat(filePath)).size;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return 0;
    throw error;
  }
}

function parseContentRange(
  value: string | null,
): { start: number; end: number | null; total: number | null } | null {
  const match = value === null ? null : /^bytes (?:(\d+)-(\d+)|\*)\/(\d+|\*)$/.exec(value.trim());
  if (!match) return null;
  const total = match[3] === '*' || match[3] === undefined ? null : Number(match[3]);
  if (match[1] === undefined) return { start: 0, end: null, total };
  return { start: Number(match[1]), end: Number(match[2]), total };
}

function sha256FromEtag(etag: string | null): string | null {
  const value = etag
    ?.trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1')
    .toLowerCase();
  return value !== undefined && sha256Pattern.test(value) ? value : null;
}

function parseSize(value: string | null): number | null {
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : null;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new ModelDownloadError('aborted', 'Download aborted before it started.', {
      cause: signal.reason,
    });
  }
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** undici reports `fetch failed` with the useful part (ECONNREFUSED, ENOTFOUND, …) in `cause`. */
function networkErrorCode(error: unknown): string {
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

function hostOf(url: string): string {
  return new URL(url).host;
}

function sameOrigin(first: string, second: string): boolean {
  return new URL(first).origin === new URL(second).origin;
}

/** Signed CDN or user URLs may carry credentials in the query string: keep them out of messages. */
function withoutQuery(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}
