// Filling `<destination>.partial`: resumed by byte range, hashed as it is written, with progress.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rm, stat, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DownloadContext, DownloadOptions, Transfer } from './download-context.js';
import {
  classifyTransferError,
  errorCode,
  hostOf,
  httpFailure,
  ModelDownloadError,
} from './download-errors.js';
import {
  parseContentRange,
  parseSize,
  requestHeaders,
  sendRequest,
  type SentRequest,
  type StallTimer,
} from './download-request.js';

const progressIntervalMs = 100;
const maxAttempts = 3;

/** Fills `<destination>.partial` (continuing it when possible) and returns its size and sha256. */
export async function transferToPartial(
  context: DownloadContext,
  expectedSize: number | null,
): Promise<Transfer> {
  const { partialPath } = context;
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

    const sent = await sendRequest(context, context.resolved.url, {
      method: 'GET',
      redirect: 'follow',
      headers: requestHeaders(context, context.resolved.url, offset),
    });
    try {
      const transfer = await receive(context, sent, offset, expectedSize);
      if (transfer !== 'start over') return transfer;
      // The partial file does not fit what the server has now.
      await rm(partialPath, { force: true });
    } catch (error) {
      throw classifyTransferError(context, error);
    } finally {
      sent.release();
    }
  }
  throw new ModelDownloadError(
    'http_error',
    `${context.displayUrl} kept answering range requests inconsistently; delete ${partialPath} and try again.`,
  );
}

/** Where the body continues the partial file, or 'start over' when the answer does not fit it. */
async function bodyStart(
  context: DownloadContext,
  response: Response,
  offset: number,
  expectedSize: number | null,
): Promise<{ startAt: number; totalBytes: number | null } | Transfer | 'start over'> {
  if (response.status === 416) {
    await response.body?.cancel();
    const total = parseContentRange(response.headers.get('content-range'))?.total ?? null;
    if (offset > 0 && total === offset) return await completedPartial(context, offset);
    return 'start over';
  }
  if (response.status !== 200 && response.status !== 206) {
    await response.body?.cancel();
    throw httpFailure(context, response);
  }
  if (response.status === 206) {
    const range = parseContentRange(response.headers.get('content-range'));
    if (range === null || range.start !== offset) {
      await response.body?.cancel();
      return 'start over';
    }
    return { startAt: offset, totalBytes: range.total ?? expectedSize };
  }
  // 200: the server ignored the Range header and sends the whole file.
  return {
    startAt: 0,
    totalBytes: parseSize(response.headers.get('content-length')) ?? expectedSize,
  };
}

/** Reads one answer into the partial file, checking its length against what was announced. */
async function receive(
  context: DownloadContext,
  { response, stallTimer }: SentRequest,
  offset: number,
  expectedSize: number | null,
): Promise<Transfer | 'start over'> {
  const { options, partialPath } = context;
  const start = await bodyStart(context, response, offset, expectedSize);
  if (start === 'start over' || 'sha256' in start) return start;
  const { startAt, totalBytes } = start;
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
