// The fetch an MCP session's SDK Client uses: the policy fetch, with every answer read within
// bounds before the SDK sees it. The SDK reads a whole body and parses it (JSON.parse, then zod) on
// the event loop, so a server answering 30 MB would hold the loop for a second and the memory for
// longer. Here a body is read up to `tools.max_response_bytes`, then no further (the rest is not
// read and the call fails with the limit named); an answer larger than 64 KiB, or one event of an
// event stream that large, is parsed in the text worker threads and written again small there
// (mcp-messages.ts), and the SDK gets that instead; an error body is read up to 4 KiB.
import { randomUUID } from 'node:crypto';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../../errors/app-error.js';
import { PolicyFetchError, type FetchFunction } from '../../net/policy-fetch.js';
import type { TextPool } from '../../text-pool/text-pool.js';
import { TextTaskLimitError } from '../../text-pool/text-pool.js';
import { ByteBlocks, EventBoundaries } from './answer-bytes.js';

/** Answers (and events) up to this size are handed to the SDK as they are. */
export const inlineAnswerBytes = 64 * 1024;
/** What is read of an error answer (its text only ever shows in a short message). */
const maxErrorBodyBytes = 4096;

export interface AnswerBounds {
  /** `tools.max_response_bytes`: one answer's body, or one event of a long-lived stream. */
  maxResponseBytes: number;
  /** `tools.max_result_chars`: what a call's text is cut to. */
  maxResultChars: number;
  text: TextPool;
}

/** Why an answer was not handed to the SDK, carried by the McpError the call fails with. */
export interface AnswerRefusal {
  reason: 'too_large' | 'unreadable';
  /** The limit passed (too_large), or what went wrong (unreadable). */
  detail: string;
  /** A long-lived stream was cut: every call waiting on the session fails with this. */
  streamCut: boolean;
}

/** Tells this process's refusals from a server's error that imitates one. */
const refusalMark = randomUUID();

export function refusalError(refusal: AnswerRefusal): McpError {
  return new McpError(ErrorCode.InternalError, refusal.detail, { refusalMark, ...refusal });
}

/** The refusal an error of the SDK carries, if it is one of ours. */
export function refusalOf(error: unknown): AnswerRefusal | null {
  if (!(error instanceof McpError)) return null;
  const data = error.data as (AnswerRefusal & { refusalMark?: unknown }) | undefined;
  if (data?.refusalMark !== refusalMark) return null;
  return { reason: data.reason, detail: data.detail, streamCut: data.streamCut };
}

/** The JSON-RPC error answer the SDK reads for request `id` instead of the server's. */
function refusalMessage(id: number | string, refusal: AnswerRefusal): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: {
      code: ErrorCode.InternalError,
      message: refusal.detail,
      data: { refusalMark, ...refusal },
    },
  });
}

/**
 * The id of the request a POST carries (the SDK writes `{…, "jsonrpc": "2.0", "id": n}`), if it
 * carries one; read without parsing the arguments, which may be large.
 */
function requestIdOf(body: unknown): number | string | undefined {
  if (typeof body !== 'string') return undefined;
  const tail = /"id":(-?\d{1,15}|"[^"\\]{0,200}")\}\s*$/.exec(body.slice(-256));
  if (tail !== null) return JSON.parse(tail[1]!) as number | string;
  if (body.length > inlineAnswerBytes) return undefined;
  try {
    const message = JSON.parse(body) as { id?: unknown; method?: unknown } | null;
    const id = message?.id;
    return typeof message?.method === 'string' && (typeof id === 'number' || typeof id === 'string')
      ? id
      : undefined;
  } catch {
    return undefined;
  }
}

function mediaTypeOf(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/** A response like `response` with another body (its length no longer the server's). */
function withBody(
  response: Response,
  body: ConstructorParameters<typeof Response>[0],
  headers: Record<string, string> = {},
): Response {
  const kept = new Headers(response.headers);
  kept.delete('content-length');
  kept.delete('content-encoding');
  for (const [name, value] of Object.entries(headers)) kept.set(name, value);
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: kept,
  });
}

/** Reads a body up to `limit` bytes, then stops reading it; `over` tells whether it had more. */
async function readUpTo(
  body: ReadableStream<Uint8Array>,
  limit: number,
): Promise<{ parts: Uint8Array[]; bytes: number; over: boolean }> {
  const reader = body.getReader();
  const gathered = new ByteBlocks();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        const bytes = gathered.bytes;
        return { parts: gathered.take(), bytes, over: false };
      }
      if (gathered.bytes + value.byteLength > limit) return { parts: [], bytes: 0, over: true };
      gathered.push(value);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** A large answer reduced in the text threads, or why it could not be, in words fit to show. */
async function reduced(
  bounds: AnswerBounds,
  parts: Uint8Array[],
  kind: 'json' | 'event',
  signal: AbortSignal | undefined,
): Promise<{ ok: true; text: string } | { ok: false; problem: string }> {
  try {
    return await bounds.text.mcpAnswer(
      { parts, kind, maxResultChars: bounds.maxResultChars },
      signal,
    );
  } catch (error) {
    if (signal?.aborted === true) throw error;
    if (error instanceof TextTaskLimitError) {
      return { ok: false, problem: 'reading it went past the text workers’ limits' };
    }
    if (error instanceof AppError && error.code === 'service_unavailable') {
      return { ok: false, problem: 'the text workers are busy; try again in a moment' };
    }
    return { ok: false, problem: 'it could not be read' };
  }
}

export interface BoundedFetchHooks {
  /** A long-lived stream (the answers of the older SSE transport) was cut. */
  onStreamCut(refusal: AnswerRefusal): void;
}

/** `fetch` with every answer bounded as this file's head says. */
export function boundedMcpFetch(
  fetch: FetchFunction,
  bounds: AnswerBounds,
  hooks: BoundedFetchHooks,
): FetchFunction {
  const tooLarge = (streamCut: boolean): AnswerRefusal => ({
    reason: 'too_large',
    detail: String(bounds.maxResponseBytes),
    streamCut,
  });
  return async (input, init) => {
    const response = await fetch(input, init);
    const body = response.body as ReadableStream<Uint8Array> | null;
    if (body === null) return response;
    const signal = init?.signal ?? undefined;
    if (!response.ok) {
      const { parts, over } = await readUpTo(body, maxErrorBodyBytes);
      return withBody(response, over ? 'the answer was too long to read' : Buffer.concat(parts));
    }
    const id = requestIdOf(init?.body);
    const isPost = (init?.method ?? 'GET').toUpperCase() === 'POST';
    // A POST of a notification: the SDK drops its answer unread.
    if (isPost && id === undefined) return response;
    if (mediaTypeOf(response) === 'text/event-stream') {
      return withBody(response, boundedEvents(body, { id, bounds, hooks, signal, tooLarge }));
    }
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    const read =
      declared > bounds.maxResponseBytes
        ? await body.cancel().then(() => ({ parts: [], bytes: 0, over: true }))
        : await readUpTo(body, bounds.maxResponseBytes);
    const refuse = (refusal: AnswerRefusal): Response => {
      if (id === undefined) throw refusalError(refusal);
      return withBody(response, refusalMessage(id, refusal), {
        'content-type': 'application/json',
      });
    };
    if (read.over) return refuse(tooLarge(false));
    if (read.bytes <= inlineAnswerBytes) return withBody(response, Buffer.concat(read.parts));
    const small = await reduced(bounds, read.parts, 'json', signal);
    if (!small.ok) return refuse({ reason: 'unreadable', detail: small.problem, streamCut: false });
    return withBody(response, small.text);
  };
}

interface StreamContext {
  /** The request a POST's stream answers; undefined for a long-lived GET stream. */
  id: number | string | undefined;
  bounds: AnswerBounds;
  hooks: BoundedFetchHooks;
  signal: AbortSignal | undefined;
  tooLarge(streamCut: boolean): AnswerRefusal;
}

/**
 * An event stream handed on event by event: small events as they came, a large one reduced in
 * the text threads, none past the limit — a POST's stream within it in all (then the request
 * gets the refusal as its answer), a long-lived stream each event within it (else it is cut).
 */
function boundedEvents(
  body: ReadableStream<Uint8Array>,
  context: StreamContext,
): ReadableStream<Uint8Array> {
  const events = new BoundedEvents(body.getReader(), context);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Until something is handed on: a pull that enqueues nothing is not called again.
      while (!(await events.step(controller)));
    },
    async cancel(reason) {
      await events.cancel(reason);
    },
  });
}

type Controller = ReadableStreamDefaultController<Uint8Array>;

/** The reading side of `boundedEvents`: one chunk of the upstream stream at a time. */
class BoundedEvents {
  private readonly boundaries = new EventBoundaries();
  private readonly encoder = new TextEncoder();
  /** The current event's bytes so far (it has not ended yet). */
  private readonly pending = new ByteBlocks();
  /** A POST's bytes in all. */
  private total = 0;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly context: StreamContext,
  ) {}

  async cancel(reason: unknown): Promise<void> {
    await this.reader.cancel(reason).catch(() => undefined);
  }

  /**
   * Reads one chunk and hands on the events it ends: runs of small events as one piece, a large
   * one reduced. Answers whether anything was handed on, or the stream ended (true).
   */
  async step(controller: Controller): Promise<boolean> {
    const { id, bounds } = this.context;
    let read: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>;
    try {
      read = await this.reader.read();
    } catch (error) {
      // The policy fetch's own bound on a stream's whole life: the same refusal.
      if (!(error instanceof PolicyFetchError && error.reason === 'too_large')) throw error;
      this.fail(controller, this.context.tooLarge(id === undefined));
      return true;
    }
    const { done, value } = read;
    if (done) {
      await this.end(controller);
      return true;
    }
    this.total += value.byteLength;
    if (id !== undefined && this.total > bounds.maxResponseBytes) {
      this.fail(controller, this.context.tooLarge(false));
      return true;
    }
    return this.handOn(controller, value);
  }

  /** What is left is handed on as it is (the SDK's parser drops an unended event). */
  private async end(controller: Controller): Promise<void> {
    if (this.pending.bytes <= inlineAnswerBytes) {
      for (const part of this.pending.take()) controller.enqueue(part);
      controller.close();
    } else if (await this.handOnLarge(controller, this.pending.take())) {
      controller.close();
    }
  }

  /** Hands on the events `value` ends; true when something was handed on or the stream failed. */
  private async handOn(controller: Controller, value: Uint8Array): Promise<boolean> {
    const { id, bounds } = this.context;
    const { pending } = this;
    let handed = false;
    /** Where the run of small events not yet handed on starts in this chunk. */
    let run = 0;
    let start = 0;
    for (const end of this.boundaries.ends(value)) {
      const bytes = pending.bytes + end - start;
      if (bytes > bounds.maxResponseBytes) {
        this.fail(controller, this.context.tooLarge(id === undefined));
        return true;
      }
      if (bytes <= inlineAnswerBytes) {
        // Only the chunk's first event can have begun in an earlier chunk.
        for (const part of pending.take()) controller.enqueue(part);
      } else {
        if (start > run) controller.enqueue(value.subarray(run, start));
        pending.push(value.subarray(start, end));
        if (!(await this.handOnLarge(controller, pending.take()))) return true;
        run = end;
      }
      handed = true;
      start = end;
    }
    if (start > run) controller.enqueue(value.subarray(run, start));
    if (start < value.byteLength) {
      pending.push(value.subarray(start));
      if (pending.bytes > bounds.maxResponseBytes) {
        this.fail(controller, this.context.tooLarge(id === undefined));
        return true;
      }
    }
    return handed;
  }

  /** Hands on one large event reduced (or nothing, when it is left out); false when it failed. */
  private async handOnLarge(controller: Controller, parts: Uint8Array[]): Promise<boolean> {
    const { id, bounds, signal } = this.context;
    const small = await reduced(bounds, parts, 'event', signal);
    if (!small.ok) {
      this.fail(controller, {
        reason: 'unreadable',
        detail: small.problem,
        streamCut: id === undefined,
      });
      return false;
    }
    if (small.text !== '') controller.enqueue(this.encoder.encode(small.text));
    return true;
  }

  private fail(controller: Controller, refusal: AnswerRefusal): void {
    const { id, hooks } = this.context;
    void this.reader.cancel().catch(() => undefined);
    if (id !== undefined) {
      controller.enqueue(
        this.encoder.encode(`event: message\ndata: ${refusalMessage(id, refusal)}\n\n`),
      );
      controller.close();
      return;
    }
    hooks.onStreamCut(refusal);
    controller.error(refusalError(refusal));
  }
}
