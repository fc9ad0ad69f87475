// StructureAgent: processes CSV or JSON data (filter, sort, group-by with aggregates, pivot) into
// a table with a Markdown rendering and, when asked, chart datasets; with a model it can also
// extract a table from free text first.
import type { JSONSchema7 } from '@ai-sdk/provider';
import Type from 'typebox';
import { MissingParameterError } from '../../errors/app-error.js';
import type { AgentType } from '../agent-type.js';
import { runStructureEngine, StructureParametersSchema } from '../structure/engine.js';

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

export const structureAgent: AgentType<StructureConfiguration> = {
  id: 'StructureAgent',
  name: 'Structure agent',
  description:
    'Turns CSV or JSON data into tables: filter, sort, select, group-by with aggregates, pivot; answers {columns, rows} with a Markdown rendering and chart datasets ({labels, datasets}) when asked. With a model it can extract a table from free text.',
  capabilities: ['data_processing', 'table_generation'],
  configurationSchema,
  parametersSchema: StructureParametersSchema,
  validateInput(input, configuration, parameters) {
    if (input.data !== undefined) {
      // Pure and cheap: bad data or operations are the client's 400, not a failed run.
      runStructureEngine(input.data, engineParameters(configuration, parameters), {
        parametersPath: 'parameters',
      });
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
      const table = runStructureEngine(input.data, settings, { parametersPath: 'parameters' });
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
    const table = runStructureEngine(records, settings, { parametersPath: 'parameters' });
    return { ...table, row_count: table.rows.length, source: 'extracted' };
  },
};
