// StructureAgent: processes CSV or JSON data (filter, sort, group-by with aggregates, pivot) into
// a table with a Markdown rendering and, when asked, chart datasets; with a model it can also
// extract a table from free text first.
import type { JSONSchema7 } from '@ai-sdk/provider';
import Type from 'typebox';
import { MissingParameterError } from '../../../errors/app-error.js';
import { inputRules } from '../agent-input.js';
import type { AgentInput, AgentType } from '../agent-type.js';
import {
  runStructureEngine,
  StructureParametersSchema,
  type StructureEngineOptions,
  type StructureResult,
} from '../structure/engine.js';

export interface StructureConfiguration {
  operations?: unknown[];
  chart?: Record<string, unknown>;
  delimiter?: string;
  extract_from_text: boolean;
}

const { operations, chart, delimiter } = StructureParametersSchema.properties;

const configurationSchema = Type.Object(
  {
    operations: Type.Optional({
      ...operations,
      description: 'Operations applied to every run’s data, unless the run passes its own.',
    }),
    chart: Type.Optional({ ...chart, description: 'Chart datasets to build on every run.' }),
    delimiter: Type.Optional(delimiter),
    extract_from_text: Type.Boolean({
      default: true,
      description:
        'Without `data`, have the model extract a table from the `query` text (needs a model).',
    }),
  },
  { additionalProperties: false },
);

/** Per-run parameters override the configured operations and chart (they are not appended). */
function engineParameters(
  configuration: StructureConfiguration,
  parameters: Record<string, unknown>,
) {
  return {
    ...(configuration.operations === undefined ? {} : { operations: configuration.operations }),
    ...(configuration.chart === undefined ? {} : { chart: configuration.chart }),
    ...(configuration.delimiter === undefined ? {} : { delimiter: configuration.delimiter }),
    ...parameters,
  };
}

const extractedTable: JSONSchema7 = {
  type: 'object',
  properties: {
    columns: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, maxItems: 50 },
    rows: {
      type: 'array',
      items: { type: 'array', items: { type: ['string', 'number', 'boolean', 'null'] } },
      maxItems: 1000,
    },
  },
  required: ['columns', 'rows'],
  additionalProperties: false,
};

/** Runs the engine off the event loop (the text worker threads), for data past `inlineLimit`. */
export type StructureRunner = (
  task: { data: unknown; parameters: unknown; options: StructureEngineOptions },
  size: number,
  signal?: AbortSignal,
) => Promise<StructureResult>;

/**
 * Data this small is processed on the event loop (well under a millisecond); larger data goes to
 * the runner: 20,000 rows took 0.5 s of the loop (parsing, grouping, rendering).
 */
const inlineLimit = { rows: 500, characters: 32 * 1024 };

function sizeOf(data: unknown): { inline: boolean; size: number } {
  if (typeof data === 'string') {
    return { inline: data.length <= inlineLimit.characters, size: data.length };
  }
  const rows = Array.isArray(data) ? data.length : 0;
  return { inline: rows <= inlineLimit.rows, size: rows * 64 };
}

/**
 * The StructureAgent. Its input is checked by running the engine before the run is recorded (bad
 * data or operations are the client's 400, not a failed run); the table computed then is what
 * the run answers, so the engine runs once per run.
 */
export function createStructureAgent(runner?: StructureRunner): AgentType<StructureConfiguration> {
  const computed = new WeakMap<AgentInput, Promise<StructureResult>>();
  const engine = async (
    data: unknown,
    settings: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<StructureResult> => {
    const options = { parametersPath: 'parameters' };
    const { inline, size } = sizeOf(data);
    if (inline || runner === undefined) return runStructureEngine(data, settings, options);
    return runner({ data, parameters: settings, options }, size, signal);
  };
  return structureAgentType(engine, computed);
}

function structureAgentType(
  engine: (
    data: unknown,
    settings: Record<string, unknown>,
    signal?: AbortSignal,
  ) => Promise<StructureResult>,
  computed: WeakMap<AgentInput, Promise<StructureResult>>,
): AgentType<StructureConfiguration> {
  return {
    id: 'StructureAgent',
    name: 'Structure agent',
    description:
      'Turns CSV or JSON data into tables: filter, sort, select, group-by with aggregates, pivot; answers {columns, rows} with a Markdown rendering and chart datasets ({labels, datasets}) when asked. With a model it can extract a table from free text.',
    capabilities: ['data_processing', 'table_generation'],
    configurationSchema,
    parametersSchema: StructureParametersSchema,
    dataInput: inputRules.table,
    async validateInput(input, configuration, parameters) {
      if (input.data !== undefined) {
        // Bad data or operations are the client's 400, not a failed run; the table is kept for it.
        const table = engine(input.data, engineParameters(configuration, parameters));
        computed.set(input, table);
        await table;
        return;
      }
      if (
        input.query === undefined ||
        input.query.trim() === '' ||
        !configuration.extract_from_text
      ) {
        throw new MissingParameterError(
          'data',
          "StructureAgent needs 'data' (an array of objects or CSV text)" +
            (configuration.extract_from_text
              ? ", or a 'query' with text to extract a table from."
              : '.'),
        );
      }
    },
    async run(context, configuration, input, parameters) {
      const settings = engineParameters(configuration, parameters);
      if (input.data !== undefined) {
        const table = await (computed.get(input) ?? engine(input.data, settings, context.signal));
        return { ...table, row_count: table.rows.length, source: 'data' };
      }
      if (!context.models.available())
        throw context.models.unavailableError('Extracting a table from text');
      const extracted = await context.models.object<{ columns: string[]; rows: unknown[][] }>(
        {
          system:
            'You extract tabular data from text. Give one column per attribute and one row per item; use numbers for numeric values (no units or thousands separators inside numbers) and null for missing values. Do not invent data that is not in the text.',
          user: input.query ?? '',
          temperature: 0,
        },
        extractedTable,
      );
      const records = extracted.rows.map((row) =>
        Object.fromEntries(extracted.columns.map((column, index) => [column, row[index] ?? null])),
      );
      const table = await engine(records, settings, context.signal);
      return { ...table, row_count: table.rows.length, source: 'extracted' };
    },
  };
}

/** The StructureAgent processing every table on the event loop (tests, tools without threads). */
export const structureAgent = createStructureAgent();
