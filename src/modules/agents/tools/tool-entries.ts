// The entries of a ToolAgent's `configuration.tools`: where its tools come from. The platform's
// own tools are here; MCP servers and OpenAPI documents are described by the tool sources
// (src/modules/tools/tool-sources.ts).
import Type, { type TSchema } from 'typebox';
import { ObjectIdSchema } from '../../../http/schemas/common.js';
import { externalToolEntrySchemas } from './external-tools.js';
import { RequiresApprovalSchema, ToolEntryNameSchema } from '../../tools/module.js';

/** An entry's name: the tool's name as the model sees it (or its prefix, for a server's tools). */
export const ToolEntryName = ToolEntryNameSchema;

/** `requires_approval`: every call of the entry's tools, or the named ones, wait for a person. */
export const RequiresApproval = Type.Optional(RequiresApprovalSchema);

const description = Type.Optional(
  Type.String({ maxLength: 1000, description: 'What the tool is for, as the model reads it.' }),
);

export const builtinToolEntrySchemas: TSchema[] = [
  Type.Object(
    {
      type: Type.Literal('knowledge_search'),
      name: ToolEntryName,
      description,
      knowledge_base_ids: Type.Array(ObjectIdSchema('kb_…'), { minItems: 1, maxItems: 20 }),
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
      agent_id: ObjectIdSchema('agent_…'),
      requires_approval: RequiresApproval,
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('pipeline'),
      name: ToolEntryName,
      description,
      pipeline_id: ObjectIdSchema('pipe_…'),
      requires_approval: RequiresApproval,
    },
    { additionalProperties: false },
  ),
];

export const builtinToolTypes = [
  'knowledge_search',
  'web_search',
  'read_page',
  'agent',
  'pipeline',
] as const;

export const toolEntrySchema = Type.Union([
  ...externalToolEntrySchemas,
  ...builtinToolEntrySchemas,
]);

/** Whether `requires_approval` of an entry covers its tool `toolName`. */
export function needsApproval(entry: Record<string, unknown>, toolName: string): boolean {
  const rule = entry.requires_approval;
  if (rule === true) return true;
  return Array.isArray(rule) && rule.includes(toolName);
}
