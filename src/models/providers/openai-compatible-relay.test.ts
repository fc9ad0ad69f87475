import { describe, expect, it } from 'vitest';
import type { RelayedPart } from '../spec.js';
import { ChunkRelayReader } from './openai-compatible-relay.js';

const chunk = (delta: object, extra: Record<string, unknown> = {}, finish: string | null = null) =>
  JSON.stringify({
    id: 'chatcmpl-up',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model: 'upstream-model-2024',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage: null,
    ...extra,
  });
const usageChunk = JSON.stringify({
  id: 'chatcmpl-up',
  object: 'chat.completion.chunk',
  created: 1700000000,
  model: 'upstream-model-2024',
  choices: [],
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
});
const sse = (...events: string[]) => events.map((data) => `data: ${data}\n\n`).join('');

/** The data of each relayed frame, parsed. */
function framesOf(parts: Array<RelayedPart | null>): Array<Record<string, unknown>> {
  return parts
    .filter((part): part is RelayedPart => part !== null)
    .flatMap((part) => part.frames.split('\n\n').filter((frame) => frame !== ''))
    .map((frame) => {
      expect(frame.startsWith('data: ')).toBe(true);
      return JSON.parse(frame.slice('data: '.length)) as Record<string, unknown>;
    });
}

const stream = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Hello' }),
  chunk({ content: ' "model":"trap"' }),
  chunk({}, {}, 'stop'),
  usageChunk,
  '[DONE]',
];

describe('ChunkRelayReader', () => {
  it('relays the events as they came, under the platform model name, without [DONE]', () => {
    const reader = new ChunkRelayReader('platform-name', { includeUsage: true });
    const parts = [reader.read(sse(...stream)), reader.end()];
    reader.throwIfFailed();
    const frames = framesOf(parts);
    expect(frames).toHaveLength(5);
    expect(frames.every((frame) => frame.model === 'platform-name')).toBe(true);
    expect(frames.every((frame) => frame.id === 'chatcmpl-up')).toBe(true);
    // The content is passed as it came: a quoted "model" inside it is text, not the field.
    expect(frames[2]!.choices).toEqual([
      { index: 0, delta: { content: ' "model":"trap"' }, logprobs: null, finish_reason: null },
    ]);
    expect(frames.at(-1)!.usage).toEqual({
      prompt_tokens: 3,
      completion_tokens: 2,
      total_tokens: 5,
    });
    expect(reader.parser.finishReason()).toBe('stop');
    expect(reader.parser.usage).toMatchObject({ promptTokens: 3, completionTokens: 2 });
    expect(reader.usageFrames({ promptTokens: 3, completionTokens: 2 })).toBeNull();
  });

  it('leaves out the usage the client did not ask for (the platform asked for it)', () => {
    const reader = new ChunkRelayReader('platform-name', { includeUsage: false });
    const frames = framesOf([reader.read(sse(...stream)), reader.end()]);
    expect(frames).toHaveLength(4);
    expect(frames.some((frame) => 'usage' in frame)).toBe(false);
    // Still read, for the ledger.
    expect(reader.parser.usage).toMatchObject({ promptTokens: 3, completionTokens: 2 });
  });

  it('says which parts carry content, and counts the events', () => {
    const reader = new ChunkRelayReader('m', { includeUsage: false });
    const opening = reader.read(sse(stream[0]!));
    const text = reader.read(sse(stream[1]!, stream[2]!));
    expect(opening).toMatchObject({ content: false, chunks: 1 });
    expect(text).toMatchObject({ content: true, chunks: 2 });
  });

  it('joins an event split across pieces, and keeps nothing for an unfinished one', () => {
    const reader = new ChunkRelayReader('m', { includeUsage: false });
    const text = sse(stream[0]!, stream[1]!);
    const cut = text.indexOf('Hello') + 2;
    const first = reader.read(text.slice(0, cut));
    const second = reader.read(text.slice(cut));
    expect(framesOf([first])).toHaveLength(1);
    const [joined, ...others] = framesOf([second]);
    expect(others).toEqual([]);
    expect(joined).toMatchObject({ model: 'm', choices: [{ delta: { content: 'Hello' } }] });
  });

  it('rewrites a model field it cannot splice by reading the event', () => {
    const reader = new ChunkRelayReader('m', { includeUsage: false });
    const spaced = JSON.stringify(JSON.parse(stream[1]!), null, 1).replace(/\n/g, ' ');
    const frames = framesOf([reader.read(sse(stream[0]!, spaced)), reader.end()]);
    expect(frames[1]).toMatchObject({ model: 'm', choices: [{ delta: { content: 'Hello' } }] });
  });

  it('passes on the events before one that cannot be read, then raises it', () => {
    const reader = new ChunkRelayReader('m', { includeUsage: false });
    const part = reader.read(sse(stream[0]!, stream[1]!, '{"id": "broken", "choi', stream[2]!));
    expect(framesOf([part])).toHaveLength(2);
    expect(() => reader.throwIfFailed()).toThrow();
  });

  it('raises an error the upstream reports mid-stream', () => {
    const reader = new ChunkRelayReader('m', { includeUsage: false });
    reader.read(sse(stream[0]!, stream[1]!, JSON.stringify({ error: { message: 'overloaded' } })));
    expect(() => reader.throwIfFailed()).toThrow(/mid-stream/);
  });

  it('reads every event after the content began that may end the answer, report usage or fail', () => {
    // Each event carries the model field (so it could be relayed unread) and is the first of its
    // kind after content: a finish reason, a usage object, an error.
    const finish = new ChunkRelayReader('m', { includeUsage: true });
    finish.read(sse(stream[0]!, stream[1]!, chunk({}, {}, 'length')));
    finish.end();
    expect(finish.parser.finishReason()).toBe('length');

    const usage = new ChunkRelayReader('m', { includeUsage: true });
    usage.read(sse(stream[0]!, stream[1]!, usageChunk));
    usage.end();
    expect(usage.parser.usage).toMatchObject({ promptTokens: 3, completionTokens: 2 });

    const failing = new ChunkRelayReader('m', { includeUsage: false });
    const error = JSON.stringify({
      id: 'chatcmpl-up',
      model: 'up',
      error: { message: 'overloaded' },
    });
    failing.read(sse(stream[0]!, stream[1]!, error));
    expect(() => failing.throwIfFailed()).toThrow(/mid-stream/);
  });

  it('keeps about a mebibyte of events for counting an answer, and counts the events past it', () => {
    const reader = new ChunkRelayReader('platform-name', { includeUsage: false });
    const piece = 'x'.repeat(200_000);
    const events = Array.from({ length: 8 }, () => chunk({ content: piece }));
    reader.read(sse(...events, chunk({}, {}, 'stop'), '[DONE]'));
    reader.end();
    reader.throwIfFailed();
    // Events of 200 KB: the sixth takes what is kept past 1 MiB; the two after it and the
    // finishing event are counted (a token each where the upstream reports no usage), not kept.
    expect(reader.generated()).toEqual({ text: piece.repeat(6), unkeptChunks: 3 });
  });

  it('writes the usage chunk a client asked for when the upstream sent none', () => {
    const reader = new ChunkRelayReader('m', { includeUsage: true });
    reader.read(sse(...stream.slice(0, 4)));
    reader.end();
    const { text } = reader.generated();
    expect(text).toBe('Hello "model":"trap"');
    const frames = framesOf([reader.usageFrames({ promptTokens: 4, completionTokens: 5 })]);
    expect(frames).toEqual([
      {
        id: 'chatcmpl-up',
        object: 'chat.completion.chunk',
        created: 1700000000,
        model: 'm',
        choices: [],
        usage: { prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 },
      },
    ]);
  });
});
