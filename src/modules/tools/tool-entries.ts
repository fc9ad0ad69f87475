// The entries of a ToolAgent's `configuration.tools`: where its tools come from. One TypeBox union
// of every type — the outside sources (an MCP server, an OpenAPI-described HTTP API) and the
// platform's own tools — whose static types are what saving checks and stores and what a run
// opens: an entry is validated once, against this schema, and typed from there on.
import Type, { type Static } from 'typebox';

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

export const McpEntrySchema = Type.Object(
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

export const OpenApiEntrySchema = Type.Object(
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

/** A built-in's `description`: what the model reads of the tool instead of the default. */
const DescriptionSchema = Type.Optional(
  Type.String({ maxLength: 1000, description: 'What the tool is for, as the model reads it.' }),
);

/** An id of the account's objects (`kb_…`, `agent_…`, `pipe_…`). */
const ObjectId = (description: string) =>
  Type.String({ minLength: 1, maxLength: 100, description });

const RequiresApproval = Type.Optional(RequiresApprovalSchema);
const Idempotent = Type.Optional(IdempotentSchema);

// Searching and reading pages only read: their calls are idempotent, always (no `idempotent`).

export const KnowledgeSearchEntrySchema = Type.Object(
  {
    type: Type.Literal('knowledge_search'),
    name: ToolEntryNameSchema,
    description: DescriptionSchema,
    knowledge_base_ids: Type.Array(ObjectId('kb_…'), { minItems: 1, maxItems: 20 }),
    top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
    requires_approval: RequiresApproval,
  },
  { additionalProperties: false },
);

export const WebSearchEntrySchema = Type.Object(
  {
    type: Type.Literal('web_search'),
    name: ToolEntryNameSchema,
    description: DescriptionSchema,
    result_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
    requires_approval: RequiresApproval,
  },
  { additionalProperties: false },
);

export const ReadPageEntrySchema = Type.Object(
  {
    type: Type.Literal('read_page'),
    name: ToolEntryNameSchema,
    description: DescriptionSchema,
    max_page_chars: Type.Optional(Type.Integer({ minimum: 500, maximum: 100_000 })),
    requires_approval: RequiresApproval,
  },
  { additionalProperties: false },
);

export const AgentEntrySchema = Type.Object(
  {
    type: Type.Literal('agent'),
    name: ToolEntryNameSchema,
    description: DescriptionSchema,
    agent_id: ObjectId('agent_…'),
    requires_approval: RequiresApproval,
    idempotent: Idempotent,
  },
  { additionalProperties: false },
);

export const PipelineEntrySchema = Type.Object(
  {
    type: Type.Literal('pipeline'),
    name: ToolEntryNameSchema,
    description: DescriptionSchema,
    pipeline_id: ObjectId('pipe_…'),
    requires_approval: RequiresApproval,
    idempotent: Idempotent,
  },
  { additionalProperties: false },
);

/** One entry of a ToolAgent's `tools`: an outside source, or a built-in. */
export const ToolEntrySchema = Type.Union([
  McpEntrySchema,
  OpenApiEntrySchema,
  KnowledgeSearchEntrySchema,
  WebSearchEntrySchema,
  ReadPageEntrySchema,
  AgentEntrySchema,
  PipelineEntrySchema,
]);

export type ToolEntry = Static<typeof ToolEntrySchema>;
export type McpEntry = Static<typeof McpEntrySchema>;
export type OpenApiEntry = Static<typeof OpenApiEntrySchema>;
export type KnowledgeSearchEntry = Static<typeof KnowledgeSearchEntrySchema>;
export type WebSearchEntry = Static<typeof WebSearchEntrySchema>;
export type ReadPageEntry = Static<typeof ReadPageEntrySchema>;
export type AgentEntry = Static<typeof AgentEntrySchema>;
export type PipelineEntry = Static<typeof PipelineEntrySchema>;

/** The platform's own tools (the built-ins' table is builtin-tools.ts). */
export type BuiltinEntry = Exclude<ToolEntry, McpEntry | OpenApiEntry>;
export type BuiltinType = BuiltinEntry['type'];

/** Where a stored entry keeps its sealed token (never shown, never accepted from a client). */
export const sealedTokenField = 'bearer_token_encrypted';

/** An outside source as stored: a given `bearer_token` replaced by its sealed form. */
export type StoredSourceEntry = (McpEntry | OpenApiEntry) & {
  [sealedTokenField]?: string | undefined;
};

/** An entry as stored, and as a run opens it. A validated entry is one already. */
export type StoredToolEntry = BuiltinEntry | StoredSourceEntry;

/** Whether the entry is an outside source (MCP or OpenAPI) rather than a built-in. */
export function isSourceEntry<T extends StoredToolEntry>(
  entry: T,
): entry is Extract<T, StoredSourceEntry> {
  return entry.type === 'mcp' || entry.type === 'openapi';
}
