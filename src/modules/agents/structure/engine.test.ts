// Tests for the StructureAgent engine as one call, and for its parameters schema under Ajv.
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { StructureParametersSchema, runStructureEngine } from './engine.js';
import { OperationsSchema } from './operations.js';
import { ChartSpecSchema } from './render.js';
import { DataError, OperationError, StructureError } from './table.js';

const salesCsv = [
  'region;month;amount',
  'North;2024-01;1200.50',
  'South;2024-01;980.25',
  'North;2024-02;1440',
  'South;2024-02;900',
].join('\n');

function errorOf(action: () => unknown): StructureError {
  try {
    action();
  } catch (error) {
    if (error instanceof StructureError) return error;
    throw error;
  }
  throw new Error('expected a StructureError');
}

describe('runStructureEngine', () => {
  it('parses, runs the operations, renders Markdown and the chart asked for', () => {
    const result = runStructureEngine(salesCsv, {
      operations: [
        {
          type: 'group_by',
          columns: ['region'],
          aggregates: [{ function: 'sum', column: 'amount', as: 'revenue' }],
        },
        { type: 'sort', by: [{ column: 'revenue', direction: 'desc' }] },
      ],
      chart: { label_column: 'region', type: 'pie' },
    });
    expect(result).toEqual({
      columns: ['region', 'revenue'],
      rows: [
        { region: 'North', revenue: 2640.5 },
        { region: 'South', revenue: 1880.25 },
      ],
      markdown: [
        '| region | revenue |',
        '| --- | ---: |',
        '| North | 2640.5 |',
        '| South | 1880.25 |',
      ].join('\n'),
      chart: {
        type: 'pie',
        labels: ['North', 'South'],
        datasets: [{ label: 'revenue', data: [2640.5, 1880.25] }],
      },
    });
  });

  it('returns the table as given without operations, and no chart unless asked', () => {
    const result = runStructureEngine([{ name: 'Ada', score: 9 }, { name: 'Lin' }]);
    expect(result).toEqual({
      columns: ['name', 'score'],
      rows: [
        { name: 'Ada', score: 9 },
        { name: 'Lin', score: null },
      ],
      markdown: '| name | score |\n| --- | ---: |\n| Ada | 9 |\n| Lin |  |',
    });
    expect(result).not.toHaveProperty('chart');
  });

  it('uses the delimiter it is given', () => {
    expect(runStructureEngine('a;b,c\n1;2,3\n', { delimiter: ',' }).columns).toEqual(['a;b', 'c']);
  });

  it('refuses unknown parameters and a non-object', () => {
    expect(errorOf(() => runStructureEngine(salesCsv, { operation: [] })).message).toBe(
      'operation: unknown field (allowed: operations, chart, delimiter)',
    );
    expect(errorOf(() => runStructureEngine(salesCsv, [])).message).toBe(
      'parameters: must be an object',
    );
    expect(errorOf(() => runStructureEngine(salesCsv, { delimiter: '|' })).message).toBe(
      "delimiter: must be one of ',', ';', '\\t'",
    );
  });

  it('puts the paths it is given before every error', () => {
    const options = { parametersPath: 'parameters', dataPath: 'input.data' };
    const unknownColumn = errorOf(() =>
      runStructureEngine(
        salesCsv,
        { operations: [{ type: 'sort', by: [{ column: 'price' }] }] },
        options,
      ),
    );
    expect(unknownColumn).toBeInstanceOf(OperationError);
    expect(unknownColumn.message).toBe(
      "parameters.operations[0].by[0].column: no column 'price' (columns: region, month, amount)",
    );
    expect(
      errorOf(() => runStructureEngine(salesCsv, { chart: { label_column: 'day' } }, options))
        .message,
    ).toBe("parameters.chart.label_column: no column 'day' (columns: region, month, amount)");
    expect(errorOf(() => runStructureEngine(salesCsv, { extra: 1 }, options)).message).toBe(
      'parameters.extra: unknown field (allowed: operations, chart, delimiter)',
    );
    const badData = errorOf(() => runStructureEngine('a,b\n1\n', {}, options));
    expect(badData).toBeInstanceOf(DataError);
    expect(badData.message).toBe('input.data: row 1 (line 2) has 1 fields; the header has 2');
  });
});

describe('the published schemas', () => {
  // The agent layer validates parameters with Ajv before the engine runs; the schemas must compile
  // there and agree with the engine on what is valid.
  const ajv = new Ajv({ strict: false });
  const validateParameters = ajv.compile(StructureParametersSchema);

  it('accept a full parameters object under Ajv', () => {
    expect(
      validateParameters({
        operations: [
          {
            type: 'filter',
            conditions: [{ column: 'amount', op: 'in', value: [1, 2] }],
            match: 'any',
          },
          { type: 'sort', by: [{ column: 'amount', direction: 'desc' }] },
          { type: 'select', columns: ['region'], rename: { region: 'area' } },
          { type: 'group_by', columns: ['area'], aggregates: [{ function: 'count' }] },
          { type: 'pivot', index: 'a', columns: 'b', aggregate: 'count', order: 'sorted' },
          { type: 'limit', limit: 10 },
          { type: 'offset', offset: 5 },
        ],
        chart: { label_column: 'area', value_columns: ['count'], type: 'line' },
        delimiter: '\t',
      }),
    ).toBe(true);
  });

  it('refuse under Ajv what the engine refuses', () => {
    expect(validateParameters({ operations: [{ type: 'filtr' }] })).toBe(false);
    expect(validateParameters({ operations: [{ type: 'limit', limit: -1 }] })).toBe(false);
    expect(validateParameters({ chart: { value_columns: ['a'] } })).toBe(false);
    expect(validateParameters({ other: 1 })).toBe(false);
  });

  it('make a first-issue validator blame the branch that `type` names', () => {
    // The agent layer reports Ajv's first issue; with a plain anyOf that would be the filter
    // branch's "conditions is required" for any mistake in any operation.
    const firstIssue = (parameters: unknown) => {
      validateParameters(parameters);
      const issue = validateParameters.errors?.[0];
      return `${issue?.instancePath} ${issue?.keyword}`;
    };
    expect(
      firstIssue({ operations: [{ type: 'sort', by: [{ column: 'a', direction: 'up' }] }] }),
    ).toBe('/operations/0/by/0/direction enum');
    expect(firstIssue({ operations: [{ type: 'limit', limit: 1 }, { type: 'offset' }] })).toBe(
      '/operations/1 required',
    );
    expect(firstIssue({ operations: [{ type: 'filtr' }] })).toBe('/operations/0/type enum');
  });

  it('are plain JSON Schema, routed by type', () => {
    const schema = JSON.parse(JSON.stringify(OperationsSchema)) as {
      type: string;
      items: {
        properties: { type: { enum: string[] } };
        allOf: Array<{ if: { properties: { type: { const: string } } }; then: { title: string } }>;
      };
    };
    const types = ['filter', 'sort', 'select', 'group_by', 'pivot', 'limit', 'offset'];
    expect(schema.type).toBe('array');
    expect(schema.items.properties.type.enum).toEqual(types);
    expect(schema.items.allOf.map((branch) => branch.if.properties.type.const)).toEqual(types);
    expect(schema.items.allOf.map((branch) => branch.then.title)).toEqual(types);
    expect(Object.keys((ChartSpecSchema as { properties: object }).properties)).toEqual([
      'label_column',
      'value_columns',
      'type',
    ]);
  });
});
