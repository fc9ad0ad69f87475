// ToolAgent: a model that decides which tools to call — an MCP server's, an OpenAPI-described HTTP
// API's, the platform's own (knowledge search, web search and page reading, other agents and
// pipelines) — runs them (in parallel when the model asks for several), feeds the results back and
// answers. The loop stops on an answer, a step limit, a time budget or a token budget. Every model
// turn and tool call is a step of the execution; a call marked `requires_approval` pauses the run
// until a person approves (with the arguments as proposed, or edited) or rejects it. Here: the
// type's schemas and catalog entry; the loop is src/modules/agents/tools/tool-loop.ts.
import Type, { type TSchema } from 'typebox';
import { InvalidParameterError, MissingParameterError } from '../../../errors/app-error.js';
import type { AgentType, ToolOpener } from '../agent-type.js';
import { ToolLoop } from '../tools/tool-loop.js';

export interface ToolConfiguration {
  instructions?: string;
  tools: Array<Record<string, unknown>>;
  max_steps: number;
  time_budget_ms: number;
  token_budget: number;
  max_result_chars: number;
}

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

/** The configuration's schema, with the schema of one `tools` entry (composed by the wiring). */
const configurationSchemaOf = (toolEntrySchema: TSchema) =>
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

const parametersSchema = Type.Object(
  {
    max_steps: Type.Optional(limits.max_steps),
    time_budget_ms: Type.Optional(limits.time_budget_ms),
    token_budget: Type.Optional(limits.token_budget),
  },
  { additionalProperties: false },
);

/** Save-time checks of the `tools` entries, and their stored form as the owner sees it. */
export interface ToolChecks {
  prepare(
    accountId: string,
    entries: Array<Record<string, unknown>>,
    previous: Array<Record<string, unknown>> | null,
  ): Promise<Array<Record<string, unknown>>>;
  shown(entries: Array<Record<string, unknown>>): Array<Record<string, unknown>>;
}

/** How much work one model turn may ask for (`tools.max_calls_per_turn`, `max_argument_bytes`). */
export interface ToolTurnLimits {
  maxCallsPerTurn: number;
  maxArgumentBytes: number;
}

export function createToolAgent(
  opener: ToolOpener,
  checks: ToolChecks,
  toolEntrySchema: TSchema,
  turnLimits: ToolTurnLimits,
): AgentType<ToolConfiguration> {
  const configurationSchema = configurationSchemaOf(toolEntrySchema);
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
      const tools = await checks.prepare(accountId, configuration.tools, previous?.tools ?? null);
      return { ...configuration, tools };
    },
    showConfiguration(configuration) {
      return { ...configuration, tools: checks.shown(configuration.tools) };
    },
    async run(context, configuration, input, parameters) {
      if (!context.models.available()) throw context.models.unavailableError('ToolAgent');
      const settings = { ...configuration, ...parameters, ...turnLimits };
      const box = await opener.open(context.agent, configuration.tools, {
        signal: context.signal,
        depth: context.depth ?? 0,
        callerAccountId: context.callerAccountId,
      });
      try {
        return await new ToolLoop(context, settings, box, context.steps, input.query ?? '').run();
      } finally {
        await box.close();
      }
    },
  };
}
