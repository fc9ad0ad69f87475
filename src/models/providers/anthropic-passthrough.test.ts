// The pass-through's pieces, directly: Anthropic's events read as the socket cuts them (mid-line,
// CRLF ends, a last event without its blank line, a comment line), an event that is not JSON
// refused, usage read the platform's way, and which upstream failures relay Anthropic's message.
import { APICallError, JSONParseError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { AnthropicEventReader, refusalOf, usageOfCounts } from './anthropic-passthrough.js';
import { RetriesExhaustedError } from '../upstream/retry.js';

const apiError = (status: number, body: string) =>
  new APICallError({
    message: `HTTP ${status}`,
    url: 'http://upstream/v1/messages',
    requestBodyValues: {},
    statusCode: status,
    responseBody: body,
  });

describe("the pass-through's event reader", () => {
  it('reads events cut anywhere, with CRLF line ends and comments', () => {
    const reader = new AnthropicEventReader();
    const text =
      'event: message_start\r\ndata: {"type":"message_start","message":{"id":"m"}}\r\n\r\n' +
      ': keep-alive\n\nevent: ping\ndata: {"type": "ping"}\n\n' +
      'event: message_stop\ndata: {"type":"message_stop"}';
    const events = [];
    for (let start = 0; start < text.length; start += 7) {
      events.push(...reader.read(text.slice(start, start + 7)));
    }
    events.push(...reader.end());
    expect(events).toEqual([
      { event: 'message_start', data: { type: 'message_start', message: { id: 'm' } } },
      { event: 'ping', data: { type: 'ping' } },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  });

  it('names an event without an event line by its type, and refuses one that is not JSON', () => {
    const reader = new AnthropicEventReader();
    expect(reader.read('data: {"type":"message_delta"}\n\n')).toEqual([
      { event: 'message_delta', data: { type: 'message_delta' } },
    ]);
    expect(() => reader.read('event: x\ndata: {oops\n\n')).toThrow(JSONParseError);
    expect(() => new AnthropicEventReader().read('data: [1]\n\n')).toThrow(JSONParseError);
  });
});

describe("the pass-through's usage and failures", () => {
  it('counts the cache in the prompt, as the platform reads usage', () => {
    expect(usageOfCounts({ input: 10, output: 3, cacheRead: 5, cacheCreation: 2 })).toEqual({
      promptTokens: 17,
      completionTokens: 3,
      cachedTokens: 5,
      cacheWriteTokens: 2,
    });
    expect(
      usageOfCounts({ input: 10, output: 3, cacheRead: undefined, cacheCreation: undefined }),
    ).toEqual({ promptTokens: 10, completionTokens: 3 });
  });

  it("relays Anthropic's message for a 400 of the client's body, nothing for other failures", () => {
    const body = JSON.stringify({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'messages.0.content: Field required' },
    });
    const refused = refusalOf('claude', apiError(400, body));
    expect(refused?.status).toBe(400);
    expect(refused?.message).toBe(
      "Model 'claude' (Anthropic) refused the request: messages.0.content: Field required",
    );
    expect(refusalOf('claude', new RetriesExhaustedError(apiError(413, body), 1))?.status).toBe(
      400,
    );
    expect(refusalOf('claude', apiError(401, body))).toBeNull();
    expect(refusalOf('claude', apiError(500, body))).toBeNull();
    expect(refusalOf('claude', apiError(400, '<html>'))).toBeNull();
    expect(refusalOf('claude', new Error('socket hang up'))).toBeNull();
  });
});
