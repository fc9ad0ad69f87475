// The HTTP shapes of pipelines: their stages and visual layouts as sent and as answered, the bodies
// of create, change and execute, and the answers of each route.
import Type from 'typebox';
import {
  commonParameters,
  ModelNameSchema,
  NullableTimestamp,
  ObjectIdSchema,
  Timestamp,
  UserIdSchema,
} from '../../http/schemas/common.js';
import type { Execution } from '../executions/execution.js';
import { reservedKeysNote } from '../../validation/safe-keys.js';
import { inputSchemaLimits } from './input-schema.js';

export const PipelineIdParams = Type.Object({ pipeline_id: Type.String({ maxLength: 100 }) });

const pathDescription =
  'A path expression: `$.input.<name>` (an input of the run), `$.stages.<earlier stage>.<key>` (an earlier stage’s output) or, in output_mapping, `$.output.<key>` (the stage agent’s result). Keys may go deeper (`.a.b`, `[0]`); a stage name that is not a plain key is written `$.stages["my stage"].key`. No key or stage name of a path may be `__proto__`, `constructor` or `prototype` (400 `invalid_parameter`).';

export const StageInputSchema = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: `Unique within the pipeline. ${reservedKeysNote}`,
    }),
    agent_id: Type.String({
      maxLength: 100,
      description: 'An agent of the account, or a public one.',
    }),
    input_mapping: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
        description: `Agent input → ${pathDescription} Input names: query, data, urls, conversation_id, model (replaces the stage agent’s model), or parameters.<name> (e.g. "parameters.result_count"). No name, nor any dotted part of one, may be \`__proto__\`, \`constructor\` or \`prototype\` (400 \`invalid_parameter\` naming it).`,
      }),
    ),
    output_mapping: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
        description: `Output name → \`$.output.<key>\`: names later stages (and the pipeline output) can use besides the result’s own keys. ${reservedKeysNote}`,
      }),
    ),
    timeout_ms: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: 600_000,
        description: 'Per attempt; default: none beyond the models’ own.',
      }),
    ),
    retries: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 5,
        description: 'Extra attempts after a failed run of the agent (not after bad input).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const StageSchema = Type.Object({
  id: Type.String({
    description: 'stage_…, assigned by the service (kept when a stage keeps its name).',
  }),
  name: Type.String(),
  agent_id: Type.String(),
  input_mapping: Type.Record(Type.String(), Type.String()),
  output_mapping: Type.Record(Type.String(), Type.String()),
  timeout_ms: Type.Optional(Type.Integer()),
  retries: Type.Optional(Type.Integer()),
});

const coordinate = (description: string) =>
  Type.Number({ minimum: -1e9, maximum: 1e9, description });

const layoutNodeDescription =
  'A node of the editor’s canvas (React Flow’s shape). `id` is free (a generated layout uses the stage ids), `position` is its top-left corner in canvas pixels, `type` and `data` (e.g. `{label}`) are the editor’s own; other fields are kept as given.';

/** What a client may send: `{id, position: {x, y}}` or the short `{id, x, y}`. */
const LayoutNodeInputSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 100, description: 'Unique within the layout.' }),
    position: Type.Optional(
      Type.Object(
        { x: coordinate('Canvas x.'), y: coordinate('Canvas y.') },
        { additionalProperties: false },
      ),
    ),
    x: Type.Optional(coordinate('Short form of position.x (used when `position` is absent).')),
    y: Type.Optional(coordinate('Short form of position.y (used when `position` is absent).')),
    type: Type.Optional(Type.String({ maxLength: 100 })),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 50 })),
  },
  {
    additionalProperties: true,
    maxProperties: 50,
    description: `${layoutNodeDescription} Either \`position\` or both \`x\` and \`y\` are required; \`{id, x, y}\` is stored as \`{id, position: {x, y}}\`.`,
  },
);

const LayoutNodeSchema = Type.Object(
  {
    id: Type.String(),
    position: Type.Object({ x: Type.Number(), y: Type.Number() }),
    type: Type.Optional(Type.String()),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: true, description: layoutNodeDescription },
);

const LayoutEdgeInputSchema = Type.Object(
  {
    id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Default: `edge_<source>_<target>`.',
      }),
    ),
    source: Type.String({ maxLength: 100, description: 'The id of a node of the layout.' }),
    target: Type.String({ maxLength: 100, description: 'The id of a node of the layout.' }),
  },
  { additionalProperties: true, maxProperties: 50 },
);

const LayoutEdgeSchema = Type.Object(
  { id: Type.String(), source: Type.String(), target: Type.String() },
  { additionalProperties: true },
);

const layoutDescription = `The editor’s drawing of the pipeline: \`nodes\` and \`edges\` in React Flow’s shape; other fields (e.g. \`viewport\`) are kept. It does not change what runs (the stages do). Without one, a left-to-right layout of the stages is generated. At any depth, ${reservedKeysNote}`;

export const VisualLayoutInputSchema = Type.Object(
  {
    nodes: Type.Array(LayoutNodeInputSchema, { maxItems: 1000 }),
    edges: Type.Optional(Type.Array(LayoutEdgeInputSchema, { maxItems: 5000 })),
  },
  { additionalProperties: true, maxProperties: 20, description: layoutDescription },
);

export const VisualLayoutSchema = Type.Object(
  { nodes: Type.Array(LayoutNodeSchema), edges: Type.Array(LayoutEdgeSchema) },
  { additionalProperties: true, description: layoutDescription },
);

const exposeNote =
  "A tool of the platform's MCP server (POST /mcp) for the keys of its own account: the MCP tool runs it synchronously like POST /v1/pipelines/{pipeline_id}/execute, its arguments being the run's inputs (see docs/mcp.md).";

const inputSchemaNote = `The JSON Schema of the run's inputs (\`$.input.<name>\`): the MCP tool's inputSchema, and each tool call's arguments are checked against it. An object schema (\`type: "object"\`), at most ${inputSchemaLimits.maxBytes / 1024} KiB of JSON and ${inputSchemaLimits.maxDepth} schemas deep, self-contained: \`$ref\`, \`$id\`, \`$schema\`, \`pattern\`, \`patternProperties\` and \`uniqueItems\` are refused (400 naming where). Null (the default): any object, \`{"type": "object", "additionalProperties": true}\`.`;

const InputSchemaInput = Type.Union(
  [Type.Record(Type.String(), Type.Unknown(), { maxProperties: 100 }), Type.Null()],
  { description: inputSchemaNote },
);

export const PipelineFields = {
  name: Type.String(),
  description: Type.String(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  expose_as_tool: Type.Boolean({ description: exposeNote }),
};

/** The stored input schema, on a pipeline's full answers (not on list entries). */
const InputSchemaField = {
  input_schema: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description: inputSchemaNote,
  }),
};

export const commonOnPipelines =
  'The spec’s common parameters `user_id`, `conversation_id` and `model` are accepted and not used here.';

export const CreatePipelineBody = Type.Object(
  {
    ...commonParameters(),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    stages: Type.Optional(Type.Array(StageInputSchema, { maxItems: 50 })),
    visual_layout: Type.Optional(VisualLayoutInputSchema),
    expose_as_tool: Type.Optional(Type.Boolean({ default: false, description: exposeNote })),
    input_schema: Type.Optional(InputSchemaInput),
  },
  { additionalProperties: false },
);

export const CreatedPipelineSchema = Type.Object({
  pipeline_id: Type.String({ description: 'pipe_…' }),
  id: Type.String(),
  ...PipelineFields,
  ...InputSchemaField,
  stages: Type.Array(StageSchema),
  visual_layout: VisualLayoutSchema,
});

export const PipelineEntrySchema = Type.Object({
  id: Type.String(),
  ...PipelineFields,
  stage_count: Type.Integer(),
});

export const PipelineDetailSchema = Type.Object({
  pipeline: Type.Object({
    id: Type.String(),
    ...PipelineFields,
    ...InputSchemaField,
    configuration: Type.Object({ stages: Type.Array(StageSchema) }),
    visual_layout: VisualLayoutSchema,
  }),
});

export const UpdatePipelineBody = Type.Object(
  {
    ...commonParameters(),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    stages: Type.Optional(
      Type.Array(StageInputSchema, {
        maxItems: 50,
        description:
          'The new ordered list of stages (replaces the old one; checked like on create).',
      }),
    ),
    visual_layout: Type.Optional(VisualLayoutInputSchema),
    expose_as_tool: Type.Optional(Type.Boolean({ description: exposeNote })),
    input_schema: Type.Optional(InputSchemaInput),
  },
  { additionalProperties: false },
);

export const UpdatedPipelineSchema = Type.Object({
  id: Type.String(),
  ...PipelineFields,
  ...InputSchemaField,
  stages: Type.Array(StageSchema),
  visual_layout: VisualLayoutSchema,
});

export const DeletedPipelineSchema = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  id: Type.String(),
});

/** The body of an execute: the run's inputs, beside the few fields that are not inputs. */
export const ExecutePipelineBody = Type.Object(
  {
    async: Type.Optional(Type.Boolean({ default: false })),
    conversation_id: Type.Optional(
      ObjectIdSchema('A conversation of the account the run belongs to; recorded.'),
    ),
    user_id: Type.Optional(UserIdSchema('The user the run is for; recorded.')),
    model: Type.Optional(
      ModelNameSchema('An input like any other (`$.input.model`); see the description.'),
    ),
  },
  { additionalProperties: true, maxProperties: 200 },
);

export const RunResponseSchema = Type.Object({
  execution_id: Type.String(),
  status: Type.String({
    description:
      'completed, failed, running (async), or waiting_for_approval (a ToolAgent stage waits for a person: see the execution).',
  }),
  pipeline_id: Type.String(),
  output: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description: "The last stage's output: its agent's result plus its mapped output names.",
  }),
  error: Type.Optional(Type.String()),
  metrics: Type.Object({
    execution_time_ms: Type.Integer(),
    stages_completed: Type.Integer(),
    tokens_used: Type.Integer(),
  }),
});

/** An entry of a pipeline's execution list. */
export const ExecutionListEntrySchema = Type.Object({
  id: Type.String(),
  pipeline_id: Type.String(),
  status: Type.String(),
  user_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp(),
  completed_at: NullableTimestamp(),
  execution_time_ms: Type.Union([Type.Integer(), Type.Null()]),
  tokens_used: Type.Integer(),
  error: Type.Optional(Type.String()),
});

/** A pipeline's execution as its list shows it. */
export function executionListEntry(execution: Execution) {
  return {
    id: execution.id,
    pipeline_id: execution.pipelineId ?? '',
    status: execution.status,
    user_id: execution.userId,
    created_at: execution.createdAt,
    completed_at: execution.completedAt,
    execution_time_ms: execution.executionTimeMs,
    tokens_used: execution.tokensUsed,
    ...(execution.error === null ? {} : { error: execution.error.message }),
  };
}
