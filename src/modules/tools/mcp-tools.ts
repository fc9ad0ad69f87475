// An MCP server as a tool source: what is known without the SDK — where a server is, its tools as
// listed, and the lists kept a while per account, URL and credentials, so a run whose list is
// cached connects only when the model calls a tool. The session over the official SDK's Client
// (./mcp-session.ts) is loaded on first use (by ./tool-sources.ts): the SDK and its schemas take
// ~25 MiB that a service without MCP tool sources never needs.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { FetchFunction } from '../../net/policy-fetch.js';
import type { TextPool } from '../../text-pool/text-pool.js';

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
  /** `tools.max_response_bytes`: an answer's body (or a long-lived stream's event) read at most. */
  maxResponseBytes: number;
  /** Where large answers are parsed and reduced. */
  text: TextPool;
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
