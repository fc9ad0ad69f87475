// Downloads one model file from Hugging Face or a plain URL: resumable, verified by sha256, renamed into place.
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { DownloadContext, DownloadOptions, DownloadResult } from './download-context.js';
import { ModelDownloadError, throwIfAborted } from './download-errors.js';
import { acquireLock } from './download-lock.js';
import { authorizationFor, fetchHubFileMetadata } from './download-request.js';
import { transferToPartial } from './download-transfer.js';
import { resolveModelSource, sha256Pattern, withoutQuery } from './model-source.js';

export type {
  DownloadOptions,
  DownloadProgress,
  DownloadResult,
  HuggingFaceFile,
  ResolvedSource,
} from './download-context.js';
export { ModelDownloadError, type ModelDownloadErrorReason } from './download-errors.js';
export { downloadLockStaleMs } from './download-lock.js';
export { defaultHuggingFaceEndpoint, defaultRevision, resolveModelSource } from './model-source.js';

export const defaultConnectTimeoutMs = 5_000;
export const defaultStallTimeoutMs = 30_000;

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
