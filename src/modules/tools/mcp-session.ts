// One MCP server's session for one run, over the official SDK's Client on Streamable HTTP (or the
// older HTTP+SSE transport), every request through the policy fetch. A server's tool list is read
// page by page (at most 200 tools). A call answers the tool's text (non-text content described,
// structured content as JSON when there is no text), cut at a bound; the tool's own error, a
// timeout or a server gone away answer `ok: false`, and only the run's signal rejects. Every answer
// is read within bounds before the SDK parses it (mcp-answers.ts). Loaded on first use
// (`loadMcpSession` in ./tool-sources.ts), with the SDK.
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
import type { FetchFunction } from '../../net/policy-fetch.js';
import { shown } from '../../net/web-fetch-error.js';
import { boundedMcpFetch, refusalError, refusalOf, type AnswerRefusal } from './mcp-answers.js';
import type { McpConnection, McpDeps, McpToolInfo } from './mcp-tools.js';
import type { ToolOutcome } from './tool.js';
import { boundedSchema, maxDescriptionChars, maxMcpTools, mcpResultText } from './mcp-messages.js';
import { brief, cutText, policyFailure } from './tool-text.js';

const maxListPages = 20;
/** How long closing a session may wait for the server's answer to the DELETE. */
const closeWaitMs = 2000;

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

/** One server's connection for one run: opened on first need, reused, closed with the run. */
export class McpSession {
  private connecting: Promise<Client> | null = null;
  /** The signals of the requests under way (a cut stream fails them all). */
  private readonly underWay = new Set<AbortController>();
  private readonly fetch: FetchFunction;

  constructor(
    private readonly connection: McpConnection,
    private readonly deps: McpDeps,
  ) {
    this.fetch = boundedMcpFetch(deps.fetch, deps, {
      onStreamCut: (refusal) => this.failUnderWay(refusal),
    });
  }

  /**
   * Runs one request of the SDK with a signal of its own that follows `signal`. The SDK adds an
   * abort listener to a request's signal and never removes it; on a signal made by
   * `AbortSignal.any` (a run's is) Node keeps the signal alive while it has a listener, and
   * through that listener the whole Client, for good once the run has ended without aborting. Our
   * own controller's signal dies with the request, and the listener on `signal` is removed after.
   */
  private async request<T>(
    signal: AbortSignal,
    send: (own: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const own = new AbortController();
    const abort = () => own.abort(signal.reason);
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
    this.underWay.add(own);
    try {
      return await send(own.signal);
    } finally {
      this.underWay.delete(own);
      signal.removeEventListener('abort', abort);
    }
  }

  /** A long-lived stream carrying the answers was cut: the requests waiting on it fail. */
  private failUnderWay(refusal: AnswerRefusal): void {
    for (const own of this.underWay) own.abort(refusalError(refusal));
  }

  private get where(): string {
    return shown(this.connection.url);
  }

  private transport(): Transport {
    const url = new URL(this.connection.url);
    const requestInit: RequestInit = { headers: { ...this.connection.headers } };
    if (this.connection.transport === 'sse') {
      return new SSEClientTransport(url, { fetch: this.fetch, requestInit });
    }
    return new StreamableHTTPClientTransport(url, {
      fetch: this.fetch,
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
          await this.request(signal, (own) =>
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
        const answer = await this.request(signal, (own) =>
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
      const result = await this.request(signal, (own) =>
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
      if (
        !(error instanceof McpError) ||
        error.code === closedCode ||
        refusalOf(error)?.streamCut === true
      ) {
        await this.reset();
      }
      return { ok: false, content: this.describe(error, `calling '${tool}'`) };
    }
  }

  private describe(error: unknown, doing: string): string {
    const refused = policyFailure(error);
    if (refused !== null) return refused.message;
    const bounded = refusalOf(error);
    if (bounded?.reason === 'too_large') {
      return `The MCP server at ${this.where} answered more than ${bounded.detail} bytes when ${doing}; the rest was not read (the limit is tools.max_response_bytes).`;
    }
    if (bounded !== null) {
      return `The answer of the MCP server at ${this.where} when ${doing} could not be read: ${bounded.detail}.`;
    }
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
