// The tool sources an agent's tools come from besides the built-ins: MCP servers (`type: 'mcp'`) and
// OpenAPI-described HTTP APIs (`type: 'openapi'`), as entries of a ToolAgent's `configuration.tools`
// (their schemas are tool-entries.ts'). Here: saving their entries (the checks are
// source-saving.ts'), the stored form shown back (without the token), and a run's tools of theirs,
// with one connection pool and tool-list cache for the process. Entries of other types are left
// alone.
import type { AppConfig, SecretSource } from '../../config/config.js';
import { InvalidParameterError } from '../../errors/app-error.js';
import { TargetAllowList } from '../../net/address-policy.js';
import type { Resolver } from '../../net/fetch-target.js';
import { createPolicyFetch, type PolicyFetch } from '../../net/policy-fetch.js';
import type { TextPool } from '../../text-pool/text-pool.js';
import type * as McpSessionModule from './mcp-session.js';
import type { McpSession } from './mcp-session.js';
import {
  McpToolListCache,
  type McpConnection,
  type McpDeps,
  type McpToolInfo,
} from './mcp-tools.js';
import { callOperation } from './openapi-calls.js';
import { OpenApiDocumentError } from './openapi-expander.js';
import { readOpenApiDocument, type OpenApiOperation } from './openapi-tools.js';
import { SecretBox, unreadableSecretMessage } from './secret-box.js';
import { preparedSource, sealedTokensOf, type SourceSaving } from './source-saving.js';
import type { ToolBox, ToolOutcome, ToolSpec } from './tool.js';
import {
  isSourceEntry,
  sealedTokenField,
  type McpEntry,
  type OpenApiEntry,
  type StoredSourceEntry,
  type StoredToolEntry,
  type ToolEntry,
} from './tool-entries.js';
import { ToolNames } from './tool-names.js';

/**
 * The MCP session (./mcp-session.ts, over the official SDK), loaded with the first MCP source a
 * run uses: the SDK and its schemas take ~25 MiB that a service without MCP servers never needs.
 */
function loadMcpSession(): Promise<typeof McpSessionModule> {
  return (sessionModule ??= import('./mcp-session.js'));
}
let sessionModule: Promise<typeof McpSessionModule> | undefined;

/** The stored entries as shown to their owner: tokens replaced by `bearer_token_set: true`. */
export function shownToolSources(entries: readonly StoredToolEntry[]): ToolEntry[] {
  return entries.map((entry) => {
    if (!isSourceEntry(entry)) return entry;
    const {
      [sealedTokenField]: sealed,
      bearer_token: _token,
      bearer_token_set: _set,
      ...rest
    } = entry;
    return typeof sealed === 'string' ? { ...rest, bearer_token_set: true } : rest;
  });
}

// ---- The service ---------------------------------------------------------------------------

export interface ToolSourcesOptions {
  tools: AppConfig['tools'];
  secrets: SecretSource;
  /** How the platform introduces itself to MCP servers. */
  clientInfo: { name: string; version: string };
  /** Host-name resolution (tests inject one); the system's by default. */
  resolve?: Resolver;
  /** The text threads, where large answers of MCP servers are parsed and reduced. */
  text: TextPool;
}

/** A source that could not give its tools to this run (a server down, an unreadable token). */
export interface UnavailableToolSource {
  source: string;
  message: string;
}

/** A run's tools from the MCP and OpenAPI entries, with the sources that gave none. */
export interface OpenedToolSources extends ToolBox {
  readonly unavailable: readonly UnavailableToolSource[];
}

/** An entry's request headers with its token, or why its token cannot be had. */
type Headers = { ok: true; headers: Record<string, string> } | { ok: false; message: string };

/** A tool of the box: what the model sees, and how a call reaches it. */
interface BoxTool {
  spec: ToolSpec;
  call(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome>;
}

/** Whether `requires_approval` of an entry covers its tool `toolName` (the source's own name). */
function approvalOf(requiresApproval: boolean | string[] | undefined, toolName: string): boolean {
  if (requiresApproval === true) return true;
  return Array.isArray(requiresApproval) && requiresApproval.includes(toolName);
}

export class ToolSources {
  private readonly allowList: TargetAllowList;
  private readonly policyFetch: PolicyFetch;
  private readonly box: SecretBox;
  private readonly lists: McpToolListCache;
  /** What saving a source needs (the address policy, the token box). */
  private readonly saving: SourceSaving;
  /** What every MCP session of a run is given. */
  private readonly sessionDependencies: McpDeps;

  constructor(private readonly options: ToolSourcesOptions) {
    this.allowList = TargetAllowList.parse(
      options.tools.allowedPrivateTargets,
      'tools.allowed_private_targets',
    );
    const callTimeoutMs = options.tools.callTimeoutMs;
    this.policyFetch = createPolicyFetch({
      allowList: this.allowList,
      ...(options.resolve === undefined ? {} : { resolve: options.resolve }),
      connectTimeoutMs: Math.min(callTimeoutMs, 10_000),
      headersTimeoutMs: callTimeoutMs,
      // Its bound on a body's (an event stream's) whole life never cuts one answer within
      // tools.max_response_bytes, which the MCP sessions apply to each answer themselves.
      maxResponseBytes: Math.max(32 * 1024 * 1024, options.tools.maxResponseBytes),
    });
    this.box = new SecretBox(options.secrets);
    this.lists = new McpToolListCache(options.tools.listCacheTtlMs);
    this.saving = {
      allowList: this.allowList,
      resolve: options.resolve,
      secretEnvPrefix: options.tools.secretEnvPrefix,
      box: this.box,
    };
    this.sessionDependencies = {
      fetch: this.policyFetch.fetch,
      callTimeoutMs: options.tools.callTimeoutMs,
      maxResultChars: options.tools.maxResultChars,
      maxResponseBytes: options.tools.maxResponseBytes,
      text: options.text,
      clientInfo: options.clientInfo,
    };
  }

  /** The fetch tool connections use (the address policy, no redirects). */
  get fetch() {
    return this.policyFetch.fetch;
  }

  /**
   * The entries to store for `entries` (the agent's `configuration.tools`, validated against the
   * entries' schema): names unique, and each MCP/OpenAPI entry checked and its token sealed
   * (source-saving.ts); an entry given back without a token keeps the sealed token of the
   * previous entry of the same name. Other entries are passed through. 400s name
   * `configuration.tools[i].<field>`.
   */
  async prepareForSave(
    accountId: string,
    entries: readonly StoredToolEntry[],
    previousEntries: readonly StoredToolEntry[] = [],
  ): Promise<StoredToolEntry[]> {
    const names = new Map<string, number>();
    entries.forEach((entry, index) => {
      const earlier = names.get(entry.name);
      if (earlier !== undefined) {
        throw new InvalidParameterError(
          `configuration.tools[${index}].name`,
          `'configuration.tools[${index}].name': '${entry.name}' is already the name of configuration.tools[${earlier}]; tool source names must be unique.`,
        );
      }
      names.set(entry.name, index);
    });
    const previousSealed = sealedTokensOf(previousEntries);
    const stored: StoredToolEntry[] = [];
    for (const [index, entry] of entries.entries()) {
      stored.push(
        isSourceEntry(entry)
          ? await preparedSource(
              accountId,
              entry,
              `configuration.tools[${index}]`,
              previousSealed,
              this.saving,
            )
          : entry,
      );
    }
    return stored;
  }

  /** The stored entries as shown to their owner (no token). */
  shown(entries: readonly StoredToolEntry[]): ToolEntry[] {
    return shownToolSources(entries);
  }

  /** The headers of an entry's requests, its token included; or why the token is unavailable. */
  private headersOf(accountId: string, entry: StoredSourceEntry): Headers {
    const headers: Record<string, string> = { ...entry.headers };
    let token: string | null = null;
    const sealed = entry[sealedTokenField];
    if (entry.bearer_token_env !== undefined) {
      token = this.options.secrets.get(entry.bearer_token_env) ?? null;
      if (token === null) {
        return {
          ok: false,
          message: `The environment variable ${entry.bearer_token_env} holding this tool source's token is not set on the service.`,
        };
      }
    } else if (sealed !== undefined) {
      token = this.box.open(accountId, sealed);
      if (token === null) return { ok: false, message: unreadableSecretMessage };
    }
    if (token !== null) headers.authorization = `Bearer ${token}`;
    return { ok: true, headers };
  }

  /**
   * A run's tools from the MCP and OpenAPI entries of `entries` (other types are ignored: the
   * caller merges their tools): MCP tool lists from the cache or the servers (in parallel), each
   * tool named `<entry>__<tool>` by `names` (the run's, whose names the caller's tools may hold
   * already). A source that cannot give its tools is listed in `unavailable`; only the signal
   * aborting rejects. Close the box when the run ends or pauses.
   */
  async open(
    accountId: string,
    entries: readonly StoredToolEntry[],
    signal: AbortSignal,
    names: ToolNames = new ToolNames(),
  ): Promise<OpenedToolSources> {
    const sessions: McpSession[] = [];
    const unavailable: UnavailableToolSource[] = [];
    const perEntry = await Promise.all(
      entries.filter(isSourceEntry).map(async (entry): Promise<BoxTool[]> => {
        const auth = this.headersOf(accountId, entry);
        if (entry.type === 'openapi') return this.openApiTools(entry, auth, unavailable);
        if (!auth.ok) {
          unavailable.push({ source: entry.name, message: auth.message });
          return [];
        }
        const connection: McpConnection = {
          url: entry.url,
          transport: entry.transport === 'sse' ? 'sse' : 'streamable_http',
          headers: auth.headers,
        };
        const { McpSession: Session } = await loadMcpSession();
        const session = new Session(connection, this.sessionDependencies);
        sessions.push(session);
        const key = this.lists.key(accountId, connection);
        return this.mcpTools(entry, session, key, signal, unavailable);
      }),
    ).catch(async (error: unknown) => {
      await Promise.all(sessions.map((session) => session.close()));
      throw error;
    });
    const byName = new Map<string, BoxTool>();
    for (const tool of perEntry.flat()) {
      const name = names.take(tool.spec.name);
      byName.set(name, { ...tool, spec: { ...tool.spec, name } });
    }
    return {
      tools: [...byName.values()].map((tool) => tool.spec),
      unavailable,
      async call(name, args, callSignal) {
        if (callSignal.aborted) throw callSignal.reason;
        const tool = byName.get(name);
        if (tool === undefined) return { ok: false, content: `There is no tool named '${name}'.` };
        return tool.call(args, callSignal);
      },
      async close() {
        await Promise.all(sessions.map((session) => session.close()));
      },
    };
  }

  /** An MCP server's tools (from the cache, or listed now), those the entry allows. */
  private async mcpTools(
    entry: StoredSourceEntry & McpEntry,
    session: McpSession,
    key: string,
    signal: AbortSignal,
    unavailable: UnavailableToolSource[],
  ): Promise<BoxTool[]> {
    let listed = this.lists.get(key);
    if (listed === undefined) {
      try {
        listed = await session.listTools(signal);
      } catch (error) {
        if (signal.aborted) throw error;
        unavailable.push({ source: entry.name, message: (error as Error).message });
        return [];
      }
      this.lists.set(key, listed);
    }
    const allowed = entry.allowed_tools === undefined ? null : new Set(entry.allowed_tools);
    return listed
      .filter((tool: McpToolInfo) => allowed === null || allowed.has(tool.name))
      .map((tool) => ({
        spec: {
          name: `${entry.name}__${tool.name}`,
          description: tool.description,
          parameters: tool.inputSchema,
          source: entry.name,
          requiresApproval: approvalOf(entry.requires_approval, tool.name),
          idempotent: entry.idempotent === true,
        },
        call: (args, callSignal) => session.call(tool.name, args, callSignal),
      }));
  }

  private openApiTools(
    entry: StoredSourceEntry & OpenApiEntry,
    auth: Headers,
    unavailable: UnavailableToolSource[],
  ): BoxTool[] {
    const source = entry.name;
    let operations: OpenApiOperation[];
    let baseUrl: string;
    try {
      const reading = readOpenApiDocument(entry.document, entry.operations);
      operations = reading.operations;
      baseUrl = entry.base_url ?? reading.defaultBaseUrl ?? '';
    } catch (error) {
      // Stored entries were read when saved; a document that no longer reads gives no tools.
      if (!(error instanceof OpenApiDocumentError)) throw error;
      unavailable.push({
        source,
        message: `The stored OpenAPI document cannot be read: ${error.message}`,
      });
      return [];
    }
    const { callTimeoutMs, maxResultChars } = this.options.tools;
    return operations.map((operation) => ({
      spec: {
        name: `${source}__${operation.operationId}`,
        description: operation.description,
        parameters: operation.parameters,
        source,
        requiresApproval: approvalOf(entry.requires_approval, operation.operationId),
        idempotent: entry.idempotent === true,
      },
      call: (args, signal) => {
        if (!auth.ok) return Promise.resolve({ ok: false, content: auth.message });
        return callOperation(
          operation,
          args,
          {
            fetch: this.policyFetch.fetch,
            baseUrl,
            headers: auth.headers,
            timeoutMs: callTimeoutMs,
            maxResultChars,
          },
          signal,
        );
      },
    }));
  }

  /** Forgets every cached tool list (tests; an operator's reload). */
  clearCache(): void {
    this.lists.clear();
  }

  /** Closes pooled connections (service shutdown). */
  async close(): Promise<void> {
    await this.policyFetch.close();
  }
}
