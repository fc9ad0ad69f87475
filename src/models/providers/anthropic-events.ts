// Anthropic's Messages stream as it is read for a pass-through: its Server-Sent Events, and the
// token counts its `usage` objects report (as the platform's usage).
import { JSONParseError } from '@ai-sdk/provider';
import type { TokenUsage } from '../spec.js';
import { SseLines } from './sse-lines.js';

type Json = Record<string, unknown>;

/** One event of Anthropic's stream: its `event:` name and its parsed `data:`. */
export interface PassthroughEvent {
  readonly event: string;
  readonly data: Json;
}

/** Token counts as Anthropic reports them (input excludes the cache's reads and writes). */
export interface AnthropicCounts {
  input: number;
  output: number;
  cacheRead: number | undefined;
  cacheCreation: number | undefined;
}

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;

/** Takes the counts a `usage` object reports, leaving the others as they were. */
export function takeCounts(counts: AnthropicCounts, usage: unknown): void {
  if (!isObject(usage)) return;
  counts.input = count(usage.input_tokens) ?? counts.input;
  counts.output = count(usage.output_tokens) ?? counts.output;
  counts.cacheRead = count(usage.cache_read_input_tokens) ?? counts.cacheRead;
  counts.cacheCreation = count(usage.cache_creation_input_tokens) ?? counts.cacheCreation;
}

/** The platform's usage (OpenAI's reading: the prompt includes what the cache served). */
export function usageOfCounts(counts: AnthropicCounts): TokenUsage {
  const promptTokens = counts.input + (counts.cacheRead ?? 0) + (counts.cacheCreation ?? 0);
  return {
    promptTokens,
    completionTokens: counts.output,
    ...(counts.cacheRead === undefined ? {} : { cachedTokens: counts.cacheRead }),
    ...(counts.cacheCreation === undefined ? {} : { cacheWriteTokens: counts.cacheCreation }),
  };
}

export const noCounts = (): AnthropicCounts => ({
  input: 0,
  output: 0,
  cacheRead: undefined,
  cacheCreation: undefined,
});

/** Reads Anthropic's Server-Sent Events as the socket delivers them: `event:` and `data:` lines. */
export class AnthropicEventReader {
  private readonly lines = new SseLines();
  private name: string | null = null;
  private data: string | null = null;

  /** The events this piece completed; throws on a line past the bound or data that is not JSON. */
  read(piece: string): PassthroughEvent[] {
    const events: PassthroughEvent[] = [];
    this.lines.split(piece, (line) => this.readLine(line, events));
    return events;
  }

  /** The last event, when the stream ended without the blank line after it. */
  end(): PassthroughEvent[] {
    const events: PassthroughEvent[] = [];
    this.lines.end((line) => this.readLine(line, events));
    return events;
  }

  private readLine(line: string, events: PassthroughEvent[]): void {
    if (line === '') {
      const { name, data } = this;
      this.name = null;
      this.data = null;
      if (data === null) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch (cause) {
        throw new JSONParseError({ text: data.slice(0, 200), cause });
      }
      if (!isObject(parsed) || typeof parsed.type !== 'string') {
        throw new JSONParseError({
          text: data.slice(0, 200),
          cause: new Error('An event is not an object with a type.'),
        });
      }
      events.push({ event: name ?? parsed.type, data: parsed });
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value =
      colon === -1
        ? ''
        : line.charCodeAt(colon + 1) === 32
          ? line.slice(colon + 2)
          : line.slice(colon + 1);
    if (field === 'event') this.name = value;
    else if (field === 'data') this.data = this.data === null ? value : `${this.data}\n${value}`;
  }
}
