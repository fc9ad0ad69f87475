// The HTTP side of a model download: requests with deadlines, headers, and the Hub's file metadata.
import type { DownloadContext, ResolvedSource } from './download-context.js';
import {
  classifyRequestError,
  httpFailure,
  ModelDownloadError,
  TimeoutMarker,
} from './download-errors.js';
import { sha256FromEtag } from './model-source.js';

/** Restarts on every chunk; fires when the body delivers nothing for the stall timeout. */
export interface StallTimer {
  start(): void;
  stop(): void;
}

export interface SentRequest {
  response: Response;
  /** Detaches the caller's signal and timers; call once the body is consumed or cancelled. */
  release: () => void;
  stallTimer: StallTimer;
}

/** fetch with a deadline for the response headers and an abort for a stalled body. */
export async function sendRequest(
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

/*
 * The expected digest comes from a HEAD on the file's `resolve` URL without following the redirect
 * to the CDN, reading `X-Linked-Etag` (the LFS object id, i.e. the file's sha256) and
 * `X-Linked-Size`. This is how both official clients fetch file metadata (huggingface_hub's
 * get_hf_file_metadata, huggingface.js's fileDownloadInfo); it costs one small request for exactly
 * this file, whereas the tree API lists a whole directory and is paginated. The headers sit on the
 * Hub's own 302 answer: after the redirect they would describe the CDN object instead. Files not
 * stored in LFS carry a git blob sha1 as ETag; that is not a sha256, so such files go unverified.
 */
export async function fetchHubFileMetadata(
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

export function requestHeaders(
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

export function authorizationFor(
  resolved: ResolvedSource,
  token: string | undefined,
): string | null {
  // A Hub token is only for the Hub: a plain URL elsewhere must not receive it.
  if (!token || resolved.huggingFace === null) return null;
  return `Bearer ${token}`;
}

function sameOrigin(first: string, second: string): boolean {
  return new URL(first).origin === new URL(second).origin;
}

export function parseContentRange(
  value: string | null,
): { start: number; end: number | null; total: number | null } | null {
  const match = value === null ? null : /^bytes (?:(\d+)-(\d+)|\*)\/(\d+|\*)$/.exec(value.trim());
  if (!match) return null;
  const total = match[3] === '*' || match[3] === undefined ? null : Number(match[3]);
  if (match[1] === undefined) return { start: 0, end: null, total };
  return { start: Number(match[1]), end: Number(match[2]), total };
}

export function parseSize(value: string | null): number | null {
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : null;
}
