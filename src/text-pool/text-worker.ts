// The text worker thread's tasks (run by Piscina): every parse of client text whose time grows
// with its size and shape (Markdown lexing, HTML parsing, Readability, chunking) runs here, so
// that the event loop never waits for it. Each task first says it has started, so that the pool's
// deadline counts its own running time, not its wait in the queue.
import type { MessagePort } from 'node:worker_threads';
import { chunkDocument, TooManyChunksError } from '../modules/knowledge/chunker.js';
import { buildLayout, type Layout, type LayoutRequest } from '../modules/layout/layout-engine.js';
import {
  extractPage,
  type ExtractedPage,
  type ExtractOptions,
} from '../modules/agents/web/extract-page.js';
import type { DocumentContentType } from '../text/extract-text.js';
import {
  runStructureEngine,
  type StructureEngineOptions,
  type StructureResult,
} from '../modules/agents/structure/engine.js';
import { AppError } from '../errors/app-error.js';
import { parseLargeBody } from '../validation/input-values.js';
import { detectEntities, prepareEntityDetection, type Entity } from '../text/entities.js';
import { parseReasoningText, type ReasoningAnswer } from '../text/reasoning-text.js';
import { summarize, type ExtractiveSummary, type SummarizeOptions } from '../text/textrank.js';
import {
  reduceMcpAnswer,
  type McpAnswerReduced,
  type McpAnswerTask,
} from '../modules/tools/mcp-messages.js';

/** What every task receives: its input, and the port it announces its start on. */
export interface TaskEnvelope<T> {
  input: T;
  started: MessagePort;
}

/** Errors cross the thread boundary as data: their class does not survive structured cloning. */
export type TaskResult<T> =
  | { ok: true; value: T }
  | { ok: false; kind: 'too_many_chunks'; maxChunks: number; message: string }
  /** The client's mistake, told as the contract's 400 (the structure engine names the field). */
  | { ok: false; kind: 'invalid_parameter'; param: string | null; message: string }
  | { ok: false; kind: 'invalid_json'; message: string }
  | { ok: false; kind: 'failure'; message: string };

function settle<I, T>(task: TaskEnvelope<I>, work: (input: I) => T): TaskResult<T> {
  task.started.postMessage('started');
  try {
    return { ok: true, value: work(task.input) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof TooManyChunksError) {
      return { ok: false, kind: 'too_many_chunks', maxChunks: error.maxChunks, message };
    }
    if (error instanceof AppError && error.code === 'invalid_parameter') {
      return { ok: false, kind: 'invalid_parameter', param: error.param, message };
    }
    if (error instanceof AppError && error.code === 'invalid_json') {
      return { ok: false, kind: 'invalid_json', message };
    }
    return { ok: false, kind: 'failure', message };
  }
}

export function layout(task: TaskEnvelope<LayoutRequest>): TaskResult<Layout> {
  return settle(task, buildLayout);
}

export interface ChunkTask {
  content: string;
  contentType: DocumentContentType;
  chunkSize: number;
  chunkOverlap: number;
  maxChunks: number;
}

/** A chunked document as the service stores it (the blocks stay in the worker). */
export interface ChunkedText {
  title: string | null;
  text: string;
  chunks: { position: number; heading: string; text: string }[];
}

export function chunk(task: TaskEnvelope<ChunkTask>): TaskResult<ChunkedText> {
  return settle(task, (input) => {
    const chunked = chunkDocument(input.content, input.contentType, input);
    return { title: chunked.title, text: chunked.text, chunks: [...chunked.chunks] };
  });
}

export interface PageTask {
  body: string;
  url: string;
  options: ExtractOptions;
}

export function page(task: TaskEnvelope<PageTask>): TaskResult<ExtractedPage> {
  return settle(task, (input) => extractPage(input.body, input.url, input.options));
}

export interface StructureTask {
  data: unknown;
  parameters: unknown;
  options: StructureEngineOptions;
}

/** The StructureAgent's engine over large data (tens of thousands of rows). */
export function structure(task: TaskEnvelope<StructureTask>): TaskResult<StructureResult> {
  return settle(task, (input) => runStructureEngine(input.data, input.parameters, input.options));
}

export interface EntitiesTask {
  message: string;
  /** ISO 8601: relative dates are read from it. */
  now: string;
}

/** Every entity of a message, names included (compromise's tagger is the costly step). */
export function entities(task: TaskEnvelope<EntitiesTask>): TaskResult<Entity[]> {
  // Before the task says it started: the one-time load is not the message's to pay within its
  // deadline (on a busy machine it alone took longer than the 2 s a short message is given).
  prepareEntityDetection();
  return settle(task, (input) =>
    detectEntities(input.message, new Date(input.now), { names: true }),
  );
}

/** A model's plain-text reasoning read as steps and a conclusion (its Markdown lexed). */
export function reasoningText(
  task: TaskEnvelope<{ text: string; markdown: boolean }>,
): TaskResult<ReasoningAnswer> {
  return settle(task, (input) => parseReasoningText(input.text, { markdown: input.markdown }));
}

export interface SummarizeTask {
  text: string;
  options: SummarizeOptions;
}

/** TextRank's extractive summary. */
export function extractiveSummary(
  task: TaskEnvelope<SummarizeTask>,
): TaskResult<ExtractiveSummary> {
  return settle(task, (input) => summarize(input.text, input.options));
}

/** A request body too large to parse on the event loop, parsed and checked here. */
export function json(task: TaskEnvelope<Uint8Array>): TaskResult<unknown> {
  return settle(task, (bytes) =>
    parseLargeBody(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')),
  );
}

/** A large answer of an MCP server (a JSON body, or one event), parsed and written again small. */
export function mcpAnswer(task: TaskEnvelope<McpAnswerTask>): TaskResult<McpAnswerReduced> {
  return settle(task, reduceMcpAnswer);
}
