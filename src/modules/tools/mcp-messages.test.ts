import { describe, expect, it } from 'vitest';
import { ByteBlocks, EventBoundaries } from './answer-bytes.js';
import { maxContentItems, mcpResultText, reduceMcpAnswer } from './mcp-messages.js';

const bytesOf = (text: string) => [new TextEncoder().encode(text)];

function reduced(text: string, kind: 'json' | 'event', maxResultChars = 100): string {
  const answer = reduceMcpAnswer({ parts: bytesOf(text), kind, maxResultChars });
  if (!answer.ok) throw new Error(answer.problem);
  return answer.text;
}

describe('reducing a large MCP answer', () => {
  it('writes a call result again as the one text the model reads, cut within the limit', () => {
    const text = 'é'.repeat(5000);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      result: {
        content: [
          { type: 'text', text },
          { type: 'image', data: 'AAAA'.repeat(10_000), mimeType: 'image/png' },
        ],
        _meta: { big: 'x'.repeat(100_000) },
        isError: true,
      },
    });
    const message = JSON.parse(reduced(body, 'json')) as {
      id: number;
      result: { content: Array<{ type: string; text: string }>; isError?: boolean };
    };
    expect(message.id).toBe(7);
    expect(message.result.isError).toBe(true);
    expect(message.result.content).toHaveLength(1);
    const [only] = message.result.content;
    expect(only!.text.length).toBeLessThanOrEqual(100);
    // 5000 characters, a line break, and `[image image/png]`.
    expect(only!.text).toContain('[… cut: the answer had 5018 characters, the first');
    expect(only!.text.startsWith('éé')).toBe(true);
  });

  it('gives the same text as the session would, when nothing needs cutting', () => {
    const result = { content: [], structuredContent: { sum: 42 } };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result });
    const message = JSON.parse(reduced(body, 'json')) as {
      result: { content: Array<{ text: string }> };
    };
    expect(message.result.content[0]!.text).toBe(mcpResultText(result));
    expect(message.result.content[0]!.text).toBe('{"sum":42}');
  });

  it('reads at most 1000 content items and counts the rest', () => {
    const content = Array.from({ length: maxContentItems + 5 }, () => ({
      type: 'text',
      text: 'x',
    }));
    const text = mcpResultText({ content });
    expect(text.split('\n')).toHaveLength(maxContentItems + 1);
    expect(text.endsWith('[… 5 more content items]')).toBe(true);
    // Items that are not objects are skipped, not a TypeError.
    expect(mcpResultText({ content: [null, 3, { type: 'text', text: 'ok' }] })).toBe('ok');
  });

  it('bounds a tool list as the session does, and keeps a list valid for the SDK', () => {
    const tools = Array.from({ length: 250 }, (_, index) => ({
      name: `tool_${index}`,
      description: 'd'.repeat(3000),
      inputSchema: { type: 'object', properties: { big: { description: 'z'.repeat(70_000) } } },
      outputSchema: { type: 'object' },
    }));
    tools.push({ description: 'no name' } as never);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      result: { tools, nextCursor: 'page-2' },
    });
    const message = JSON.parse(reduced(body, 'json')) as {
      result: { tools: Array<Record<string, unknown>>; nextCursor: string };
    };
    expect(message.result.tools).toHaveLength(200);
    expect(message.result.nextCursor).toBe('page-2');
    expect(message.result.tools[0]).toEqual({
      name: 'tool_0',
      description: `${'d'.repeat(2000)}…`,
      inputSchema: { type: 'object', additionalProperties: true },
    });
  });

  it('keeps an error short, leaves out a server’s large request, and drops large members', () => {
    const error = JSON.parse(
      reduced(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          error: { code: -32001, message: 'm'.repeat(5000), data: 'd'.repeat(100_000) },
        }),
        'json',
      ),
    ) as { error: { code: number; message: string; data?: unknown } };
    expect(error.error.code).toBe(-32001);
    expect(error.error.message.length).toBe(2001);
    expect(error.error.data).toBeUndefined();
    expect(
      reduced(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'sampling/createMessage' }), 'json'),
    ).toBe('[]');
    const other = JSON.parse(
      reduced(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 5,
          result: { protocolVersion: '2025-06-18', instructions: 'i'.repeat(100_000) },
        }),
        'json',
      ),
    ) as { result: Record<string, unknown> };
    expect(other.result).toEqual({ protocolVersion: '2025-06-18' });
  });

  it('writes an event again with its id, whatever its line endings; leaves out other kinds', () => {
    const data = JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      result: { content: [{ type: 'text', text: 'y'.repeat(500) }] },
    });
    const event = reduced(
      `: a comment\r\nid: ev-1\r\nevent: message\r\ndata: ${data}\r\n\r\n`,
      'event',
    );
    expect(event.startsWith('event: message\nid: ev-1\ndata: {')).toBe(true);
    expect(event.endsWith('\n\n')).toBe(true);
    const message = JSON.parse(event.split('\n')[2]!.slice('data: '.length)) as {
      result: { content: Array<{ text: string }> };
    };
    expect(message.result.content[0]!.text).toContain('[… cut: the answer had 500 characters');
    expect(reduced(`event: other\ndata: ${data}\n\n`, 'event')).toBe('');
    expect(reduced(`: only a comment ${'c'.repeat(1000)}\n\n`, 'event')).toBe('');
  });

  it('says what went wrong with text that is not JSON, or nested too deep', () => {
    expect(reduceMcpAnswer({ parts: bytesOf('{"a":'), kind: 'json', maxResultChars: 100 })).toEqual(
      { ok: false, problem: 'it is not valid JSON' },
    );
    const deep = `{"jsonrpc":"2.0","id":1,"result":{"x":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}}`;
    expect(reduceMcpAnswer({ parts: bytesOf(deep), kind: 'json', maxResultChars: 100 })).toEqual({
      ok: false,
      problem: 'it is nested too deeply',
    });
  });
});

describe('the bytes of an answer', () => {
  it('gathers chunks into blocks that own their memory, in order', () => {
    const blocks = new ByteBlocks();
    const chunk = new Uint8Array(300 * 1024).map((_, index) => index % 251);
    blocks.push(chunk);
    blocks.push(chunk.subarray(0, 10));
    expect(blocks.bytes).toBe(chunk.length + 10);
    const parts = blocks.take();
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part.buffer.byteLength).toBeLessThanOrEqual(1024 * 1024);
    expect(Buffer.concat(parts)).toEqual(Buffer.concat([chunk, chunk.subarray(0, 10)]));
    expect(blocks.bytes).toBe(0);
  });

  it('finds where events end, across chunks and line endings', () => {
    const ends = (...chunks: string[]) => {
      const boundaries = new EventBoundaries();
      return chunks.map((chunk) => boundaries.ends(new TextEncoder().encode(chunk)));
    };
    expect(ends('data: a\n\ndata: b\n\n')).toEqual([[9, 18]]);
    // A blank line's CRLF ends the event at its CR: the LF goes with the next one (an empty line
    // of its own to a parser, which dispatches nothing).
    expect(ends('data: a\r\n\r\ndata: b\r\r')).toEqual([[10, 20]]);
    // A blank line split between chunks, and a CRLF split between them.
    expect(ends('data: a\n', '\ndata: b\r', '\n\r\n')).toEqual([[], [1], [2]]);
    expect(ends('data: a\ndata: b\n')).toEqual([[]]);
  });
});
