// Renders a Table as a GitHub-flavoured Markdown table and as chart datasets in Chart.js' shape.
import Type, { type Static } from 'typebox';
import { schemaChecker } from './schema-check.js';
import {
  ChartError,
  type Cell,
  type Table,
  cellOf,
  columnKind,
  listNames,
  quoteValue,
  tableLimits,
} from './table.js';

/** How a cell reads in Markdown: null as an empty cell, numbers and booleans as written. */
export function formatCell(cell: Cell): string {
  return cell === null ? '' : String(cell);
}

/**
 * A backslash is escaped first so that one already in the text cannot turn the pipe escape into
 * an escaped backslash followed by a real column separator; line breaks become <br>, which GFM
 * renders inside a cell, since a raw newline would end the row.
 */
export function escapeMarkdownCell(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/\r\n|\r|\n/g, '<br>');
}

/**
 * `| a | b |` rows under a `| --- | ---: |` separator; a column whose values are all numbers is
 * right-aligned. No trailing newline; a table without columns renders as the empty string.
 */
export function renderMarkdown(table: Table): string {
  if (table.columns.length === 0) return '';
  const line = (cells: readonly string[]) => `| ${cells.map(escapeMarkdownCell).join(' | ')} |`;
  const separator = table.columns.map((column) =>
    columnKind(table.rows, column) === 'number' ? '---:' : '---',
  );
  return [
    line(table.columns),
    `| ${separator.join(' | ')} |`,
    ...table.rows.map((row) =>
      line(table.columns.map((column) => formatCell(cellOf(row, column)))),
    ),
  ].join('\n');
}

export const chartTypes = ['bar', 'line', 'pie'] as const;
export type ChartType = (typeof chartTypes)[number];

export const ChartSpecSchema = Type.Object(
  {
    label_column: Type.String({
      minLength: 1,
      maxLength: tableLimits.maxCellLength,
      description: 'The column whose values label the points (x axis, pie slices).',
    }),
    value_columns: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: tableLimits.maxCellLength }), {
        minItems: 1,
        maxItems: 50,
        description:
          'One dataset per column, of numbers (nulls allowed); default: every numeric column but the label column.',
      }),
    ),
    type: Type.Optional(Type.Enum(chartTypes, { description: 'Default bar.' })),
  },
  {
    additionalProperties: false,
    description:
      'Asks for chart datasets of the result table, in the shape chart libraries take (Chart.js `data`).',
  },
);

export type ChartSpec = Static<typeof ChartSpecSchema>;

export interface ChartDataset {
  label: string;
  data: Array<number | null>;
}

export interface ChartData {
  type: ChartType;
  labels: Array<string | number>;
  datasets: ChartDataset[];
}

const checkChartSpec = schemaChecker(ChartSpecSchema);

export interface ChartOptions {
  /** Where the spec came from, for error paths; default `chart`. */
  path?: string;
}

/** Validates `spec` and builds one dataset per value column, one point per row. */
export function buildChart(table: Table, spec: unknown, options: ChartOptions = {}): ChartData {
  const path = options.path ?? 'chart';
  const problem = checkChartSpec(spec, path);
  if (problem !== null) throw new ChartError(problem.path, problem.detail);
  const { label_column: labelColumn, value_columns: requestedColumns, type } = spec as ChartSpec;

  const requireColumn = (column: string, at: string) => {
    if (!table.columns.includes(column)) {
      throw new ChartError(
        at,
        `no column ${quoteValue(column)} (columns: ${listNames(table.columns)})`,
      );
    }
  };
  requireColumn(labelColumn, `${path}.label_column`);
  requestedColumns?.forEach((column, index) =>
    requireColumn(column, `${path}.value_columns[${index}]`),
  );
  const valueColumns =
    requestedColumns ??
    table.columns.filter(
      (column) => column !== labelColumn && columnKind(table.rows, column) === 'number',
    );
  if (valueColumns.length === 0) {
    throw new ChartError(
      `${path}.value_columns`,
      `no numeric column besides ${quoteValue(labelColumn)} to chart; name the columns to plot`,
    );
  }

  const labels = table.rows.map((row) => {
    const cell = cellOf(row, labelColumn);
    return typeof cell === 'number' || typeof cell === 'string'
      ? cell
      : cell === null
        ? '(null)'
        : String(cell);
  });
  const datasets = valueColumns.map((column, index): ChartDataset => ({
    label: column,
    data: table.rows.map((row, rowIndex) => {
      const cell = cellOf(row, column);
      if (cell === null || typeof cell === 'number') return cell;
      throw new ChartError(
        `${path}.value_columns[${index}]`,
        `column ${quoteValue(column)} has the non-numeric value ${quoteValue(cell)} (row ${rowIndex + 1})`,
      );
    }),
  }));
  return { type: type ?? 'bar', labels, datasets };
}
