// Large answers of MCP servers, against real servers from the official SDK on 127.0.0.1 (Streamable
// HTTP answering event streams or JSON, and the older HTTP+SSE transport): an answer larger than
// 64 KiB is reduced in the text threads and reaches the caller cut to the result limit; one past
// `tools.max_response_bytes` fails the call with the limit named, the rest of it unread, and the
// session goes on.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { textConfig } from '../src/config/text-config.js';
import { toolsConfig } from '../src/modules/tools/tools.config.js';
import { ToolSources, type OpenedToolSources } from '../src/modules/tools/tool-sources.js';
import { TextPool } from '../src/text-pool/text-pool.js';
import {
  startSseServer,
  startStreamableServer,
  type TestMcpServer,
} from './support/mcp-test-servers.js';

const text = new TextPool(textConfig());
const services: ToolSources[] = [];
const opened: OpenedToolSources[] = [];
const servers: TestMcpServer[] = [];

function sources(maxResponseBytes?: number): ToolSources {
  const service = new ToolSources({
    tools: toolsConfig({
      allowed_private_targets: ['127.0.0.1'],
      call_timeout_ms: 60_000,
      max_result_chars: 1000,
      ...(maxResponseBytes === undefined ? {} : { max_response_bytes: maxResponseBytes }),
    }),
    secrets: { get: () => undefined },
    clientInfo: { name: 'platform-test', version: '0.0.0' },
    text,
  });
  services.push(service);
  return service;
}

async function open(service: ToolSources, server: TestMcpServer): Promise<OpenedToolSources> {
  const box = await service.open(
    'acct_1',
    [
      {
        type: 'mcp',
        name: 'demo',
        url: server.url,
        ...(server.url.endsWith('/sse') ? { transport: 'sse' } : {}),
      },
    ],
    new AbortController().signal,
  );
  opened.push(box);
  expect(box.unavailable).toEqual([]);
  return box;
}

const never = () => new AbortController().signal;
const mebibyte = 1024 * 1024;

afterEach(async () => {
  await Promise.all(opened.splice(0).map((box) => box.close()));
});

afterAll(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await text.close();
});

const kinds: Array<[string, () => Promise<TestMcpServer>]> = [
  ['Streamable HTTP (event streams)', () => startStreamableServer()],
  ['Streamable HTTP (JSON)', () => startStreamableServer({ json: true })],
  ['the older HTTP+SSE transport', () => startSseServer()],
];

describe.each(kinds)('large answers over %s', (_name, start) => {
  it('cuts a 1 MiB answer to the result limit, read in the text threads', async () => {
    const server = await start();
    servers.push(server);
    const box = await open(sources(), server);
    const answer = await box.call('demo__big', { size: mebibyte }, never());
    expect(answer.ok).toBe(true);
    expect(answer.content.length).toBeLessThanOrEqual(1000);
    expect(answer.content.startsWith('x'.repeat(900))).toBe(true);
    expect(answer.content).toContain(`[… cut: the answer had ${mebibyte} characters, the first`);
    // The session goes on.
    expect(await box.call('demo__echo', { text: 'after' }, never())).toEqual({
      ok: true,
      content: 'after',
    });
  });

  it('fails a call whose answer is past tools.max_response_bytes, and goes on', async () => {
    const server = await start();
    servers.push(server);
    const box = await open(sources(64 * 1024), server);
    const answer = await box.call('demo__big', { size: 200 * 1024 }, never());
    expect(answer).toEqual({
      ok: false,
      content: expect.stringContaining(
        `answered more than ${64 * 1024} bytes when calling 'big'; the rest was not read (the limit is tools.max_response_bytes).`,
      ),
    });
    expect(await box.call('demo__echo', { text: 'after' }, never())).toEqual({
      ok: true,
      content: 'after',
    });
  });
});

describe.each([
  ['an event stream', false],
  ['JSON', true],
] as const)('an answer past the limit as %s', (_name, json) => {
  it('stops reading it: the server cannot write it all', async () => {
    const server = await startStreamableServer({ json });
    servers.push(server);
    const box = await open(sources(mebibyte), server);
    const size = 30 * mebibyte;
    const answer = await box.call('demo__big', { size }, never());
    expect(answer.ok).toBe(false);
    expect(answer.content).toContain(`answered more than ${mebibyte} bytes`);
    const [written] = server.bigAnswers;
    await written!.ended;
    // The client closed the connection: the server wrote what the sockets' buffers took, at most.
    expect(written!.finished).toBe(false);
    expect(written!.written).toBeLessThan(written!.length / 2);
  });
});
