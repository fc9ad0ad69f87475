// Reading a streamed Chat Completions answer for the lean OpenAI path
// (./openai-compatible-chat-model.ts): the text the socket delivers is split into SSE lines as it
// comes (a long line is never rescanned nor buffered past a bound), `data:` lines gather into
// events, and each chat.completion.chunk gives its parts as they come — text deltas (with their
// logprobs), refusal deltas, tool-call deltas in OpenAI's own shape — and its finish reason, usage
// and system fingerprint, the shape checked by hand.
import { JSONParseError } from '@ai-sdk/provider';
import {
  contentText,
  finishReasonOf,
  invalidShape,
  isObject,
  noUsage,
  optionalString,
  usageOf,
  type UsageCounts,
} from './openai-compatible-wire.js';
import type { FinishReason, StreamPart } from '../spec.js';
import { SseData, SseLines } from './sse-lines.js';

/** Longest line of a streamed answer; a longer one is an invalid chunk (it is never buffered whole). */
export { maxStreamLineChars } from './sse-lines.js';

/** The parts a chunk gives before the finish (text, refusal, tool-call deltas). */
export type AnswerPart = Exclude<StreamPart, { type: 'finish' } | { type: 'relayed' }>;

/** What the stream parser took from the events so far. */
interface StreamState {
  finishRaw: unknown;
  usage: UsageCounts;
  systemFingerprint: string | undefined;
  /** An event that could not be read: raised once the parts before it have been passed on. */
  failure: Error | null;
}

/** One streamed answer, read piece by piece as the socket delivers its text. */
export class CompletionStreamReader {
  private readonly state: StreamState = {
    finishRaw: undefined,
    usage: noUsage,
    systemFingerprint: undefined,
    failure: null,
  };
  /** The start of a line not ended yet (it holds no line end). */
  private readonly lines = new SseLines();
  private readonly events = new SseData();

  /**
   * The parts of the events this piece completed. Throws when a line grows past
   * `maxStreamLineChars`; an event that could not be read is kept for `throwIfFailed`, so that
   * the parts before it are passed on first.
   */
  read(piece: string): AnswerPart[] {
    const parts: AnswerPart[] = [];
    const { state } = this;
    this.lines.split(
      piece,
      (line) => this.readLine(line, parts),
      () => state.failure === null,
    );
    return parts;
  }

  /** The parts of the last event: one not followed by a blank line still counts. */
  end(): AnswerPart[] {
    const parts: AnswerPart[] = [];
    this.lines.end((line) => this.readLine(line, parts));
    return parts;
  }

  /** Raises the event that could not be read, if one could not. */
  throwIfFailed(): void {
    if (this.state.failure !== null) throw this.state.failure;
  }

  /** The finish reason the events gave (null: none did). */
  finishReason(): FinishReason | null {
    const { finishRaw } = this.state;
    return finishRaw === undefined || finishRaw === null ? null : finishReasonOf(finishRaw);
  }

  /** The usage the last event carrying one reported (undefined fields: not reported). */
  get usage(): UsageCounts {
    return this.state.usage;
  }

  /** The last `system_fingerprint` a chunk carried. */
  get systemFingerprint(): string | undefined {
    return this.state.systemFingerprint;
  }

  /** One SSE line: `data:` lines gather into the event a blank line ends. */
  private readLine(line: string, parts: AnswerPart[]): void {
    const { state } = this;
    const data = this.events.line(line);
    if (data === null || data === '[DONE]' || state.failure !== null) return;
    try {
      this.readEvent(data, parts);
    } catch (error) {
      state.failure = error as Error;
    }
  }

  /**
   * One event's data (a chat.completion.chunk's JSON): its parts added to `parts`, its finish
   * reason, usage and fingerprint kept. Throws when it cannot be read.
   */
  readEvent(data: string, parts: AnswerPart[]): void {
    const { state } = this;
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch (cause) {
      throw new JSONParseError({ text: data, cause });
    }
    if (!isObject(event)) throw invalidShape(event, 'not a chat.completion.chunk');
    if (isObject(event.error)) {
      throw new Error(`The provider reported an error mid-stream.`, { cause: event.error });
    }
    const { choices } = event;
    const usage = usageOf(event.usage);
    const fingerprint = optionalString(event.system_fingerprint);
    if (!Array.isArray(choices) || usage === null || fingerprint === null) {
      throw invalidShape(event, 'not a chat.completion.chunk');
    }
    if (event.usage !== undefined && event.usage !== null) state.usage = usage;
    if (fingerprint !== undefined) state.systemFingerprint = fingerprint;
    const choice: unknown = choices[0];
    if (choice === undefined) return;
    if (!isObject(choice)) throw invalidShape(event, 'not a chat.completion.chunk');
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
      if (typeof choice.finish_reason !== 'string') {
        throw invalidShape(event, 'finish_reason is not a string');
      }
      state.finishRaw = choice.finish_reason;
    }
    const delta = choice.delta;
    if (delta === undefined || delta === null) return;
    if (!isObject(delta)) throw invalidShape(event, 'delta is not an object');
    const content = contentText(delta.content);
    if (content === undefined) throw invalidShape(event, 'content is not text');
    if (content !== '') {
      const logprobs = choice.logprobs;
      parts.push(
        logprobs === undefined || logprobs === null
          ? { type: 'text', text: content }
          : { type: 'text', text: content, logprobs },
      );
    }
    const refusal = optionalString(delta.refusal);
    if (refusal === null) throw invalidShape(event, 'refusal is not a string');
    if (refusal !== undefined && refusal !== '') parts.push({ type: 'refusal', text: refusal });
    if (delta.tool_calls !== undefined && delta.tool_calls !== null) {
      this.readToolCalls(event, delta.tool_calls, parts);
    }
  }

  /** A delta's `tool_calls`: one part per entry, as it came (its index, id and name when given). */
  private readToolCalls(event: unknown, calls: unknown, parts: AnswerPart[]): void {
    if (!Array.isArray(calls)) throw invalidShape(event, 'tool_calls is not a list');
    for (const [position, call] of (calls as unknown[]).entries()) {
      if (!isObject(call)) throw invalidShape(event, 'a tool call is not an object');
      // A server that streams one call per chunk without an index: its place in the list.
      const index = call.index ?? position;
      const id = optionalString(call.id);
      const fn = call.function ?? undefined;
      if (!Number.isInteger(index) || id === null || (fn !== undefined && !isObject(fn))) {
        throw invalidShape(event, 'a tool call is not in its shape');
      }
      const name = fn === undefined ? undefined : optionalString(fn.name);
      const args = fn === undefined ? undefined : optionalString(fn.arguments);
      if (name === null || args === null) {
        throw invalidShape(event, 'a tool call is not in its shape');
      }
      parts.push({ type: 'tool-call', index: index as number, id, name, arguments: args ?? '' });
    }
  }
}
