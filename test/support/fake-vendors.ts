// Scriptable fakes of Anthropic's Messages API and Google's Generative Language API on node:http,
// each in its vendor's real wire format (JSON answers, Server-Sent Events with the vendor's event
// types, error bodies and headers), so the adapters are tested over real HTTP as in production.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Vendor = 'anthropic' | 'google';

/** A function call in an answer: Anthropic's `tool_use` block, Google's `functionCall` part. */
export interface VendorToolCall {
  /** Anthropic: the block's id (default `toolu_…`); Google: the call's id (default: none sent). */
  id?: string;
  name: string;
  input: Record<string, unknown>;
  /** Anthropic streaming: the `input_json_delta` fragments (default: the JSON cut in three). */
  fragments?: string[];
}

/**
 * A normal answer: `chunks` are the streamed text deltas (default: the words of `text`). With
 * `toolCalls`, the text defaults to none, and Anthropic's stop reason to `tool_use`.
 */
export interface VendorReply {
  kind: 'reply';
  text?: string;
  chunks?: string[];
  toolCalls?: VendorToolCall[];
  /** The vendor's own finish reason (`end_turn`, `max_tokens`; `STOP`, `MAX_TOKENS`, `SAFETY`). */
  finish?: string;
  /** Anthropic: `input_tokens` (which excludes cached tokens); Google: `promptTokenCount`. */
  inputTokens?: number;
  outputTokens?: number;
  /** Anthropic `cache_read_input_tokens`; Google `cachedContentTokenCount` (part of the prompt). */
  cachedTokens?: number;
}

/** An HTTP error in the vendor's error shape, with extra headers (retry-after). */
export interface VendorError {
  kind: 'error';
  status: number;
  headers?: Record<string, string>;
}

/** Streaming only: `afterChunks` text deltas, then the connection is destroyed. */
export interface VendorCut {
  kind: 'cut';
  afterChunks: number;
}

export type VendorBehaviour = VendorReply | VendorError | VendorCut;

export interface VendorRequest {
  method: string;
  /** Path with the query string, e.g. `/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  stream: boolean;
}

export interface FakeVendor {
  vendor: Vendor;
  /** What the adapter is configured with as `base_url`. */
  baseUrl: string;
  /** The key the fake requires (Anthropic's `x-api-key`, Google's `x-goog-api-key`). */
  apiKey: string;
  requests: VendorRequest[];
  enqueue(...behaviours: VendorBehaviour[]): void;
  reset(): void;
  close(): Promise<void>;
}

/** The text of the last user message, as the vendors' request formats carry it. */
function lastUserText(vendor: Vendor, body: Record<string, unknown>): string {
  const messages = (vendor === 'anthropic' ? body.messages : body.contents) as
    | Array<{ role: string; content?: unknown; parts?: Array<{ text?: string }> }>
    | undefined;
  const last = [...(messages ?? [])].reverse().find((message) => message.role === 'user');
  if (last === undefined) return '';
  if (vendor === 'google') return (last.parts ?? []).map((part) => part.text ?? '').join('');
  const content = last.content;
  if (typeof content === 'string') return content;
  return (content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
}

const countWords = (text: string) => text.split(/\s+/).filter(Boolean).length;

function words(text: string): string[] {
  return text.split(/(?<=\s)/).filter(Boolean);
}

/** A JSON text in three pieces, as Anthropic streams a tool call's input. */
function thirds(json: string): string[] {
  const step = Math.ceil(json.length / 3);
  return [json.slice(0, step), json.slice(step, 2 * step), json.slice(2 * step)].filter(Boolean);
}

const anthropicErrorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};
const googleStatuses: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

function errorBody(vendor: Vendor, status: number): unknown {
  return vendor === 'anthropic'
    ? {
        type: 'error',
        error: {
          type: anthropicErrorTypes[status] ?? 'api_error',
          message: `fake error ${status}`,
        },
      }
    : {
        error: {
          code: status,
          message: `fake error ${status}`,
          status: googleStatuses[status] ?? 'UNKNOWN',
        },
      };
}

export async function startFakeVendor(vendor: Vendor): Promise<FakeVendor> {
  const apiKey = `fake-${vendor}-key-${randomBytes(6).toString('hex')}`;
  const requests: VendorRequest[] = [];
  const queue: VendorBehaviour[] = [];
  const sockets = new Set<Socket>();

  const sendJson = (
    response: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };

  /** Anthropic: one `event:` and `data:` per event; Google: `data:` lines only (alt=sse). */
  const event = (response: ServerResponse, type: string, data: unknown) =>
    response.write(
      vendor === 'anthropic'
        ? `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`
        : `data: ${JSON.stringify(data)}\r\n\r\n`,
    );

  function answer(response: ServerResponse, request: VendorRequest, behaviour: VendorBehaviour) {
    if (behaviour.kind === 'error') {
      sendJson(response, behaviour.status, errorBody(vendor, behaviour.status), behaviour.headers);
      return;
    }
    const prompt = lastUserText(vendor, request.body);
    const toolCalls = (behaviour.kind === 'reply' ? (behaviour.toolCalls ?? []) : []).map(
      (call) => ({ ...call, id: call.id ?? `toolu_${randomBytes(8).toString('hex')}` }),
    );
    const cachedTokens = behaviour.kind === 'reply' ? behaviour.cachedTokens : undefined;
    const text =
      behaviour.kind === 'reply'
        ? (behaviour.text ?? (toolCalls.length > 0 ? '' : `Echo: ${prompt}`))
        : 'partial answer that is cut';
    const chunks = behaviour.kind === 'reply' ? (behaviour.chunks ?? words(text)) : words(text);
    const inputTokens =
      behaviour.kind === 'reply' ? (behaviour.inputTokens ?? countWords(prompt) + 3) : 7;
    const outputTokens =
      behaviour.kind === 'reply' ? (behaviour.outputTokens ?? countWords(text)) : 0;
    const finish =
      behaviour.kind === 'reply'
        ? (behaviour.finish ??
          (vendor === 'google' ? 'STOP' : toolCalls.length > 0 ? 'tool_use' : 'end_turn'))
        : undefined;
    const anthropicUsage = (output: number) => ({
      input_tokens: inputTokens,
      output_tokens: output,
      ...(cachedTokens === undefined
        ? {}
        : { cache_read_input_tokens: cachedTokens, cache_creation_input_tokens: 0 }),
    });
    const googleCache = cachedTokens === undefined ? {} : { cachedContentTokenCount: cachedTokens };
    // Google sends a call's id only on some API versions: only when the test gave one.
    const googleCalls = (behaviour.kind === 'reply' ? (behaviour.toolCalls ?? []) : []).map(
      (call) => ({
        functionCall: {
          ...(call.id === undefined ? {} : { id: call.id }),
          name: call.name,
          args: call.input,
        },
      }),
    );
    const model = typeof request.body.model === 'string' ? request.body.model : 'gemini-fake-001';
    const id = `msg_${randomBytes(12).toString('hex')}`;
    if (!request.stream) {
      sendJson(
        response,
        200,
        vendor === 'anthropic'
          ? {
              id,
              type: 'message',
              role: 'assistant',
              model,
              content: [
                ...(text === '' && toolCalls.length > 0 ? [] : [{ type: 'text', text }]),
                ...toolCalls.map((call) => ({
                  type: 'tool_use',
                  id: call.id,
                  name: call.name,
                  input: call.input,
                })),
              ],
              stop_reason: finish,
              stop_sequence: null,
              usage: anthropicUsage(outputTokens),
            }
          : {
              candidates: [
                {
                  content: {
                    parts: [
                      ...(text === '' && googleCalls.length > 0 ? [] : [{ text }]),
                      ...googleCalls,
                    ],
                    role: 'model',
                  },
                  finishReason: finish,
                  index: 0,
                },
              ],
              usageMetadata: {
                promptTokenCount: inputTokens,
                candidatesTokenCount: outputTokens,
                totalTokenCount: inputTokens + outputTokens,
                ...googleCache,
              },
              modelVersion: 'gemini-fake-001',
              responseId: id,
            },
      );
      return;
    }
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    const limit = behaviour.kind === 'cut' ? behaviour.afterChunks : chunks.length;
    if (vendor === 'anthropic') {
      event(response, 'message_start', {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: anthropicUsage(1),
        },
      });
      const withText = !(text === '' && toolCalls.length > 0);
      if (withText) {
        event(response, 'content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        });
      }
      event(response, 'ping', { type: 'ping' });
      for (const chunk of withText ? chunks.slice(0, limit) : []) {
        event(response, 'content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: chunk },
        });
      }
      if (behaviour.kind === 'cut') {
        cutAfterFlush(response);
        return;
      }
      if (withText) event(response, 'content_block_stop', { type: 'content_block_stop', index: 0 });
      toolCalls.forEach((call, position) => {
        const index = position + (withText ? 1 : 0);
        event(response, 'content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
        });
        for (const fragment of call.fragments ?? thirds(JSON.stringify(call.input))) {
          event(response, 'content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: fragment },
          });
        }
        event(response, 'content_block_stop', { type: 'content_block_stop', index });
      });
      event(response, 'message_delta', {
        type: 'message_delta',
        delta: { stop_reason: finish, stop_sequence: null },
        usage: { output_tokens: outputTokens },
      });
      event(response, 'message_stop', { type: 'message_stop' });
      response.end();
      return;
    }
    // Google: a chunk per text delta, then a chunk per function call (whole: Google does not
    // stream a call's arguments); the last chunk carries the finish reason and the usage.
    const parts: unknown[] = [
      ...chunks.slice(0, limit).map((chunk) => ({ text: chunk })),
      ...(behaviour.kind === 'cut' ? [] : googleCalls),
    ];
    parts.forEach((part, index) => {
      const last = behaviour.kind === 'reply' && index === parts.length - 1;
      event(response, 'chunk', {
        candidates: [
          {
            content: { parts: [part], role: 'model' },
            ...(last ? { finishReason: finish } : {}),
            index: 0,
          },
        ],
        usageMetadata: {
          promptTokenCount: inputTokens,
          ...(last
            ? {
                candidatesTokenCount: outputTokens,
                totalTokenCount: inputTokens + outputTokens,
                ...googleCache,
              }
            : { totalTokenCount: inputTokens }),
        },
        modelVersion: 'gemini-fake-001',
        responseId: id,
      });
    });
    if (behaviour.kind === 'cut') {
      cutAfterFlush(response);
      return;
    }
    response.end();
  }

  /** Destroys the connection once what was written has left, as a real cut mid-answer would. */
  function cutAfterFlush(response: ServerResponse) {
    response.write('', () => setTimeout(() => response.socket?.destroy(), 20));
  }

  const server = createServer((incoming, response) => {
    let raw = '';
    incoming.setEncoding('utf8');
    incoming.on('data', (chunk: string) => (raw += chunk));
    incoming.on('end', () => {
      const body = (raw === '' ? {} : JSON.parse(raw)) as Record<string, unknown>;
      const url = incoming.url ?? '';
      const request: VendorRequest = {
        method: incoming.method ?? '',
        url,
        headers: incoming.headers,
        body,
        stream:
          vendor === 'anthropic' ? body.stream === true : url.includes(':streamGenerateContent'),
      };
      requests.push(request);
      const path = url.split('?')[0]!;
      const known =
        incoming.method === 'POST' &&
        (vendor === 'anthropic'
          ? path === '/v1/messages'
          : /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/.test(path));
      if (!known) {
        sendJson(response, 404, errorBody(vendor, 404));
        return;
      }
      const key =
        vendor === 'anthropic' ? incoming.headers['x-api-key'] : incoming.headers['x-goog-api-key'];
      if (key !== apiKey) {
        sendJson(response, 401, errorBody(vendor, 401));
        return;
      }
      answer(response, request, queue.shift() ?? { kind: 'reply' });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    vendor,
    baseUrl: `http://127.0.0.1:${port}/${vendor === 'anthropic' ? 'v1' : 'v1beta'}`,
    apiKey,
    requests,
    enqueue: (...behaviours) => queue.push(...behaviours),
    reset() {
      requests.length = 0;
      queue.length = 0;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
