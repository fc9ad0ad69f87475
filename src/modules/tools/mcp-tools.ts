// An MCP server as a tool source: the official SDK's Client over Streamable HTTP (or the older
// HTTP+SSE transport), every request through the policy fetch. A server's tool list is read page by
// page (at most 200 tools) and kept a while per account, URL and credentials, so a run whose list is
// cached connects only when the model calls a tool. A call answers the tool's text (non-text
// content described, structured content as JSON when there is no text), cut at a bound; the tool's
// own error, a timeout or a server gone away answer `ok: false`, and only the run's signal rejects.
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type {
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { LRUCache } from 'lru-cache';
import type { FetchFunction } from '../../net/policy-fetch.js';
import { shown } from '../../net/web-fetch-error.js';
import type { ToolOutcome } from './tool.js';
import { brief, cutText, policyFailure } from './tool-text.js';

/** Tools read from one server at most; further pages are not asked for. */
export const maxMcpTools = 200;
const maxListPages = 20;
const maxDescriptionChars = 2000;
/** A tool's argument schema larger than this (as JSON) is replaced by a permissive one. */
const maxSchemaChars = 64 * 1024;
/** How long closing a session may wait for the server's answer to the DELETE. */
const closeWaitMs = 2000;

export type McpTransportKind = 'streamable_http' | 'sse';

/** Where and how to reach one server: its URL, transport, and every header sent (auth included). */
export interface McpConnection {
  url: string;
  transport: McpTransportKind;
  headers: Readonly<Record<string, string>>;
}

/** One tool as the server lists it (bounded). */
export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface McpDeps {
  fetch: FetchFunction;
  callTimeoutMs: number;
  maxResultChars: number;
  /** How this platform introduces itself to servers. */
  clientInfo: { name: string; version: string };
}

/**
 * Tool lists by account, URL, transport and a hash of the headers (credentials included): a list
 * read with one token is never handed to a run with another. Bounded in entries and age.
 */
export class McpToolListCache {
  private readonly lists: LRUCache<string, readonly McpToolInfo[]>;

  constructor(ttlMs: number, maxEntries = 500) {
    this.lists = new LRUCache({ max: maxEntries, ...(ttlMs > 0 ? { ttl: ttlMs } : { ttl: 1 }) });
    this.enabled = ttlMs > 0;
  }

  private readonly enabled: boolean;

  key(accountId: string, connection: McpConnection): string {
    const headers = Object.entries(connection.headers)
      .map(([name, value]) => [name.toLowerCase(), value])
      .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0));
    return createHash('sha256')
      .update(JSON.stringify([accountId, connection.url, connection.transport, headers]))
      .digest('hex');
  }

  get(key: string): readonly McpToolInfo[] | undefined {
    return this.enabled ? this.lists.get(key) : undefined;
  }

  set(key: string, tools: readonly McpToolInfo[]): void {
    if (this.enabled) this.lists.set(key, tools);
  }

  clear(): void {
    this.lists.clear();
  }
}

function boundedSchema(schema: unknown): Record<string, unknown> {
  const permissive = { type: 'object', additionalProperties: true };
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return permissive;
  const text = JSON.stringify(schema);
  if (text.length > maxSchemaChars) return permissive;
  // A copy: the SDK's object is not ours to keep (and `type` must be `object` for every provider).
  return { ...(JSON.parse(text) as Record<string, unknown>), type: 'object' };
}

/** A remote's value as text: strings as they are, anything else as JSON. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined ? '' : JSON.stringify(value);
}

/**
 * Runs one request of the SDK with a signal of its own that follows `signal`. The SDK adds an
 * abort listener to a request's signal and never removes it; on a signal made by
 * `AbortSignal.any` (a run's is) Node keeps the signal alive while it has a listener, and through
 * that listener the whole Client, for good once the run has ended without aborting. Our own
 * controller's signal dies with the request, and the listener on `signal` is removed after it.
 */
async function following<T>(
  signal: AbortSignal,
  request: (own: AbortSignal) => Promise<T>,
): Promise<T> {
  const own = new AbortController();
  const abort = () => own.abort(signal.reason);
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  try {
    return await request(own.signal);
  } finally {
    signal.removeEventListener('abort', abort);
  }
}

/**
 * The SDK checks a tool's structured output against the output schema its server lists, with an
 * Ajv instance per Client unless given a validator. The platform only hands the model text, so
 * one permissive validator serves every Client: no compiler per session, and no server's schema
 * compiled on the event loop.
 */
const permissiveValidator: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

/** The numeric code of an McpError (ErrorCode is a numeric enum; servers send any number). */
const timeoutCode: number = ErrorCode.RequestTimeout;
const closedCode: number = ErrorCode.ConnectionClosed;

interface ContentItem {
  type: string;
  text?: unknown;
  mimeType?: unknown;
  uri?: unknown;
  resource?: { uri?: unknown; text?: unknown; mimeType?: unknown };
}

/** The text of a call's result for the model. */
export function mcpResultText(result: {
  content?: unknown;
  structuredContent?: unknown;
  toolResult?: unknown;
}): string {
  const parts: string[] = [];
  let texts = 0;
  const content = Array.isArray(result.content) ? (result.content as ContentItem[]) : [];
  for (const item of content) {
    const mime = typeof item.mimeType === 'string' ? ` ${item.mimeType}` : '';
    switch (item.type) {
      case 'text':
        parts.push(textOf(item.text));
        texts += 1;
        break;
      case 'image':
      case 'audio':
        parts.push(`[${item.type}${mime}]`);
        break;
      case 'resource': {
        const resource = item.resource ?? {};
        if (typeof resource.text === 'string') {
          parts.push(resource.text);
          texts += 1;
        } else {
          const resourceMime = typeof resource.mimeType === 'string' ? ` ${resource.mimeType}` : '';
          parts.push(`[resource ${brief(textOf(resource.uri), 200)}${resourceMime}]`);
        }
        break;
      }
      case 'resource_link':
        parts.push(`[resource link ${brief(textOf(item.uri), 200)}]`);
        break;
      default:
        parts.push(`[${brief(String(item.type), 40)} content]`);
    }
  }
  if (texts === 0 && result.structuredContent !== undefined) {
    parts.unshift(JSON.stringify(result.structuredContent));
  } else if (content.length === 0 && result.toolResult !== undefined) {
    // The protocol's first version answered `toolResult`.
    parts.push(JSON.stringify(result.toolResult));
  }
  return parts.join('\n');
}

/** One server's connection for one run: opened on first need, reused, closed with the run. */
export class McpSession {
  private connecting: Promise<Client> | null = null;

  constructor(
    private readonly connection: McpConnection,
    private readonly deps: McpDeps,
  ) {}

  private get where(): string {
    return shown(this.connection.url);
  }

  private transport(): Transport {
    const url = new URL(this.connection.url);
    const requestInit: RequestInit = { headers: { ...this.connection.headers } };
    if (this.connection.transport === 'sse') {
      return new SSEClientTransport(url, { fetch: this.deps.fetch, requestInit });
    }
    return new StreamableHTTPClientTransport(url, {
      fetch: this.deps.fetch,
      requestInit,
      // A stream that breaks is not re-opened in the background: the next call connects again.
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1000,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1,
      },
    });
  }

  private client(signal: AbortSignal): Promise<Client> {
    if (this.connecting === null) {
      const attempt = (async () => {
        const client = new Client(this.deps.clientInfo, {
          capabilities: {},
          jsonSchemaValidator: permissiveValidator,
        });
        // Transport errors surface through the requests that fail; nothing to do with them here.
        client.onerror = () => undefined;
        try {
          await following(signal, (own) =>
            client.connect(this.transport(), { signal: own, timeout: this.deps.callTimeoutMs }),
          );
        } catch (error) {
          await client.close().catch(() => undefined);
          throw error;
        }
        return client;
      })();
      this.connecting = attempt;
      // A failed attempt is forgotten, so the next call tries again.
      attempt.catch(() => {
        if (this.connecting === attempt) this.connecting = null;
      });
    }
    return this.connecting;
  }

  /** The server's tools (at most 200), read page by page; throws a message fit to show. */
  async listTools(signal: AbortSignal): Promise<McpToolInfo[]> {
    try {
      const client = await this.client(signal);
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < maxListPages && tools.length < maxMcpTools; page += 1) {
        const params = cursor === undefined ? undefined : { cursor };
        const answer = await following(signal, (own) =>
          client.listTools(params, { signal: own, timeout: this.deps.callTimeoutMs }),
        );
        for (const tool of answer.tools.slice(0, maxMcpTools - tools.length)) {
          tools.push({
            name: tool.name,
            description: brief(tool.description ?? tool.title ?? '', maxDescriptionChars),
            inputSchema: boundedSchema(tool.inputSchema),
          });
        }
        cursor = answer.nextCursor;
        if (cursor === undefined) break;
      }
      return tools;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      await this.reset();
      throw new Error(this.describe(error, 'listing its tools'), { cause: error });
    }
  }

  /** Calls one tool; resolves `ok: false` on every failure but the signal's. */
  async call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ToolOutcome> {
    try {
      const client = await this.client(signal);
      const result = await following(signal, (own) =>
        client.callTool({ name: tool, arguments: args }, undefined, {
          signal: own,
          timeout: this.deps.callTimeoutMs,
        }),
      );
      const text = mcpResultText(result);
      if (result.isError === true) {
        const content = text.trim() === '' ? `The tool '${tool}' reported an error.` : text;
        return { ok: false, content: cutText(content, this.deps.maxResultChars) };
      }
      return { ok: true, content: cutText(text, this.deps.maxResultChars) };
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      // The session may be broken (the server restarted, a stream broke): the next call reconnects.
      if (!(error instanceof McpError) || error.code === closedCode) {
        await this.reset();
      }
      return { ok: false, content: this.describe(error, `calling '${tool}'`) };
    }
  }

  private describe(error: unknown, doing: string): string {
    const refused = policyFailure(error);
    if (refused !== null) return refused.message;
    if (error instanceof McpError) {
      if (error.code === timeoutCode) {
        return `The MCP server at ${this.where} did not answer within ${this.deps.callTimeoutMs} ms when ${doing}.`;
      }
      if (error.code === closedCode) {
        return `The connection to the MCP server at ${this.where} closed when ${doing}.`;
      }
      return `The MCP server at ${this.where} answered an error when ${doing}: ${brief(error.message)}`;
    }
    if (error instanceof StreamableHTTPError && error.code !== undefined && error.code > 0) {
      return `The MCP server at ${this.where} answered HTTP ${error.code} when ${doing}.`;
    }
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === 'number' && code >= 400) {
      return `The MCP server at ${this.where} answered HTTP ${code} when ${doing}.`;
    }
    const message = error instanceof Error ? brief(error.message) : 'it failed';
    return `The MCP server at ${this.where} failed when ${doing}: ${message}`;
  }

  private async reset(): Promise<void> {
    const connecting = this.connecting;
    this.connecting = null;
    if (connecting === null) return;
    const client = await connecting.catch(() => null);
    await client?.close().catch(() => undefined);
  }

  /** Ends the session (a Streamable HTTP session is deleted at the server, briefly waited for). */
  async close(): Promise<void> {
    const connecting = this.connecting;
    this.connecting = null;
    if (connecting === null) return;
    const client = await connecting.catch(() => null);
    if (client === null) return;
    const transport = client.transport;
    if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        transport.terminateSession().catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, closeWaitMs);
        }),
      ]);
      clearTimeout(timer);
    }
    await client.close().catch(() => undefined);
  }
}
