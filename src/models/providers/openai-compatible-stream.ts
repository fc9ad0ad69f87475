// Reading a streamed Chat Completions answer for the lean OpenAI-compatible path
// (./openai-compatible-chat-model.ts): the text the socket delivers is split into SSE lines as it
// comes (a long line is never rescanned nor buffered past a bound), `data:` lines gather into
// events, and each chat.completion.chunk gives its text deltas, finish reason and usage, the shape
// checked by hand.
import { JSONParseError } from '@ai-sdk/provider';
import {
  contentText,
  finishReasonOf,
  invalidShape,
  isObject,
  usageOf,
  type UsageCounts,
} from './openai-compatible-wire.js';
import type { FinishReason } from '../spec.js';

/** Longest line of a streamed answer; a longer one is an invalid chunk (it is never buffered whole). */
export const maxStreamLineChars = 1024 * 1024;

/** What the stream parser took from the events so far. */
interface StreamState {
  finishRaw: unknown;
  refused: boolean;
  usage: UsageCounts;
  /** Text of SSE `data:` lines of the event being read (events end at a blank line). */
  data: string | null;
  /** An event that could not be read: raised once the text before it has been passed on. */
  failure: Error | null;
}

/** One streamed answer, read piece by piece as the socket delivers its text. */
export class CompletionStreamReader {
  private readonly state: StreamState = {
    finishRaw: undefined,
    refused: false,
    usage: { promptTokens: undefined, completionTokens: undefined },
    data: null,
    failure: null,
  };
  /** The start of a line not ended yet (it holds no line end). */
  private rest = '';

  /**
   * The text deltas of the events this piece completed. Throws when a line grows past
   * `maxStreamLineChars`; an event that could not be read is kept for `throwIfFailed`, so that
   * the text before it is passed on first.
   */
  read(piece: string): string[] {
    const texts: string[] = [];
    const { state } = this;
    const received = this.rest + piece;
    let start = 0;
    // `rest` holds no line end: look only at what arrived (no rescan of a long line).
    for (
      let end = received.indexOf('\n', this.rest.length);
      end !== -1 && state.failure === null;
      end = received.indexOf('\n', start)
    ) {
      const line =
        end > start && received.charCodeAt(end - 1) === 13
          ? received.slice(start, end - 1)
          : received.slice(start, end);
      start = end + 1;
      this.readLine(line, texts);
    }
    this.rest = received.slice(start);
    if (this.rest.length > maxStreamLineChars) {
      throw new JSONParseError({
        text: this.rest.slice(0, 200),
        cause: new Error(`A line of the stream is longer than ${maxStreamLineChars} characters.`),
      });
    }
    return texts;
  }

  /** The text deltas of the last event: one not followed by a blank line still counts. */
  end(): string[] {
    const texts: string[] = [];
    if (this.rest !== '') this.readLine(this.rest, texts);
    this.readLine('', texts);
    return texts;
  }

  /** Raises the event that could not be read, if one could not. */
  throwIfFailed(): void {
    if (this.state.failure !== null) throw this.state.failure;
  }

  /** The finish reason the events gave (null: none did). */
  finishReason(): FinishReason | null {
    const { finishRaw, refused } = this.state;
    return finishRaw === undefined || finishRaw === null
      ? null
      : finishReasonOf(finishRaw, refused);
  }

  /** The usage the last event carrying one reported (undefined fields: not reported). */
  get usage(): UsageCounts {
    return this.state.usage;
  }

  /** One SSE line: `data:` lines gather into the event a blank line ends. */
  private readLine(line: string, texts: string[]): void {
    const { state } = this;
    if (line === '') {
      const data = state.data;
      state.data = null;
      if (data === null || data === '[DONE]' || state.failure !== null) return;
      try {
        this.readEvent(data, texts);
      } catch (error) {
        state.failure = error as Error;
      }
      return;
    }
    if (!line.startsWith('data:')) return;
    const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    state.data = state.data === null ? value : `${state.data}\n${value}`;
  }

  private readEvent(data: string, texts: string[]): void {
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
    if (!Array.isArray(choices) || usage === null) {
      throw invalidShape(event, 'not a chat.completion.chunk');
    }
    if (event.usage !== undefined && event.usage !== null) state.usage = usage;
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
    if (content !== '') texts.push(content);
    if (typeof delta.refusal === 'string' && delta.refusal.length > 0) {
      state.refused = true;
      texts.push(delta.refusal);
    }
  }
}
