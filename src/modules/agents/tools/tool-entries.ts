// The entries of a ToolAgent's `configuration.tools`: where its tools come from. The platform's
// own tools are here; MCP servers and OpenAPI documents are described by the tool sources
// (src/modules/tools/tool-sources.ts).
import Type, { type TSchema } from 'typebox';

const description = Type.Optional(
  Type.String({ maxLength: 1000, description: 'What the tool is for, as the model reads it.' }),
);

/** An id of the account's objects (`kb_…`, `agent_…`, `pipe_…`). */
const ObjectId = (description: string) =>
  Type.String({ minLength: 1, maxLength: 100, description });

/**
 * The built-in entries' schemas, with the entry name's, `requires_approval`'s and `idempotent`'s
 * schemas of the tool sources (given by the wiring, so that every entry names and approves
 * alike). Searching and reading pages only read: their calls are idempotent, always.
 */
export function builtinToolEntrySchemas(
  ToolEntryName: TSchema,
  RequiresApprovalSchema: TSchema,
  IdempotentSchema: TSchema,
): TSchema[] {
  const RequiresApproval = Type.Optional(RequiresApprovalSchema);
  const Idempotent = Type.Optional(IdempotentSchema);
  return [
    Type.Object(
      {
        type: Type.Literal('knowledge_search'),
        name: ToolEntryName,
        description,
        knowledge_base_ids: Type.Array(ObjectId('kb_…'), { minItems: 1, maxItems: 20 }),
        top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
        requires_approval: RequiresApproval,
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('web_search'),
        name: ToolEntryName,
        description,
        result_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
        requires_approval: RequiresApproval,
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('read_page'),
        name: ToolEntryName,
        description,
        max_page_chars: Type.Optional(Type.Integer({ minimum: 500, maximum: 100_000 })),
        requires_approval: RequiresApproval,
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('agent'),
        name: ToolEntryName,
        description,
        agent_id: ObjectId('agent_…'),
        requires_approval: RequiresApproval,
        idempotent: Idempotent,
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('pipeline'),
        name: ToolEntryName,
        description,
        pipeline_id: ObjectId('pipe_…'),
        requires_approval: RequiresApproval,
        idempotent: Idempotent,
      },
      { additionalProperties: false },
    ),
  ];
}

export const builtinToolTypes = [
  'knowledge_search',
  'web_search',
  'read_page',
  'agent',
  'pipeline',
] as const;

/** The built-ins whose calls only read: run again after an interruption without asking. */
const readOnlyTypes: ReadonlySet<unknown> = new Set([
  'knowledge_search',
  'web_search',
  'read_page',
]);

/** Whether a call of the entry's tool may run again by itself after an interruption. */
export function isIdempotent(entry: Record<string, unknown>): boolean {
  return readOnlyTypes.has(entry.type) || entry.idempotent === true;
}

/** Whether `requires_approval` of an entry covers its tool `toolName`. */
export function needsApproval(entry: Record<string, unknown>, toolName: string): boolean {
  const rule = entry.requires_approval;
  if (rule === true) return true;
  return Array.isArray(rule) && rule.includes(toolName);
}
