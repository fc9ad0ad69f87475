import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  downloadLockStaleMs,
  downloadModelFile,
  ModelDownloadError,
  resolveModelSource,
  type DownloadOptions,
  type DownloadProgress,
} from './model-downloader.js';
import { createProgressBar, formatDuration, renderBar } from './progress-bar.js';

const fileSize = 4 * 1024 * 1024;
const chunkSize = 64 * 1024;

/** Deterministic pseudo-random bytes (xorshift32), so the file does not compress or repeat. */
function generateBytes(size: number, seed: number): Buffer {
  const bytes = Buffer.alloc(size);
  let state = seed;
  for (let offset = 0; offset < size; offset += 4) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes.writeUInt32LE(state >>> 0, offset);
  }
  return bytes;
}

const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const content = generateBytes(fileSize, 0x9e3779b9);
const contentSha256 = sha256Of(content);

interface ServedRequest {
  method: string;
  url: string;
  range: string | undefined;
  authorization: string | undefined;
  servedBytes: number;
}

/** What the fake Hub and CDN saw, reset before each test. */
const log: { hub: ServedRequest[]; cdn: ServedRequest[] } = { hub: [], cdn: [] };
/** Milliseconds between 64 KiB chunks on the CDN; 0 sends the body at once. */
let throttleMs = 0;

let hub: Server;
let cdn: Server;
let silent: Server;
let hubUrl: string;
let cdnUrl: string;
let silentUrl: string;
let closedPortUrl: string;
let directory: string;

function record(list: ServedRequest[], request: IncomingMessage): ServedRequest {
  const entry: ServedRequest = {
    method: request.method ?? '',
    url: request.url ?? '',
    range: request.headers.range,
    authorization: request.headers.authorization,
    servedBytes: 0,
  };
  list.push(entry);
  return entry;
}

// Imitates huggingface.co: `resolve` answers with the LFS metadata and a redirect to another host.
function handleHub(request: IncomingMessage, response: ServerResponse): void {
  record(log.hub, request);
  const match = /^\/([^/]+)\/([^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(request.url ?? '');
  if (match?.[1] === 'gated') {
    response.writeHead(401, {
      'x-error-code': 'GatedRepo',
      'x-error-message': 'Access restricted',
    });
    response.end();
    return;
  }
  if (match?.slice(1).join('/') === 'owner/model/main/model.gguf') {
    response.writeHead(302, {
      location: `${cdnUrl}/blobs/model.gguf?signature=secret`,
      'x-linked-etag': `"${contentSha256}"`,
      'x-linked-size': String(fileSize),
      etag: `"${contentSha256}"`,
      'x-repo-commit': 'a'.repeat(40),
    });
    response.end();
    return;
  }
  response.writeHead(404, {
    'x-error-code': 'EntryNotFound',
    'x-error-message': 'Entry not found',
  });
  response.end();
}

// Imitates the CDN: byte ranges per RFC 9110, optionally slow so that a test can abort mid-body.
function handleCdn(request: IncomingMessage, response: ServerResponse): void {
  const entry = record(log.cdn, request);
  const url = new URL(request.url ?? '/', cdnUrl);
  if (url.pathname !== '/blobs/model.gguf') {
    response.writeHead(404);
    response.end();
    return;
  }
  const honourRange = !url.searchParams.has('ignore-range');
  const rangeMatch = honourRange ? /^bytes=(\d+)-$/.exec(request.headers.range ?? '') : null;
  const start = rangeMatch ? Number(rangeMatch[1]) : 0;
  if (start >= fileSize) {
    response.writeHead(416, { 'content-range': `bytes */${fileSize}` });
    response.end();
    return;
  }
  const headers: Record<string, string> = {
    'content-type': 'application/octet-stream',
    'content-length': String(fileSize - start),
    'accept-ranges': 'bytes',
  };
  if (rangeMatch) headers['content-range'] = `bytes ${start}-${fileSize - 1}/${fileSize}`;
  response.writeHead(rangeMatch ? 206 : 200, headers);
  if (request.method === 'HEAD') {
    response.end();
    return;
  }
  const dropAfter = url.searchParams.get('drop-after');
  if (dropAfter !== null) {
    // Sends part of the body, then cuts the connection without finishing the response.
    entry.servedBytes = Number(dropAfter);
    response.write(content.subarray(start, start + Number(dropAfter)), () =>
      setTimeout(() => response.socket?.end(), 20),
    );
    return;
  }
  if (throttleMs === 0) {
    entry.servedBytes = fileSize - start;
    response.end(content.subarray(start));
    return;
  }
  void (async () => {
    for (let position = start; position < fileSize; position += chunkSize) {
      if (response.destroyed) return;
      const chunk = content.subarray(position, Math.min(position + chunkSize, fileSize));
      entry.servedBytes += chunk.length;
      response.write(chunk);
      await new Promise((resolve) => setTimeout(resolve, throttleMs));
    }
    response.end();
  })();
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

async function failureOf(promise: Promise<unknown>): Promise<ModelDownloadError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ModelDownloadError);
  return error as ModelDownloadError;
}

let testIndex = 0;
let destination: string;

function options(extra: Partial<DownloadOptions> = {}): DownloadOptions {
  return {
    source: 'hf:owner/model/model.gguf',
    destination,
    endpoint: hubUrl,
    connectTimeoutMs: 2_000,
    ...extra,
  };
}

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'model-downloader-'));
  hub = createServer(handleHub);
  cdn = createServer(handleCdn);
  // Accepts connections and never answers: a network that swallows packets.
  silent = createServer(() => undefined);
  hubUrl = await listen(hub);
  cdnUrl = await listen(cdn);
  silentUrl = await listen(silent);
  const closed = createServer();
  closedPortUrl = await listen(closed);
  await close(closed);
});

afterAll(async () => {
  await Promise.all([close(hub), close(cdn), close(silent)]);
  await rm(directory, { recursive: true, force: true });
});

beforeEach(() => {
  log.hub = [];
  log.cdn = [];
  throttleMs = 0;
  testIndex += 1;
  destination = path.join(directory, `run-${testIndex}`, 'model.gguf');
});

describe('downloadModelFile', () => {
  it('downloads with an explicit sha256, renames into place and reports progress', async () => {
    const progress: DownloadProgress[] = [];
    const result = await downloadModelFile(
      options({
        sha256: contentSha256.toUpperCase(),
        onProgress: (update) => progress.push(update),
      }),
    );

    expect(result).toMatchObject({
      path: destination,
      sizeBytes: fileSize,
      sha256: contentSha256,
      checksumSource: 'option',
      resumedFromBytes: 0,
      downloadedBytes: fileSize,
      url: `${hubUrl}/owner/model/resolve/main/model.gguf`,
    });
    expect(sha256Of(await readFile(destination))).toBe(contentSha256);
    expect(existsSync(`${destination}.partial`)).toBe(false);
    expect(existsSync(`${destination}.lock`)).toBe(false);
    // A known digest needs no metadata request: one GET, redirected to the CDN.
    expect(log.hub.map((request) => request.method)).toEqual(['GET']);
    expect(log.cdn).toHaveLength(1);
    expect(progress.at(0)).toMatchObject({ receivedBytes: 0, totalBytes: fileSize });
    expect(progress.at(-1)).toMatchObject({ receivedBytes: fileSize, totalBytes: fileSize });
    const received = progress.map((update) => update.receivedBytes);
    expect(received).toEqual([...received].sort((first, second) => first - second));
  });

  it("takes the digest from the Hub's X-Linked-Etag and keeps the token off the CDN", async () => {
    const result = await downloadModelFile(options({ token: 'hf_test_token' }));

    expect(result.checksumSource).toBe('hub');
    expect(result.sha256).toBe(contentSha256);
    expect(sha256Of(await readFile(destination))).toBe(contentSha256);
    expect(log.hub.map((request) => request.method)).toEqual(['HEAD', 'GET']);
    // The HEAD stops at the Hub's redirect: the CDN sees only the download.
    expect(log.cdn.map((request) => request.method)).toEqual(['GET']);
    expect(log.hub.every((request) => request.authorization === 'Bearer hf_test_token')).toBe(true);
    expect(log.cdn[0]!.authorization).toBeUndefined();
  });

  it('keeps the partial file on abort and resumes it with a Range request', async () => {
    throttleMs = 5;
    const controller = new AbortController();
    const aborted = await failureOf(
      downloadModelFile(
        options({
          signal: controller.signal,
          onProgress: ({ receivedBytes }) => {
            if (receivedBytes >= 1024 * 1024) controller.abort();
          },
        }),
      ),
    );
    expect(aborted.reason).toBe('aborted');
    expect(existsSync(destination)).toBe(false);
    expect(existsSync(`${destination}.lock`)).toBe(false);
    const partialSize = (await stat(`${destination}.partial`)).size;
    expect(partialSize).toBeGreaterThanOrEqual(1024 * 1024);
    expect(partialSize).toBeLessThan(fileSize);
    expect(log.cdn[0]!.range).toBeUndefined();

    throttleMs = 0;
    const progress: DownloadProgress[] = [];
    const result = await downloadModelFile(
      options({ onProgress: (update) => progress.push(update) }),
    );

    const resumed = log.cdn.at(-1)!;
    expect(resumed.range).toBe(`bytes=${partialSize}-`);
    expect(resumed.servedBytes).toBe(fileSize - partialSize);
    expect(result).toMatchObject({
      checksumSource: 'hub',
      resumedFromBytes: partialSize,
      downloadedBytes: fileSize - partialSize,
      sizeBytes: fileSize,
    });
    expect(progress.at(0)!.receivedBytes).toBe(partialSize);
    expect(progress.at(-1)!.receivedBytes).toBe(fileSize);
    expect(sha256Of(await readFile(destination))).toBe(contentSha256);
    expect(existsSync(`${destination}.partial`)).toBe(false);
  });

  it('reports a dropped connection as interrupted and keeps what arrived', async () => {
    const failure = await failureOf(
      downloadModelFile(
        options({ source: `${cdnUrl}/blobs/model.gguf?drop-after=300000`, sha256: contentSha256 }),
      ),
    );

    expect(failure.reason).toBe('interrupted');
    expect(failure.message).toContain('run the download again to resume');
    // What was written before the cut is kept, byte for byte. How much that is depends on how far
    // the reader had got: bytes still queued in the fetch body when the connection broke are gone.
    const kept = await readFile(`${destination}.partial`);
    expect(kept.length).toBeLessThanOrEqual(300_000);
    expect(kept.equals(content.subarray(0, kept.length))).toBe(true);
    expect(existsSync(`${destination}.lock`)).toBe(false);

    // The next run continues from exactly there.
    const result = await downloadModelFile(
      options({ source: `${cdnUrl}/blobs/model.gguf`, sha256: contentSha256 }),
    );
    expect(result).toMatchObject({
      resumedFromBytes: kept.length,
      downloadedBytes: fileSize - kept.length,
    });
    expect(sha256Of(await readFile(destination))).toBe(contentSha256);
  });

  it('reports a stalled body as interrupted instead of waiting forever', async () => {
    throttleMs = 2_000;
    const failure = await failureOf(
      downloadModelFile(options({ sha256: contentSha256, stallTimeoutMs: 300 })),
    );

    expect(failure.reason).toBe('interrupted');
    // The stall deadline ended it: the server would have sent its next chunk after 2 s.
    expect(failure.message).toContain('sent no data for 0.3 s');
    expect((await stat(`${destination}.partial`)).size).toBe(chunkSize);
  });

  it('starts over when the server ignores the Range header', async () => {
    await writePartial(Buffer.alloc(1000, 0xff));
    const result = await downloadModelFile(
      options({ source: `${cdnUrl}/blobs/model.gguf?ignore-range=1`, sha256: contentSha256 }),
    );

    expect(log.cdn[0]!.range).toBe('bytes=1000-');
    expect(result).toMatchObject({ resumedFromBytes: 0, downloadedBytes: fileSize });
    expect(sha256Of(await readFile(destination))).toBe(contentSha256);
  });

  it('verifies and renames a complete partial file when the server answers 416', async () => {
    await writePartial(content);
    const result = await downloadModelFile(
      options({ source: `${cdnUrl}/blobs/model.gguf`, sha256: contentSha256 }),
    );

    expect(log.cdn.map((request) => request.range)).toEqual([`bytes=${fileSize}-`]);
    expect(log.cdn[0]!.servedBytes).toBe(0);
    expect(result).toMatchObject({
      downloadedBytes: 0,
      sizeBytes: fileSize,
      checksumSource: 'option',
    });
    expect(sha256Of(await readFile(destination))).toBe(contentSha256);
  });

  it('deletes the partial file and throws checksum_mismatch on a wrong digest', async () => {
    const failure = await failureOf(downloadModelFile(options({ sha256: 'ab'.repeat(32) })));

    expect(failure.reason).toBe('checksum_mismatch');
    expect(failure.message).toContain('Checksum mismatch');
    expect(failure.message).toContain(contentSha256);
    expect(existsSync(`${destination}.partial`)).toBe(false);
    expect(existsSync(destination)).toBe(false);
    expect(existsSync(`${destination}.lock`)).toBe(false);
  });

  it('reports a missing file as not_found, naming file and revision', async () => {
    const failure = await failureOf(
      downloadModelFile(options({ source: 'hf:owner/model:main/missing.gguf' })),
    );

    expect(failure.reason).toBe('not_found');
    expect(failure.status).toBe(404);
    expect(failure.message).toContain(
      "missing.gguf does not exist in owner/model at revision 'main'",
    );
    expect(existsSync(`${destination}.partial`)).toBe(false);
  });

  it('reports a gated model as unauthorized and suggests a token', async () => {
    const failure = await failureOf(
      downloadModelFile(options({ source: 'hf:gated/model/model.gguf' })),
    );

    expect(failure.reason).toBe('unauthorized');
    expect(failure.message).toMatch(/token/i);
  });

  it('fails fast with unreachable on a closed port, explaining the manual alternative', async () => {
    // A connect timeout of ten minutes: only the refusal itself can end this within the test.
    const failure = await failureOf(
      downloadModelFile(options({ endpoint: closedPortUrl, connectTimeoutMs: 600_000 })),
    );

    expect(failure.reason).toBe('unreachable');
    expect(failure.message).toContain('Could not reach 127.0.0.1');
    expect(failure.message).toContain('ECONNREFUSED');
    expect(failure.message).toContain(`place the file at ${destination}`);
  });

  it('gives up on a server that never answers after the connect timeout', async () => {
    const startedAt = performance.now();
    const failure = await failureOf(
      downloadModelFile(options({ endpoint: silentUrl, connectTimeoutMs: 300 })),
    );
    const elapsedMs = performance.now() - startedAt;

    expect(failure.reason).toBe('unreachable');
    expect(failure.message).toContain('no response within 0.3 s');
    // Not before the timeout (timers never fire early); after it, the message says which it was.
    expect(elapsedMs).toBeGreaterThanOrEqual(250);
  });

  it('refuses to run next to a live download into the same destination', async () => {
    await writePartial(Buffer.alloc(0));
    // Another process downloading into the destination holds the lock (and keeps it fresh).
    const release = await lockfile.lock(destination, {
      realpath: false,
      lockfilePath: `${destination}.lock`,
      stale: downloadLockStaleMs,
    });
    try {
      const failure = await failureOf(downloadModelFile(options({ sha256: contentSha256 })));
      expect(failure.reason).toBe('in_progress');
      expect(log.hub).toHaveLength(0);
      expect(existsSync(`${destination}.lock`)).toBe(true);
    } finally {
      await release();
    }
  });

  it('takes over a lock its holder left behind when it stopped', async () => {
    await writePartial(Buffer.alloc(0));
    // A stopped process's lock is no longer refreshed: its time is older than the stale limit.
    await mkdir(`${destination}.lock`);
    const past = new Date(Date.now() - downloadLockStaleMs - 5_000);
    await utimes(`${destination}.lock`, past, past);

    const result = await downloadModelFile(options({ sha256: contentSha256 }));

    expect(result.sha256).toBe(contentSha256);
    expect(existsSync(`${destination}.lock`)).toBe(false);
  });
});

describe('resolveModelSource', () => {
  it('builds resolve URLs for the accepted reference forms', () => {
    expect(resolveModelSource('hf:owner/repo/dir/file name.gguf').url).toBe(
      'https://huggingface.co/owner/repo/resolve/main/dir/file%20name.gguf',
    );
    expect(
      resolveModelSource('hf:owner/repo:refs/pr/1/file.gguf', { endpoint: 'http://mirror/hf/' })
        .url,
    ).toBe('http://mirror/hf/owner/repo/resolve/refs/pr/1/file.gguf');
    expect(resolveModelSource('hf:owner/repo/file.gguf', { revision: 'v1.0' }).huggingFace).toEqual(
      expect.objectContaining({ revision: 'v1.0', file: 'file.gguf' }),
    );
    expect(resolveModelSource('https://example.com/a.gguf').huggingFace).toBeNull();
  });

  it('rejects malformed references', () => {
    for (const source of [
      'hf:owner',
      'hf:owner/repo',
      'hf:owner/repo/',
      'hf:o/r/../x',
      'ftp://x/y',
    ]) {
      expect(() => resolveModelSource(source), source).toThrow(ModelDownloadError);
    }
    expect(() => resolveModelSource('hf:o/r:v1/f.gguf', { revision: 'v2' })).toThrow(/revision/);
  });
});

describe('progress bar', () => {
  const capture = (isTTY: boolean) => {
    const writes: string[] = [];
    return { writes, output: { isTTY, columns: 100, write: (text: string) => writes.push(text) } };
  };

  it('redraws in place at most every 100 ms on a TTY', () => {
    const { writes, output } = capture(true);
    let now = 0;
    const bar = createProgressBar({ label: 'model.gguf', output, now: () => now });
    for (let step = 0; step <= 100; step += 1) {
      now = step * 10;
      bar.update({
        receivedBytes: step * 1024 * 1024,
        totalBytes: 100 * 1024 * 1024,
        bytesPerSecond: 1024 * 1024,
      });
    }
    bar.finish();

    expect(writes.length).toBeLessThanOrEqual(13);
    expect(writes.every((text) => text === '\n' || text.startsWith('\r'))).toBe(true);
    expect(writes.at(-2)).toContain('100%  100.0/100.0 MiB  1.0 MiB/s  ETA 0:00');
    expect(writes.at(-1)).toBe('\n');
  });

  it('writes a plain line per 10% when the output is not a TTY', () => {
    const { writes, output } = capture(false);
    const bar = createProgressBar({ label: 'model.gguf', output, now: () => 0 });
    for (let step = 0; step <= 100; step += 1) {
      bar.update({ receivedBytes: step, totalBytes: 100, bytesPerSecond: 0 });
    }
    bar.finish();

    expect(writes).toHaveLength(11);
    expect(writes.every((text) => text.endsWith('\n') && !text.includes('\r'))).toBe(true);
    expect(writes[5]).toContain('model.gguf:  50%');
  });

  it('formats the bar and durations', () => {
    const line = renderBar('m', { receivedBytes: 50, totalBytes: 100, bytesPerSecond: 10 }, 80);
    expect(line).toMatch(/^m \[#+-+\] {2}50% /);
    expect(formatDuration(5)).toBe('0:05');
    expect(formatDuration(3725)).toBe('1:02:05');
  });
});

async function writePartial(bytes: Buffer): Promise<void> {
  await mkdir(path.dirname(destination), { recursive: true });
  await writeFile(`${destination}.partial`, bytes);
}
