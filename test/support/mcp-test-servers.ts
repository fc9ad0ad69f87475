// Real MCP servers for tests, from the official SDK, on node:http at 127.0.0.1: Streamable HTTP
// (sessions; answers as event streams, or as JSON), the older HTTP+SSE transport, and a low-level
// server whose tool list comes in pages. Each records the requests it received (JSON-RPC methods,
// the Authorization header). The `big` tool answers `size` characters (or that many bytes of small
// text items, `items: true`, what costs a client most to parse and check); from 2 MiB a Streamable
// HTTP server writes that answer itself, in the protocol's wire format, from a buffer made once,
// and records how much of it was written before the client stopped reading: the service runs in
// the same process, so serialising tens of megabytes here would be counted as its loop's block.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export interface SeenRequest {
  httpMethod: string;
  path: string;
  /** JSON-RPC methods in the body (empty for a GET or a DELETE). */
  rpc: string[];
  /** The tools named by its `tools/call` messages. */
  calledTools: string[];
  authorization: string | undefined;
  custom: string | undefined;
}

/** A large answer of the `big` tool, written by the server itself. */
export interface BigAnswer {
  /** The `size` asked for: characters of its text, or bytes of its small text items. */
  size: number;
  /** Bytes of the body written so far. */
  written: number;
  /** The body's whole length. */
  length: number;
  /** Whether the whole body was written before the connection closed. */
  finished: boolean;
  /** Resolves when the server has stopped writing (all written, or the client went away). */
  ended: Promise<void>;
}

export interface TestMcpServer {
  url: string;
  port: number;
  requests: SeenRequest[];
  /** The `big` tool's large answers, in order. */
  bigAnswers: BigAnswer[];
  /** Resolves when the `slow` tool has started (reset for each call). */
  slowStarted(): Promise<void>;
  close(): Promise<void>;
}

function readJson(request: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text === '' ? undefined : JSON.parse(text));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
    request.on('error', reject);
  });
}

function rpcMethods(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages
    .map((message) => (message as { method?: unknown } | undefined)?.method)
    .filter((method): method is string => typeof method === 'string');
}

/** Starts `handler` on 127.0.0.1 (at `at`, else an ephemeral port); closing drops open connections. */
async function listen(
  handler: (request: http.IncomingMessage, response: http.ServerResponse) => Promise<void>,
  at = 0,
): Promise<{ server: http.Server; port: number; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    handler(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(at, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function slowSignal() {
  let started!: () => void;
  let promise = new Promise<void>((resolve) => (started = resolve));
  return {
    started: () => started(),
    wait: () => promise,
    reset: () => {
      promise = new Promise<void>((resolve) => (started = resolve));
    },
  };
}

/** One small text item of a `big` answer made of items, as JSON. */
const smallItem = '{"type":"text","text":"x"},';

/** The tools every test server offers. */
function buildServer(slow: ReturnType<typeof slowSignal>): McpServer {
  const server = new McpServer({ name: 'test-tools', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Repeats a text.',
      inputSchema: { text: z.string(), times: z.number().int().optional() },
    },
    ({ text, times }) => ({
      content: [{ type: 'text', text: Array.from({ length: times ?? 1 }, () => text).join(' ') }],
    }),
  );
  server.registerTool(
    'add',
    { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
    ({ a, b }) => ({ content: [], structuredContent: { sum: a + b } }),
  );
  server.registerTool('picture', { description: 'A picture.' }, () => ({
    content: [
      { type: 'text', text: 'Here it is:' },
      { type: 'image', data: Buffer.from('png').toString('base64'), mimeType: 'image/png' },
    ],
  }));
  server.registerTool('fail', { description: 'Reports an error.' }, () => ({
    content: [{ type: 'text', text: 'the widget is broken' }],
    isError: true,
  }));
  server.registerTool('explode', { description: 'Throws.' }, () => {
    throw new Error('kaboom');
  });
  server.registerTool(
    'big',
    {
      description: 'A long answer: one text, or as many small text items.',
      inputSchema: {
        size: z.number().int().min(0).optional(),
        items: z.boolean().optional(),
      },
    },
    ({ size, items }) => ({
      content:
        items === true
          ? Array.from({ length: Math.floor((size ?? 5000) / smallItem.length) }, () => ({
              type: 'text' as const,
              text: 'x',
            }))
          : [{ type: 'text' as const, text: 'x'.repeat(size ?? 5000) }],
    }),
  );
  server.registerTool('slow', { description: 'Answers when cancelled.' }, async (extra) => {
    slow.started();
    await new Promise<void>((resolve) => {
      if (extra.signal.aborted) resolve();
      extra.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    return { content: [{ type: 'text', text: 'late' }] };
  });
  // A tool with effects and a strict schema: an amount past its maximum must never reach it.
  server.registerTool(
    'refund',
    {
      description: 'Pays a refund of at most 100 on an order.',
      inputSchema: { order_id: z.string(), amount: z.number().max(100) },
    },
    ({ order_id: orderId, amount }) => ({
      content: [{ type: 'text', text: `refunded ${amount} on ${orderId}` }],
    }),
  );
  server.registerTool(
    'wait',
    {
      description: 'Answers after `ms` milliseconds (sooner when cancelled).',
      inputSchema: { ms: z.number().int().min(0).max(60_000) },
    },
    async ({ ms }, extra) => {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        extra.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), {
          once: true,
        });
      });
      return { content: [{ type: 'text', text: `waited ${ms} ms` }] };
    },
  );
  return server;
}

function calledTools(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages
    .filter((message) => (message as { method?: unknown } | undefined)?.method === 'tools/call')
    .map((message) => String((message as { params?: { name?: unknown } }).params?.name));
}

function seen(request: http.IncomingMessage, body: unknown): SeenRequest {
  return {
    httpMethod: request.method ?? '',
    path: request.url ?? '',
    rpc: rpcMethods(body),
    calledTools: calledTools(body),
    authorization: request.headers.authorization,
    custom: request.headers['x-custom'] as string | undefined,
  };
}

/** From this size the `big` tool's answer is written by the server itself. */
const bigAnswerFrom = 2 * 1024 * 1024;
const writeChunkBytes = 256 * 1024;
/** The middles of `big` answers, made once per size and shape. */
const bigMiddles = new Map<string, Buffer>();

/** The middle of a `big` answer (its text, or its items), made once. */
function bigMiddle(size: number, items: boolean): Buffer {
  const key = `${size}:${items}`;
  let middle = bigMiddles.get(key);
  if (middle === undefined) {
    const length = items ? size - (size % smallItem.length) : size;
    middle = Buffer.alloc(length, items ? smallItem : 'x');
    bigMiddles.set(key, middle);
  }
  return middle;
}

/**
 * Makes a large `big` answer's bytes ahead (filling tens of megabytes holds the loop too): a test
 * that measures the loop during a call calls this first.
 */
export function prepareBigAnswer(size: number, items = false): void {
  bigMiddle(size, items);
}

interface BigCall {
  id: unknown;
  size: number;
  items: boolean;
}

/** The `size` a `tools/call` of `big` asks for, or undefined for any other message. */
function bigCall(body: unknown): BigCall | undefined {
  const message = body as { method?: unknown; id?: unknown; params?: unknown } | undefined;
  if (message?.method !== 'tools/call') return undefined;
  const params = message.params as
    | { name?: unknown; arguments?: { size?: unknown; items?: unknown } }
    | undefined;
  const size = params?.arguments?.size;
  if (params?.name !== 'big' || typeof size !== 'number' || size < bigAnswerFrom) return undefined;
  return { id: message.id, size, items: params.arguments?.items === true };
}

/**
 * Writes a `big` answer for a call (JSON, or one event of an event stream) in pieces, waiting
 * for the socket to drain, until written or the client goes away.
 */
function writeBigAnswer(
  response: http.ServerResponse,
  call: BigCall,
  json: boolean,
  sessionId: string,
): BigAnswer {
  const middle = bigMiddle(call.size, call.items);
  const head = Buffer.from(
    `${json ? '' : 'event: message\ndata: '}{"result":{"content":[${call.items ? '' : '{"type":"text","text":"'}`,
  );
  const tail = Buffer.from(
    `${call.items ? '{"type":"text","text":"end"}' : '"}'}]},"jsonrpc":"2.0","id":${JSON.stringify(call.id)}}${json ? '' : '\n\n'}`,
  );
  const pieces: Buffer[] = [head];
  for (let offset = 0; offset < middle.length; offset += writeChunkBytes) {
    pieces.push(middle.subarray(offset, offset + writeChunkBytes));
  }
  pieces.push(tail);
  const length = head.length + middle.length + tail.length;
  response.writeHead(200, {
    'content-type': json ? 'application/json' : 'text/event-stream',
    'mcp-session-id': sessionId,
    ...(json ? { 'content-length': String(length) } : {}),
  });
  let ended!: () => void;
  const answer: BigAnswer = {
    size: call.size,
    written: 0,
    length,
    finished: false,
    ended: new Promise<void>((resolve) => (ended = resolve)),
  };
  let closed = false;
  response.on('close', () => {
    closed = true;
    ended();
  });
  void (async () => {
    for (const piece of pieces) {
      if (closed) return;
      answer.written += piece.length;
      if (!response.write(piece)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            response.off('drain', done);
            response.off('close', done);
            resolve();
          };
          response.on('drain', done);
          response.on('close', done);
        });
      }
    }
    if (closed) return;
    answer.finished = true;
    response.end();
  })();
  return answer;
}

export interface StreamableOptions {
  /** Answers as JSON bodies rather than event streams. */
  json?: boolean;
  /** Default 0, an ephemeral port. */
  port?: number;
  /** Keep every request in `requests`. Default true; a long benchmark turns it off. */
  recordRequests?: boolean;
}

/** A Streamable HTTP MCP server at `/mcp`, one session per client (ended by its DELETE). */
export async function startStreamableServer(
  options: StreamableOptions = {},
): Promise<TestMcpServer> {
  const requests: SeenRequest[] = [];
  const recordRequests = options.recordRequests ?? true;
  const bigAnswers: BigAnswer[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const slow = slowSignal();
  const running = await listen(async (request, response) => {
    const body = request.method === 'POST' ? await readJson(request) : undefined;
    if (recordRequests) requests.push(seen(request, body));
    const sessionId = request.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (transport === undefined) {
      if (request.method !== 'POST' || !isInitializeRequest(body)) {
        response.writeHead(404).end();
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void transports.set(id, created),
        enableJsonResponse: options.json === true,
      });
      created.onclose = () => {
        if (created.sessionId !== undefined) transports.delete(created.sessionId);
      };
      await buildServer(slow).connect(created);
      transport = created;
    }
    const big = bigCall(body);
    if (big !== undefined && typeof sessionId === 'string') {
      bigAnswers.push(writeBigAnswer(response, big, options.json === true, sessionId));
      return;
    }
    await transport.handleRequest(request, response, body);
  }, options.port);
  return {
    url: `http://127.0.0.1:${running.port}/mcp`,
    port: running.port,
    requests,
    bigAnswers,
    slowStarted: async () => {
      await slow.wait();
      slow.reset();
    },
    close: () => running.close(),
  };
}

/** An MCP server over the older HTTP+SSE transport: GET /sse, POST /messages. */
export async function startSseServer(): Promise<TestMcpServer> {
  const requests: SeenRequest[] = [];
  const transports = new Map<string, SSEServerTransport>();
  const slow = slowSignal();
  const running = await listen(async (request, response) => {
    const body = request.method === 'POST' ? await readJson(request) : undefined;
    requests.push(seen(request, body));
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (request.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', response);
      transports.set(transport.sessionId, transport);
      transport.onclose = () => transports.delete(transport.sessionId);
      await buildServer(slow).connect(transport);
      return;
    }
    const transport = transports.get(url.searchParams.get('sessionId') ?? '');
    if (request.method === 'POST' && url.pathname === '/messages' && transport !== undefined) {
      await transport.handlePostMessage(request, response, body);
      return;
    }
    response.writeHead(404).end();
  });
  return {
    url: `http://127.0.0.1:${running.port}/sse`,
    port: running.port,
    requests,
    bigAnswers: [],
    slowStarted: async () => {
      await slow.wait();
      slow.reset();
    },
    close: () => running.close(),
  };
}

/** A low-level server (stateless) whose `count` tools come `pageSize` per page of tools/list. */
export async function startPagedServer(count: number, pageSize: number): Promise<TestMcpServer> {
  const requests: SeenRequest[] = [];
  const running = await listen(async (request, response) => {
    const body = request.method === 'POST' ? await readJson(request) : undefined;
    requests.push(seen(request, body));
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    const server = new Server({ name: 'paged', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, (list) => {
      const start = Number(list.params?.cursor ?? '0');
      const end = Math.min(count, start + pageSize);
      return {
        tools: Array.from({ length: end - start }, (_, index) => ({
          name: `tool_${start + index}`,
          inputSchema: { type: 'object' as const },
        })),
        ...(end < count ? { nextCursor: String(end) } : {}),
      };
    });
    server.setRequestHandler(CallToolRequestSchema, (call) => ({
      content: [{ type: 'text', text: `called ${call.params.name}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    response.on('close', () => void transport.close());
    await transport.handleRequest(request, response, body);
  });
  return {
    url: `http://127.0.0.1:${running.port}/mcp`,
    port: running.port,
    requests,
    bigAnswers: [],
    slowStarted: () => Promise.reject(new Error('no slow tool')),
    close: () => running.close(),
  };
}

/** Any server on 127.0.0.1 answering with `handler` (redirects, plain HTTP APIs). */
export async function startHttpServer(
  handler: (request: http.IncomingMessage, body: string, response: http.ServerResponse) => void,
): Promise<{
  port: number;
  requests: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}> {
  const requests: {
    method: string;
    url: string;
    headers: http.IncomingHttpHeaders;
    body: string;
  }[] = [];
  const running = await listen(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    requests.push({
      method: request.method ?? '',
      url: request.url ?? '',
      headers: request.headers,
      body,
    });
    handler(request, body, response);
  });
  return { port: running.port, requests, close: () => running.close() };
}
