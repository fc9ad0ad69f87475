// The text worker threads (Piscina): layouts from Markdown, text extraction and chunking of
// knowledge documents, and the reading of web pages run there, so that no client text blocks the
// event loop whatever its content. Each task has a deadline that grows with its input and counts
// from the moment a thread starts it; past it the thread is terminated (Piscina's abort) and the
// caller gets a 400 naming the field. A bounded queue answers 503 with Retry-After when full.
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import type { AppConfig } from '../config/config.js';
import { AppError } from '../errors/app-error.js';
import type { Layout, LayoutRequest } from '../modules/layout/layout-engine.js';
import type { ExtractedPage, ExtractOptions } from '../modules/agents/web/extract-page.js';
import { RequestAbortedError } from '../models/spec.js';
import { bundleDirectory, packageRoot } from '../runtime-paths.js';
import type { StructureResult } from '../modules/agents/structure/engine.js';
import type { Entity } from '../text/entities.js';
import type { TextWork } from '../modules/agents/agent-type.js';
import type { ReasoningAnswer } from '../text/reasoning-text.js';
import type { McpAnswerReduced, McpAnswerTask } from '../modules/tools/mcp-messages.js';
import type { ExtractiveSummary, SummarizeOptions } from '../text/textrank.js';
import type {
  ChunkedText,
  ChunkTask,
  EntitiesTask,
  StructureTask,
  SummarizeTask,
  TaskResult,
} from './text-worker.js';

export type TextPoolSettings = AppConfig['text'];

/** The worker's module: the built `.js`, or under tsx and vitest a loader of the `.ts` source. */
function workerFile(): string {
  return bundleDirectory === null
    ? path.join(packageRoot, 'src', 'text-pool', 'text-worker-dev.js')
    : path.join(bundleDirectory, 'text-pool', 'text-worker.js');
}

const mebibyte = 1024 * 1024;

/** What a task is about, for the error its deadline gives. */
interface TaskSubject {
  /** The request field that carried the text (the error's `param`). */
  param: string;
  /** Says what took too long, e.g. "The Markdown of 'message'". */
  what: string;
  /** The input's size in characters (the deadline grows with it). */
  characters: number;
}

/** A task that ran past its deadline, or that needed more memory than a text thread may take. */
export class TextTaskLimitError extends AppError {
  constructor(subject: TaskSubject, reason: string) {
    super(
      'invalid_parameter',
      `${subject.what} ${reason}; it is refused rather than left to hold the service. Shorten it or simplify its structure (nesting, unclosed markup, long runs of * _ < [ characters).`,
      { param: subject.param },
    );
    this.name = 'TextTaskLimitError';
  }
}

/** The queue of text tasks is full. */
const busy = () =>
  new AppError(
    'service_unavailable',
    'The text workers are busy (their queue is full); retry in a moment.',
    { headers: { 'retry-after': '1' } },
  );

/** Read through a function: TypeScript would take an earlier check's answer for the current one. */
const clientGone = (signal: AbortSignal | undefined) => signal?.aborted === true;

export class TextPool {
  private pool: Piscina | undefined;
  /** Tasks running or waiting. Piscina's own `maxQueue` does not count tasks with a signal. */
  private inFlight = 0;

  constructor(private readonly settings: TextPoolSettings) {}

  /** The task's deadline: `timeoutMs`, plus `timeoutMsPerMib` for each MiB of its input. */
  deadlineMs(characters: number): number {
    return Math.round(
      this.settings.timeoutMs + (this.settings.timeoutMsPerMib * characters) / mebibyte,
    );
  }

  layout(request: LayoutRequest, signal?: AbortSignal): Promise<Layout> {
    return this.run<LayoutRequest, Layout>(
      'layout',
      request,
      {
        param: 'message',
        what: "The Markdown of 'message'",
        characters: request.message.length,
      },
      signal,
    );
  }

  chunk(task: ChunkTask, signal?: AbortSignal): Promise<ChunkedText> {
    const kind = task.contentType.slice('text/'.length);
    return this.run<ChunkTask, ChunkedText>(
      'chunk',
      task,
      {
        param: 'content',
        what: `The ${kind === 'plain' ? 'text' : kind === 'html' ? 'HTML' : 'Markdown'} of 'content'`,
        characters: task.content.length,
      },
      signal,
    );
  }

  page(
    body: string,
    url: string,
    options: ExtractOptions,
    signal?: AbortSignal,
  ): Promise<ExtractedPage> {
    return this.run<{ body: string; url: string; options: ExtractOptions }, ExtractedPage>(
      'page',
      { body, url, options },
      { param: 'urls', what: `The page at ${url}`, characters: body.length },
      signal,
    );
  }

  /**
   * A large request body, decoded, parsed and checked (input-safety.ts) in these threads. Its
   * bytes are moved there, not copied: the caller must not use `body` afterwards.
   */
  json(body: Uint8Array): Promise<unknown> {
    const movable = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    return this.run<Uint8Array, unknown>(
      'json',
      body,
      { param: 'body', what: 'The request body', characters: body.byteLength },
      undefined,
      movable ? [body.buffer as ArrayBuffer] : [],
    );
  }

  /**
   * A large answer of an MCP server parsed and written again small (mcp-messages.ts). The
   * memory of its parts is moved there, not copied: the caller must not use them afterwards.
   */
  mcpAnswer(task: McpAnswerTask, signal?: AbortSignal): Promise<McpAnswerReduced> {
    const buffers = new Set(task.parts.map((part) => part.buffer as ArrayBuffer));
    const characters = task.parts.reduce((sum, part) => sum + part.byteLength, 0);
    return this.run<McpAnswerTask, McpAnswerReduced>(
      'mcpAnswer',
      task,
      { param: 'tools', what: "An MCP server's answer", characters },
      signal,
      [...buffers],
    );
  }

  /** Agents' text work (ReasoningAgent's plain-text reading, TextRank), in these threads. */
  get agentTextWork(): TextWork {
    return {
      reasoningText: async (text) => {
        const read = (markdown: boolean) =>
          this.run<{ text: string; markdown: boolean }, ReasoningAnswer>(
            'reasoningText',
            { text, markdown },
            { param: 'query', what: "The model's answer", characters: text.length },
            undefined,
          );
        try {
          return await read(true);
        } catch (error) {
          // Markdown that takes too long to lex (model output a client may shape) is read as
          // plain lines instead: the run still answers.
          if (!(error instanceof TextTaskLimitError)) throw error;
          return read(false);
        }
      },
      summarize: (text: string, options: SummarizeOptions) =>
        this.run<SummarizeTask, ExtractiveSummary>(
          'extractiveSummary',
          { text, options },
          { param: 'query', what: "The text of 'query'", characters: text.length },
          undefined,
        ),
    };
  }

  /** The entities of a message to classify, names included. */
  entities(message: string, now: Date, signal?: AbortSignal): Promise<Entity[]> {
    return this.run<EntitiesTask, Entity[]>(
      'entities',
      { message, now: now.toISOString() },
      { param: 'message', what: "Reading 'message'", characters: message.length },
      signal,
    );
  }

  /** The StructureAgent's engine: `size` is the data's size in characters (or rows × 64). */
  structure(task: StructureTask, size: number, signal?: AbortSignal): Promise<StructureResult> {
    return this.run<StructureTask, StructureResult>(
      'structure',
      task,
      { param: task.options.dataPath ?? 'data', what: "Processing 'data'", characters: size },
      signal,
    );
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
  }

  /**
   * Piscina is loaded, and the first thread started, on first use: most instances never parse a
   * document, and each thread holds its own heap. One thread stays from then on (Piscina replaces
   * a thread stopped at a deadline only up to `minThreads`, and tasks queued behind it need one);
   * the others stop after a minute idle.
   */
  private async piscina(): Promise<Piscina> {
    if (this.pool === undefined) {
      const { Piscina: Pool } = await import('piscina');
      this.pool ??= new Pool({
        filename: workerFile(),
        minThreads: 1,
        maxThreads: this.settings.workerThreads,
        maxQueue: this.settings.maxQueue,
        idleTimeout: 60_000,
        resourceLimits: { maxOldGenerationSizeMb: this.settings.maxHeapMb },
      });
    }
    return this.pool;
  }

  private async run<I, T>(
    name: string,
    input: I,
    subject: TaskSubject,
    signal: AbortSignal | undefined,
    transfer: ArrayBuffer[] = [],
  ): Promise<T> {
    if (signal?.aborted === true) throw new RequestAbortedError();
    if (this.inFlight >= this.settings.workerThreads + this.settings.maxQueue) throw busy();
    this.inFlight += 1;
    try {
      return await this.runInThread<I, T>(name, input, subject, signal, transfer);
    } finally {
      this.inFlight -= 1;
    }
  }

  private async runInThread<I, T>(
    name: string,
    input: I,
    subject: TaskSubject,
    signal: AbortSignal | undefined,
    transfer: ArrayBuffer[],
  ): Promise<T> {
    const pool = await this.piscina();
    const deadlineMs = this.deadlineMs(subject.characters);
    const deadline = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    // The worker says when it starts the task; the deadline runs from then.
    const { port1, port2 } = new MessageChannel();
    port1.once('message', () => {
      timer = setTimeout(() => deadline.abort(), deadlineMs);
      port1.close();
    });
    port1.unref();
    let result: TaskResult<T>;
    try {
      result = (await pool.run(
        { input, started: port2 },
        {
          name,
          transferList: [port2, ...transfer],
          signal:
            signal === undefined ? deadline.signal : AbortSignal.any([signal, deadline.signal]),
        },
      )) as TaskResult<T>;
    } catch (error) {
      if (deadline.signal.aborted) {
        throw new TextTaskLimitError(subject, `took longer than ${deadlineMs} ms to read`);
      }
      if (clientGone(signal)) throw new RequestAbortedError();
      const code = (error as { code?: unknown }).code;
      if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new TextTaskLimitError(
          subject,
          `needed more than ${this.settings.maxHeapMb} MiB of memory to read`,
        );
      }
      if (error instanceof Error && /queue is at limit|no task queue/i.test(error.message)) {
        throw busy();
      }
      throw error;
    } finally {
      clearTimeout(timer);
      port1.close();
    }
    if (result.ok) return result.value;
    if (result.kind === 'too_many_chunks') {
      throw new AppError(
        'invalid_parameter',
        `The ${subject.what.replace(/^The /, '')} splits into more than ${result.maxChunks} chunks, the most one document may make (each section under a heading makes at least one). Split it into several documents.`,
        { param: subject.param },
      );
    }
    if (result.kind === 'invalid_parameter') {
      throw new AppError('invalid_parameter', result.message, { param: result.param });
    }
    if (result.kind === 'invalid_json') throw new AppError('invalid_json', result.message);
    throw new Error(`text worker task '${name}' failed: ${result.message}`);
  }
}
