// ToolAgent: a model that decides which tools to call — an MCP server's, an OpenAPI-described HTTP
// API's, the platform's own (knowledge search, web search and page reading, other agents and
// pipelines) — runs them (in parallel when the model asks for several), feeds the results back and
// answers. The loop stops on an answer, a step limit, a time budget or a token budget. Every model
// turn and tool call is a step of the execution; a call marked `requires_approval` pauses the run
// until a person approves (with the arguments as proposed, or edited) or rejects it. Here: the
// type's schemas and catalog entry; its tools are the tool registry's (src/modules/tools/), and the
// loop is src/modules/agents/tools/tool-loop.ts.
import Type, { type Static } from 'typebox';
import { InvalidParameterError, MissingParameterError } from '../../../errors/app-error.js';
import type { StoredToolEntry, ToolEntrySchema } from '../../tools/tool-entries.js';
import type { ToolRegistry } from '../../tools/tool-registry.js';
import type { AgentType } from '../agent-type.js';
import { ToolLoop } from '../tools/tool-loop.js';

const limits = {
  max_steps: Type.Integer({
    minimum: 1,
    maximum: 50,
    description: 'Model turns at most; a run that has not answered by then fails (limit_reached).',
  }),
  time_budget_ms: Type.Integer({
    minimum: 1000,
    maximum: 3_600_000,
    description:
      'Working time at most: wall time since the run started, calls made at once counted once, time waiting for a person’s decision not counted.',
  }),
  token_budget: Type.Integer({
    minimum: 100,
    maximum: 10_000_000,
    description: 'Prompt and completion tokens at most, over every model turn.',
  }),
};

/** The configuration's schema, with the tool registry's schema of one `tools` entry. */
const configurationSchemaOf = (toolEntrySchema: typeof ToolEntrySchema) =>
  Type.Object(
    {
      instructions: Type.Optional(
        Type.String({ maxLength: 8000, description: 'The system prompt: what the agent is for.' }),
      ),
      tools: Type.Array(toolEntrySchema, {
        minItems: 1,
        maxItems: 20,
        description:
          'Where its tools come from: MCP servers, OpenAPI documents, and the built-ins (knowledge_search, web_search, read_page, agent, pipeline). See docs/tools.md.',
      }),
      max_steps: { ...limits.max_steps, default: 10 },
      time_budget_ms: { ...limits.time_budget_ms, default: 120_000 },
      token_budget: { ...limits.token_budget, default: 50_000 },
      max_result_chars: Type.Integer({
        minimum: 200,
        maximum: 100_000,
        default: 8000,
        description: 'A tool result is cut to this many characters before the model sees it.',
      }),
    },
    { additionalProperties: false },
  );

/**
 * The configuration as stored and run: as validated against the schema, with its outside sources'
 * tokens sealed (a validated entry is a stored one already).
 */
export type ToolConfiguration = Omit<Static<ReturnType<typeof configurationSchemaOf>>, 'tools'> & {
  tools: StoredToolEntry[];
};

const parametersSchema = Type.Object(
  {
    max_steps: Type.Optional(limits.max_steps),
    time_budget_ms: Type.Optional(limits.time_budget_ms),
    token_budget: Type.Optional(limits.token_budget),
  },
  { additionalProperties: false },
);

/** What the ToolAgent uses: the tool registry, and how much work one model turn may ask for. */
export interface ToolAgentDependencies {
  /** Its entries' checks and stored form, a run's tools, and the checks of a call's arguments. */
  readonly tools: Pick<ToolRegistry, 'prepare' | 'shown' | 'open' | 'arguments'>;
  /** The schema of one `tools` entry (the registry's). */
  readonly entrySchema: typeof ToolEntrySchema;
  /** Calls of one model turn that are made, at most (`tools.max_calls_per_turn`). */
  readonly maxCallsPerTurn: number;
}

export function createToolAgent({
  tools,
  entrySchema,
  maxCallsPerTurn,
}: ToolAgentDependencies): AgentType<ToolConfiguration> {
  const configurationSchema = configurationSchemaOf(entrySchema);
  return {
    id: 'ToolAgent',
    name: 'Tool agent',
    description:
      'Decides which tools to call — MCP servers, OpenAPI-described HTTP APIs, knowledge-base search, web search and page reading, other agents and pipelines — runs them, and answers. Calls can wait for a person’s approval. Needs a model with tool calling.',
    capabilities: ['tool_calling', 'mcp', 'human_approval'],
    configurationSchema,
    parametersSchema,
    validateInput(input) {
      if (input.query === undefined || input.query.trim() === '') {
        throw new MissingParameterError('query', "'query' (the task) is required.");
      }
    },
    async prepareConfiguration(accountId, configuration, previous, { isPublic }) {
      if (isPublic) {
        throw new InvalidParameterError(
          'is_public',
          'A ToolAgent acts with its owner’s credentials and objects, so it cannot be public.',
        );
      }
      const stored = await tools.prepare(accountId, configuration.tools, previous?.tools ?? null);
      return { ...configuration, tools: stored };
    },
    showConfiguration(configuration) {
      return { ...configuration, tools: tools.shown(configuration.tools) };
    },
    async run(context, configuration, input, parameters) {
      if (!context.models.available()) throw context.models.unavailableError('ToolAgent');
      const settings = { ...configuration, ...parameters, maxCallsPerTurn };
      const box = await tools.open(
        {
          accountId: context.agent.accountId,
          callerAccountId: context.callerAccountId,
          signal: context.signal,
          depth: context.depth ?? 0,
        },
        configuration.tools,
      );
      try {
        const loop = new ToolLoop(context, settings, box, tools.arguments, input.query ?? '');
        return await loop.run();
      } finally {
        await box.close();
      }
    },
  };
}
