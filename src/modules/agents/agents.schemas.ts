// The HTTP shapes of agents: the agent types' listing, an agent and its list entry, the bodies that
// create and change one, and an execution's request and answer.
import Type from 'typebox';
import { ExecutionErrorSchema } from '../../http/schemas/common.js';
import {
  commonParameters,
  ModelNameSchema,
  ObjectIdSchema,
  UserIdSchema,
  Timestamp,
} from '../../http/schemas/common.js';
import { reservedKeysNote } from '../../validation/safe-keys.js';

export const AgentIdParams = Type.Object({ agent_id: Type.String({ maxLength: 100 }) });

/** What `model_id` means, on the agent and in the bodies that set it. */
const modelIdNote =
  "The chat model it runs on; null (or left out): the catalog's default model at the time of each run (`default_model`), so a changed default applies from the next run.";

/** What `expose_as_tool` means, on the agent and in the bodies that set it. */
const exposeNote =
  "A tool of the platform's MCP server (POST /mcp) for the keys of its own account: the MCP tool runs it like POST /v1/agents/{agent_id}/execute (see docs/mcp.md).";

/** What the agent routes say about the spec's common parameters. */
export const commonOnAgents =
  'The spec’s common parameters `user_id`, `conversation_id` and `model` are accepted and not used here (`model_id` is the agent’s model; `model` on execute replaces it for one run).';

export const AgentTypesResponseSchema = Type.Object({
  agent_types: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      description: Type.String(),
      capabilities: Type.Array(Type.String()),
      configuration_schema: Type.Record(Type.String(), Type.Unknown()),
      parameters_schema: Type.Record(Type.String(), Type.Unknown()),
    }),
  ),
});

const AgentFields = {
  id: Type.String({ description: 'agent_…' }),
  name: Type.String(),
  description: Type.String(),
  agent_type: Type.String({ description: 'An agent type id, e.g. RetrievalAgent.' }),
  model_id: Type.Union([Type.String(), Type.Null()], {
    description: modelIdNote,
  }),
  is_public: Type.Boolean({ description: 'Other accounts may read and execute it.' }),
  expose_as_tool: Type.Boolean({ description: exposeNote }),
  owned: Type.Boolean({ description: "Whether it belongs to the caller's account." }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
};

export const AgentSchema = Type.Object({
  ...AgentFields,
  configuration: Type.Record(Type.String(), Type.Unknown(), {
    description:
      "Keys depend on the type: see GET /v1/agent-types (configuration_schema). Another account's public agent is shown without its owner's private keys (see hidden_configuration_keys).",
  }),
  hidden_configuration_keys: Type.Optional(
    Type.Array(Type.String(), {
      description:
        "On another account's public agent: the configuration keys left out as the owner's private business — RetrievalAgent's knowledge_base_ids, every type's instructions, and any key naming a secret (token, password, api_key, …).",
    }),
  ),
});

export const AgentListEntrySchema = Type.Object(AgentFields);

export const CreateAgentBody = Type.Object(
  {
    ...commonParameters(),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    agent_type: Type.String({ maxLength: 64 }),
    configuration: Type.Record(Type.String(), Type.Unknown(), {
      description: `Keys of the type's configuration_schema. At any depth, ${reservedKeysNote}`,
    }),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    model_id: Type.Optional(
      Type.Union([Type.String({ maxLength: 256 }), Type.Null()], {
        description: modelIdNote,
      }),
    ),
    is_public: Type.Optional(Type.Boolean({ default: false })),
    expose_as_tool: Type.Optional(Type.Boolean({ default: false, description: exposeNote })),
  },
  { additionalProperties: false },
);

/** The body of PATCH and PUT alike (only the given fields change). */
export const UpdateAgentBody = Type.Object(
  {
    ...commonParameters(),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    configuration: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: `Replaces the configuration whole (validated; defaults filled in). At any depth, ${reservedKeysNote}`,
      }),
    ),
    model_id: Type.Optional(
      Type.Union([Type.String({ maxLength: 256 }), Type.Null()], { description: modelIdNote }),
    ),
    is_public: Type.Optional(Type.Boolean()),
    expose_as_tool: Type.Optional(Type.Boolean({ description: exposeNote })),
  },
  { additionalProperties: false },
);

export const DeleteAgentQuery = Type.Object({
  force: Type.Boolean({
    default: false,
    description: 'Delete even while pipelines use the agent (their runs then fail at its stage).',
  }),
});

export const DeletedAgentSchema = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  id: Type.String(),
});

export const ExecuteAgentBody = Type.Object(
  {
    query: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    data: Type.Optional(
      Type.Union([
        Type.String({ maxLength: 10_000_000 }),
        Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 100_000 }),
      ]),
    ),
    urls: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 20 }),
    ),
    conversation_id: Type.Optional(
      ObjectIdSchema('A conversation of the account the run belongs to; recorded.'),
    ),
    user_id: Type.Optional(UserIdSchema('The user the run is for; recorded.')),
    model: Type.Optional(ModelNameSchema("Replaces the agent's model for this run.")),
  },
  {
    additionalProperties: true,
    maxProperties: 100,
    description: 'Keys besides these are kept in the recorded input.',
  },
);

export const AgentExecutionResponseSchema = Type.Object({
  success: Type.Boolean(),
  status: Type.Union(
    [Type.Literal('completed'), Type.Literal('failed'), Type.Literal('waiting_for_approval')],
    {
      description:
        '`waiting_for_approval`: a ToolAgent proposed a call that needs a person’s approval; the run is paused (GET /v1/executions/{execution_id} shows the call; POST …/approve or …/reject decides, and the run goes on in the background).',
    },
  ),
  execution_id: Type.String(),
  result: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  metrics: Type.Object({
    execution_time_ms: Type.Integer(),
    tokens_used: Type.Integer(),
  }),
  error: Type.Optional(ExecutionErrorSchema),
});
