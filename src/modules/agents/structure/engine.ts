// The StructureAgent's engine in one call: parse `data`, run the operations, render Markdown and the chart.
import Type, { type Static } from 'typebox';
import { OperationsSchema, applyOperations } from './operations.js';
import { csvDelimiters, parseData, type CsvDelimiter } from './parse-data.js';
import { ChartSpecSchema, buildChart, renderMarkdown, type ChartData } from './render.js';
import { schemaChecker } from './schema-check.js';
import { StructureError, type Row } from './table.js';

/** The per-run `parameters` the engine understands; embed its properties in the agent's schema. */
export const StructureParametersSchema = Type.Object(
  {
    operations: Type.Optional(OperationsSchema),
    chart: Type.Optional(ChartSpecSchema),
    delimiter: Type.Optional(
      Type.Enum(csvDelimiters, {
        description: 'The CSV delimiter; default: detected among comma, semicolon and tab.',
      }),
    ),
  },
  { additionalProperties: false },
);

export type StructureParameters = Static<typeof StructureParametersSchema>;

export interface StructureResult {
  columns: string[];
  rows: Row[];
  markdown: string;
  /** Present only when the parameters ask for a chart. */
  chart?: ChartData;
}

export interface StructureEngineOptions {
  /** Put before parameter paths in errors, e.g. `parameters` → `parameters.operations[1].column`. */
  parametersPath?: string;
  /** The path of the data in errors; default `data`. */
  dataPath?: string;
}

// The envelope only: operations and the chart spec are checked by their own validators, which
// name a mistake precisely instead of reporting that no branch of the operation union matched.
const checkEnvelope = schemaChecker(
  Type.Object(
    {
      operations: Type.Optional(Type.Unknown()),
      chart: Type.Optional(Type.Unknown()),
      delimiter: StructureParametersSchema.properties.delimiter,
    },
    { additionalProperties: false },
  ),
);

/** Pure and synchronous; every problem is a StructureError naming where it is. */
export function runStructureEngine(
  data: unknown,
  parameters: unknown = {},
  options: StructureEngineOptions = {},
): StructureResult {
  const parametersPath = options.parametersPath ?? '';
  const problem = checkEnvelope(parameters, parametersPath);
  if (problem !== null) {
    throw new StructureError(problem.path.replace(/^\./, '') || 'parameters', problem.detail);
  }
  const prefix = parametersPath === '' ? '' : `${parametersPath}.`;
  const { operations, chart, delimiter } = parameters as {
    operations?: unknown;
    chart?: unknown;
    delimiter?: CsvDelimiter;
  };
  const table = parseData(data, {
    ...(delimiter === undefined ? {} : { delimiter }),
    ...(options.dataPath === undefined ? {} : { path: options.dataPath }),
  });
  const result = applyOperations(table, operations ?? [], { path: `${prefix}operations` });
  return {
    columns: result.columns,
    rows: result.rows,
    markdown: renderMarkdown(result),
    ...(chart === undefined
      ? {}
      : { chart: buildChart(result, chart, { path: `${prefix}chart` }) }),
  };
}
