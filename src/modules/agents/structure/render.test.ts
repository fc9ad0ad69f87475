// Tests for the Markdown table and the chart datasets rendered from a Table.
import { describe, expect, it } from 'vitest';
import { applyOperations } from './operations.js';
import { parseCsv } from './parse-data.js';
import { buildChart, escapeMarkdownCell, renderMarkdown } from './render.js';
import { ChartError, type Table } from './table.js';

const sales = parseCsv(
  [
    'region,month,amount',
    'North,2024-01,1200.50',
    'South,2024-01,980.25',
    'North,2024-02,1440',
    'East,2024-02,',
    'East,2024-03,840.10',
  ].join('\n'),
);

const byMonth = applyOperations(sales, [
  { type: 'pivot', index: 'month', columns: 'region', values: 'amount' },
]);

function chartErrorOf(action: () => unknown): ChartError {
  try {
    action();
  } catch (error) {
    if (error instanceof ChartError) return error;
    throw error;
  }
  throw new Error('expected a ChartError');
}

describe('renderMarkdown', () => {
  it('renders a GitHub table, numbers right-aligned and nulls empty', () => {
    expect(renderMarkdown(sales)).toBe(
      [
        '| region | month | amount |',
        '| --- | --- | ---: |',
        '| North | 2024-01 | 1200.5 |',
        '| South | 2024-01 | 980.25 |',
        '| North | 2024-02 | 1440 |',
        '| East | 2024-02 |  |',
        '| East | 2024-03 | 840.1 |',
      ].join('\n'),
    );
  });

  it('renders a pivot with its new columns', () => {
    expect(renderMarkdown(byMonth)).toBe(
      [
        '| month | North | South | East |',
        '| --- | ---: | ---: | ---: |',
        '| 2024-01 | 1200.5 | 980.25 |  |',
        '| 2024-02 | 1440 |  |  |',
        '| 2024-03 |  |  | 840.1 |',
      ].join('\n'),
    );
  });

  it('escapes pipes, backslashes and line breaks, in cells and headers', () => {
    const table: Table = {
      columns: ['a|b', 'note'],
      rows: [
        { 'a|b': 'x | y', note: 'line one\nline two\r\nthree' },
        { 'a|b': 'C:\\path\\|end', note: 'old\rmac' },
      ],
    };
    expect(renderMarkdown(table)).toBe(
      [
        '| a\\|b | note |',
        '| --- | --- |',
        '| x \\| y | line one<br>line two<br>three |',
        '| C:\\\\path\\\\\\|end | old<br>mac |',
      ].join('\n'),
    );
  });

  it('escapes a backslash before a pipe so that the pipe stays escaped', () => {
    expect(escapeMarkdownCell('a\\|b')).toBe('a\\\\\\|b');
  });

  it('writes booleans as words and aligns only all-number columns right', () => {
    const table: Table = {
      columns: ['ok', 'mixed', 'empty'],
      rows: [
        { ok: true, mixed: 1, empty: null },
        { ok: false, mixed: 'two', empty: null },
      ],
    };
    expect(renderMarkdown(table)).toBe(
      [
        '| ok | mixed | empty |',
        '| --- | --- | --- |',
        '| true | 1 |  |',
        '| false | two |  |',
      ].join('\n'),
    );
  });

  it('renders columns without rows as the header only, and no columns as nothing', () => {
    expect(renderMarkdown({ columns: ['a', 'b'], rows: [] })).toBe('| a | b |\n| --- | --- |');
    expect(renderMarkdown({ columns: [], rows: [] })).toBe('');
  });
});

describe('buildChart', () => {
  it('builds Chart.js datasets, one per value column, nulls kept as null', () => {
    expect(
      buildChart(byMonth, {
        label_column: 'month',
        value_columns: ['North', 'East'],
        type: 'line',
      }),
    ).toEqual({
      type: 'line',
      labels: ['2024-01', '2024-02', '2024-03'],
      datasets: [
        { label: 'North', data: [1200.5, 1440, null] },
        { label: 'East', data: [null, null, 840.1] },
      ],
    });
  });

  it('defaults to a bar chart of every numeric column but the labels', () => {
    expect(buildChart(byMonth, { label_column: 'month' })).toEqual({
      type: 'bar',
      labels: ['2024-01', '2024-02', '2024-03'],
      datasets: [
        { label: 'North', data: [1200.5, 1440, null] },
        { label: 'South', data: [980.25, null, null] },
        { label: 'East', data: [null, null, 840.1] },
      ],
    });
  });

  it('builds a pie of group totals', () => {
    const totals = applyOperations(sales, [
      {
        type: 'group_by',
        columns: ['region'],
        aggregates: [{ function: 'sum', column: 'amount', as: 'revenue' }],
      },
    ]);
    expect(buildChart(totals, { label_column: 'region', type: 'pie' })).toEqual({
      type: 'pie',
      labels: ['North', 'South', 'East'],
      datasets: [{ label: 'revenue', data: [2640.5, 980.25, 840.1] }],
    });
  });

  it('keeps numeric labels as numbers and names null and boolean labels', () => {
    const table: Table = {
      columns: ['year', 'flag', 'n'],
      rows: [
        { year: 2023, flag: true, n: 1 },
        { year: null, flag: false, n: 2 },
      ],
    };
    expect(buildChart(table, { label_column: 'year' }).labels).toEqual([2023, '(null)']);
    expect(buildChart(table, { label_column: 'flag' }).labels).toEqual(['true', 'false']);
  });

  it('refuses non-numeric values, naming the column and row', () => {
    const error = chartErrorOf(() =>
      buildChart(sales, { label_column: 'month', value_columns: ['amount', 'region'] }),
    );
    expect(error.message).toBe(
      "chart.value_columns[1]: column 'region' has the non-numeric value 'North' (row 1)",
    );
    expect(error.param).toBe('chart.value_columns[1]');
  });

  it('refuses unknown columns', () => {
    expect(chartErrorOf(() => buildChart(sales, { label_column: 'day' })).message).toBe(
      "chart.label_column: no column 'day' (columns: region, month, amount)",
    );
    expect(
      chartErrorOf(() => buildChart(sales, { label_column: 'month', value_columns: ['total'] }))
        .message,
    ).toBe("chart.value_columns[0]: no column 'total' (columns: region, month, amount)");
  });

  it('asks for value columns when none is numeric', () => {
    const table = parseCsv('name,city\nAda,London\n');
    expect(chartErrorOf(() => buildChart(table, { label_column: 'name' })).message).toBe(
      "chart.value_columns: no numeric column besides 'name' to chart; name the columns to plot",
    );
  });

  it('validates the spec', () => {
    const message = (spec: unknown) => chartErrorOf(() => buildChart(sales, spec)).message;
    expect(message({})).toBe('chart.label_column: is required');
    expect(message({ label_column: 'month', type: 'scatter' })).toBe(
      "chart.type: must be one of 'bar', 'line', 'pie'",
    );
    expect(message({ label_column: 'month', value_columns: [] })).toBe(
      'chart.value_columns: must list at least one item',
    );
    expect(message({ label_column: 'month', colors: ['red'] })).toBe(
      'chart.colors: unknown field (allowed: label_column, value_columns, type)',
    );
    expect(message('month')).toBe('chart: must be an object');
  });

  it('names errors under the path it is given', () => {
    expect(
      chartErrorOf(() => buildChart(sales, { label_column: 'day' }, { path: 'parameters.chart' }))
        .message,
    ).toBe("parameters.chart.label_column: no column 'day' (columns: region, month, amount)");
  });
});
