// The tool sources an agent's tools come from besides the built-ins: MCP servers (`type: 'mcp'`) and
// OpenAPI-described HTTP APIs (`type: 'openapi'`), as entries of a ToolAgent's `configuration.tools`.
// Here: their schemas (composed by the agent type with the built-ins'), what saving an entry checks
// and stores (the address policy on its URL, a sealed bearer token), the stored form shown back
// (without the token), and a run's ToolBox of their tools. Entries of other types are left alone.
import Type, { type Static } from 'typebox';
import type { AppConfig, SecretSource } from '../../config/config.js';
import { InvalidParameterError } from '../../errors/app-error.js';
import { TargetAllowList } from '../../net/address-policy.js';
import type { Resolver } from '../../net/fetch-target.js';
import {
  checkToolUrl,
  createPolicyFetch,
  PolicyFetchError,
  type PolicyFetch,
} from '../../net/policy-fetch.js';
import type { TextPool } from '../../text-pool/text-pool.js';
import { requireSchema } from '../../validation/schema-validator.js';
import { McpSession, McpToolListCache, type McpConnection, type McpToolInfo } from './mcp-tools.js';
import {
  callOperation,
  OpenApiDocumentError,
  readOpenApiDocument,
  type OpenApiOperation,
} from './openapi-tools.js';
import { SecretBox, unreadableSecretMessage } from './secret-box.js';
import type { ToolBox, ToolOutcome, ToolSpec } from './tool.js';
import { sanitiseName, uniqueName } from './tool-text.js';

// ---- Schemas -------------------------------------------------------------------------------

/** An entry's `name`: unique among an agent's tools, the prefix of its tools' names. */
export const ToolEntryNameSchema = Type.String({
  pattern: '^[a-zA-Z0-9_-]{1,40}$',
  description:
    'Unique among the agent’s tool sources; prefixes its tools’ names (`<name>__<tool>`).',
});

/** `requires_approval`: every call of the source, or only the tools named (the source's own names). */
export const RequiresApprovalSchema = Type.Union(
  [Type.Boolean(), Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 200 })],
  {
    default: false,
    description:
      'true: a person approves every call of this source; a list: only calls of the tools named.',
  },
);

const HeadersSchema = Type.Record(
  Type.String({ pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$" }),
  Type.String({ maxLength: 2000, pattern: '^[^\\r\\n\\u0000]*$' }),
  {
    maxProperties: 20,
    additionalProperties: false,
    description:
      'Headers sent with every request; not secret (shown back as given). A token goes in bearer_token or bearer_token_env.',
  },
);

const BearerTokenEnvSchema = Type.String({
  pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$',
  description:
    'An environment variable of the service holding the bearer token; must start with the operator’s prefix (default TOOL_SECRET_).',
});

const BearerTokenSchema = Type.String({
  minLength: 1,
  maxLength: 8192,
  pattern: '^[^\\r\\n\\u0000]*$',
  description:
    'The bearer token; write-only: stored encrypted with the operator’s key, shown back as bearer_token_set.',
});

const BearerTokenSetSchema = Type.Boolean({
  description: 'Shown back when a token is stored; ignored when given (the stored token is kept).',
});

/** `idempotent`: whether a call interrupted by a stopped instance may simply run again. */
export const IdempotentSchema = Type.Boolean({
  default: false,
  description:
    'true: its calls only read, so a call its instance was stopped in runs again by itself. false (the default): such a call is made at most once — it waits, `interrupted`, for a person to approve it again or reject it.',
});

const ToolNameListSchema = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 200, description });

export const McpToolSourceSchema = Type.Object(
  {
    type: Type.Literal('mcp'),
    name: ToolEntryNameSchema,
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'The MCP server’s endpoint (http or https).',
    }),
    // Optional rather than defaulted: defaults are not filled inside the union of entry types.
    transport: Type.Optional(
      Type.Union([Type.Literal('streamable_http'), Type.Literal('sse')], {
        description:
          'streamable_http (current MCP; the default), or sse (the older HTTP+SSE transport).',
      }),
    ),
    headers: Type.Optional(HeadersSchema),
    bearer_token_env: Type.Optional(BearerTokenEnvSchema),
    bearer_token: Type.Optional(BearerTokenSchema),
    bearer_token_set: Type.Optional(BearerTokenSetSchema),
    allowed_tools: Type.Optional(
      ToolNameListSchema('The server’s tools the agent may use (default: all).'),
    ),
    requires_approval: Type.Optional(RequiresApprovalSchema),
    idempotent: Type.Optional(IdempotentSchema),
  },
  { additionalProperties: false },
);

export const OpenApiToolSourceSchema = Type.Object(
  {
    type: Type.Literal('openapi'),
    name: ToolEntryNameSchema,
    document: Type.Object(
      {
        openapi: Type.String({ pattern: '^3\\.[01]\\.', maxLength: 20 }),
        paths: Type.Record(Type.String(), Type.Unknown()),
      },
      {
        additionalProperties: true,
        description: 'An OpenAPI 3.0 or 3.1 document (JSON), at most 500 KB.',
      },
    ),
    base_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'Where requests go (default: the document’s first server).',
      }),
    ),
    operations: Type.Optional(
      ToolNameListSchema(
        'operationIds the agent may call (default: every operation, at most 100).',
      ),
    ),
    headers: Type.Optional(HeadersSchema),
    bearer_token_env: Type.Optional(BearerTokenEnvSchema),
    bearer_token: Type.Optional(BearerTokenSchema),
    bearer_token_set: Type.Optional(BearerTokenSetSchema),
    requires_approval: Type.Optional(RequiresApprovalSchema),
    idempotent: Type.Optional(IdempotentSchema),
  },
  { additionalProperties: false },
);

export type McpToolSource = Static<typeof McpToolSourceSchema>;
export type OpenApiToolSource = Static<typeof OpenApiToolSourceSchema>;

/** The entry types this file handles; others (the built-ins) are passed through untouched. */
export const externalToolSourceTypes = ['mcp', 'openapi'] as const;

/** Where a stored entry keeps its sealed token (never shown, never accepted from a client). */
const sealedField = 'bearer_token_encrypted';

type Entry = Record<string, unknown>;

function isEntry(value: unknown): value is Entry {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isExternal(entry: unknown): entry is Entry & { type: 'mcp' | 'openapi' } {
  return isEntry(entry) && (entry.type === 'mcp' || entry.type === 'openapi');
}

/** The stored entries as shown to their owner: tokens replaced by `bearer_token_set: true`. */
export function shownToolSources(entries: readonly unknown[]): unknown[] {
  return entries.map((entry) => {
    if (!isExternal(entry)) return entry;
    const { [sealedField]: sealed, bearer_token: _token, bearer_token_set: _set, ...rest } = entry;
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

interface Resolved {
  ok: true;
  headers: Record<string, string>;
}

/** A tool of the box: what the model sees, and how a call reaches it. */
interface BoxTool {
  spec: ToolSpec;
  call(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome>;
}

function approvalOf(requiresApproval: unknown, toolName: string): boolean {
  if (requiresApproval === true) return true;
  return Array.isArray(requiresApproval) && requiresApproval.includes(toolName);
}

export class ToolSources {
  private readonly allowList: TargetAllowList;
  private readonly policyFetch: PolicyFetch;
  private readonly box: SecretBox;
  private readonly lists: McpToolListCache;

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
  }

  /** The fetch tool connections use (the address policy, no redirects). */
  get fetch() {
    return this.policyFetch.fetch;
  }

  /**
   * The entries to store for `entries` (the agent's `configuration.tools`, already validated
   * against the agent type's schema): each MCP/OpenAPI entry checked (names unique, URL within the
   * address policy, `bearer_token_env` under the operator's prefix, the document's operations), a
   * given `bearer_token` sealed, and an entry given back without one keeping the sealed token of
   * the previous entry of the same name. Other entries are passed through. 400s name
   * `configuration.tools[i].<field>`.
   */
  async prepareForSave(
    accountId: string,
    entries: readonly unknown[],
    previousEntries: readonly unknown[] = [],
  ): Promise<unknown[]> {
    const names = new Map<string, number>();
    entries.forEach((entry, index) => {
      if (!isEntry(entry) || typeof entry.name !== 'string') return;
      const earlier = names.get(entry.name);
      if (earlier !== undefined) {
        throw new InvalidParameterError(
          `configuration.tools[${index}].name`,
          `'configuration.tools[${index}].name': '${entry.name}' is already the name of configuration.tools[${earlier}]; tool source names must be unique.`,
        );
      }
      names.set(entry.name, index);
    });
    const previousSealed = new Map<string, string>();
    for (const previous of previousEntries) {
      if (isExternal(previous) && typeof previous.name === 'string') {
        const sealed = previous[sealedField];
        if (typeof sealed === 'string')
          previousSealed.set(`${previous.type}\n${previous.name}`, sealed);
      }
    }
    const stored: unknown[] = [];
    for (const [index, entry] of entries.entries()) {
      if (!isExternal(entry)) {
        stored.push(entry);
        continue;
      }
      const param = `configuration.tools[${index}]`;
      stored.push(await this.prepareEntry(accountId, entry, param, previousSealed));
    }
    return stored;
  }

  private async prepareEntry(
    accountId: string,
    raw: Entry & { type: 'mcp' | 'openapi' },
    param: string,
    previousSealed: ReadonlyMap<string, string>,
  ): Promise<Entry> {
    const schema = raw.type === 'mcp' ? McpToolSourceSchema : OpenApiToolSourceSchema;
    const entry = requireSchema<Entry>(schema, raw, 'tool source', param);
    if (entry.type === 'mcp') {
      await this.checkUrl(String(entry.url), `${param}.url`);
    } else {
      let reading;
      try {
        reading = readOpenApiDocument(entry.document, entry.operations as string[] | undefined);
      } catch (error) {
        if (!(error instanceof OpenApiDocumentError)) throw error;
        throw new InvalidParameterError(
          `${param}.${error.field}`,
          `'${param}.${error.field}': ${error.message}`,
        );
      }
      if (entry.base_url === undefined && reading.defaultBaseUrl === null) {
        throw new InvalidParameterError(
          `${param}.base_url`,
          `'${param}.base_url' is required: the document's first server gives no absolute http(s) URL.`,
        );
      }
      const baseField =
        entry.base_url === undefined ? `${param}.document.servers` : `${param}.base_url`;
      await this.checkUrl(
        (entry.base_url as string | undefined) ?? reading.defaultBaseUrl ?? '',
        baseField,
      );
    }
    const headerNames = Object.keys((entry.headers as Record<string, string> | undefined) ?? {});
    const reserved = headerNames.find((name) =>
      [
        'authorization',
        'host',
        'content-length',
        'transfer-encoding',
        'connection',
        'cookie',
        'mcp-session-id',
        'mcp-protocol-version',
      ].includes(name.toLowerCase()),
    );
    if (reserved !== undefined) {
      throw new InvalidParameterError(
        `${param}.headers`,
        `'${param}.headers' may not set '${reserved}'${reserved.toLowerCase() === 'authorization' ? ': give the token as bearer_token (stored encrypted) or bearer_token_env' : ''}.`,
      );
    }
    const tokenEnv = entry.bearer_token_env;
    const token = entry.bearer_token;
    if (typeof tokenEnv === 'string') {
      const prefix = this.options.tools.secretEnvPrefix;
      if (
        !tokenEnv.startsWith(prefix) ||
        tokenEnv.length === prefix.length ||
        tokenEnv === 'TOOL_SECRETS_KEY'
      ) {
        throw new InvalidParameterError(
          `${param}.bearer_token_env`,
          `'${param}.bearer_token_env' must name an environment variable starting with ${prefix} (the only ones tool sources may read).`,
        );
      }
      if (typeof token === 'string') {
        throw new InvalidParameterError(
          `${param}.bearer_token`,
          `'${param}.bearer_token' and bearer_token_env cannot both be given; choose one.`,
        );
      }
    }
    const { bearer_token: _token, bearer_token_set: _set, ...kept } = entry;
    if (typeof token === 'string') {
      return { ...kept, [sealedField]: this.box.seal(accountId, token, `${param}.bearer_token`) };
    }
    const previous = previousSealed.get(`${String(entry.type)}\n${String(entry.name)}`);
    // Given back without a token (as shown, or edited): the stored one stays, unless the entry now
    // reads its token from the environment.
    if (previous !== undefined && typeof tokenEnv !== 'string')
      return { ...kept, [sealedField]: previous };
    return kept;
  }

  private async checkUrl(url: string, param: string): Promise<void> {
    try {
      await checkToolUrl(url, {
        allowList: this.allowList,
        ...(this.options.resolve === undefined ? {} : { resolve: this.options.resolve }),
      });
    } catch (error) {
      if (!(error instanceof PolicyFetchError)) throw error;
      // A name that does not resolve today may tomorrow: the connection checks it again anyway.
      if (error.reason === 'unreachable') return;
      const hint =
        error.reason === 'blocked_address'
          ? ' (the operator may allow it with tools.allowed_private_targets)'
          : '';
      throw new InvalidParameterError(param, `'${param}': ${error.message}${hint}`);
    }
  }

  /** The stored entries as shown to their owner (no token). */
  shown(entries: readonly unknown[]): unknown[] {
    return shownToolSources(entries);
  }

  /** The headers of an entry's requests, its token included; or why the token is unavailable. */
  private headersOf(accountId: string, entry: Entry): Resolved | { ok: false; message: string } {
    const headers: Record<string, string> = {
      ...((entry.headers as Record<string, string> | undefined) ?? {}),
    };
    let token: string | null = null;
    if (typeof entry.bearer_token_env === 'string') {
      token = this.options.secrets.get(entry.bearer_token_env) ?? null;
      if (token === null) {
        return {
          ok: false,
          message: `The environment variable ${entry.bearer_token_env} holding this tool source's token is not set on the service.`,
        };
      }
    } else if (typeof entry[sealedField] === 'string') {
      token = this.box.open(accountId, entry[sealedField]);
      if (token === null) return { ok: false, message: unreadableSecretMessage };
    }
    if (token !== null) headers.authorization = `Bearer ${token}`;
    return { ok: true, headers };
  }

  /**
   * A run's tools from the MCP and OpenAPI entries of `entries` (other types are ignored: the
   * caller merges their tools): MCP tool lists from the cache or the servers (in parallel), names
   * `<entry>__<tool>`. A source that cannot give its tools is listed in `unavailable`; only the
   * signal aborting rejects. Close the box when the run ends or pauses.
   */
  async open(
    accountId: string,
    entries: readonly unknown[],
    signal: AbortSignal,
  ): Promise<OpenedToolSources> {
    const sessions: McpSession[] = [];
    const unavailable: UnavailableToolSource[] = [];
    const deps = {
      fetch: this.policyFetch.fetch,
      callTimeoutMs: this.options.tools.callTimeoutMs,
      maxResultChars: this.options.tools.maxResultChars,
      maxResponseBytes: this.options.tools.maxResponseBytes,
      text: this.options.text,
      clientInfo: this.options.clientInfo,
    };
    const perEntry = await Promise.all(
      entries.filter(isExternal).map(async (entry): Promise<BoxTool[]> => {
        const source = String(entry.name);
        const auth = this.headersOf(accountId, entry);
        if (entry.type === 'openapi')
          return this.openApiTools(entry, source, auth, deps, unavailable);
        if (!auth.ok) {
          unavailable.push({ source, message: auth.message });
          return [];
        }
        const connection: McpConnection = {
          url: String(entry.url),
          transport: entry.transport === 'sse' ? 'sse' : 'streamable_http',
          headers: auth.headers,
        };
        const session = new McpSession(connection, deps);
        sessions.push(session);
        const key = this.lists.key(accountId, connection);
        let listed = this.lists.get(key);
        if (listed === undefined) {
          try {
            listed = await session.listTools(signal);
          } catch (error) {
            if (signal.aborted) throw error;
            unavailable.push({ source, message: (error as Error).message });
            return [];
          }
          this.lists.set(key, listed);
        }
        const allowed = Array.isArray(entry.allowed_tools)
          ? new Set(entry.allowed_tools as string[])
          : null;
        return listed
          .filter((tool: McpToolInfo) => allowed === null || allowed.has(tool.name))
          .map((tool) => ({
            spec: {
              name: `${source}__${tool.name}`,
              description: tool.description,
              parameters: tool.inputSchema,
              source,
              requiresApproval: approvalOf(entry.requires_approval, tool.name),
              idempotent: entry.idempotent === true,
            },
            call: (args, callSignal) => session.call(tool.name, args, callSignal),
          }));
      }),
    ).catch(async (error: unknown) => {
      await Promise.all(sessions.map((session) => session.close()));
      throw error;
    });
    const byName = new Map<string, BoxTool>();
    const taken = new Set<string>();
    for (const tool of perEntry.flat()) {
      const name = uniqueName(sanitiseName(tool.spec.name, 64), taken, 64);
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

  private openApiTools(
    entry: Entry,
    source: string,
    auth: Resolved | { ok: false; message: string },
    deps: { fetch: PolicyFetch['fetch']; callTimeoutMs: number; maxResultChars: number },
    unavailable: UnavailableToolSource[],
  ): BoxTool[] {
    let operations: OpenApiOperation[];
    let baseUrl: string;
    try {
      const reading = readOpenApiDocument(entry.document, entry.operations as string[] | undefined);
      operations = reading.operations;
      baseUrl = (entry.base_url as string | undefined) ?? reading.defaultBaseUrl ?? '';
    } catch (error) {
      // Stored entries were read when saved; a document that no longer reads gives no tools.
      if (!(error instanceof OpenApiDocumentError)) throw error;
      unavailable.push({
        source,
        message: `The stored OpenAPI document cannot be read: ${error.message}`,
      });
      return [];
    }
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
            fetch: deps.fetch,
            baseUrl,
            headers: auth.headers,
            timeoutMs: deps.callTimeoutMs,
            maxResultChars: deps.maxResultChars,
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
