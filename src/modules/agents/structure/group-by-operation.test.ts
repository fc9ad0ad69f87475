// Tests for the StructureAgent's group_by operation: grouping, every aggregate, and their errors.
import { describe, expect, it } from 'vitest';
import { parseCsv } from './parse-data.js';
import { messageOf, run, sales } from '../../../../test/support/unit/structure-tables.js';

describe('group_by', () => {
  it('computes several aggregates per group, then sorts and limits the groups', () => {
    const result = run([
      {
        type: 'group_by',
        columns: ['region'],
        aggregates: [
          { function: 'sum', column: 'amount', as: 'revenue' },
          { function: 'avg', column: 'amount', as: 'average' },
          { function: 'count', as: 'orders' },
          { function: 'sum', column: 'units' },
        ],
      },
      { type: 'sort', by: [{ column: 'revenue', direction: 'desc' }] },
      { type: 'limit', limit: 2 },
    ]);
    expect(result).toEqual({
      columns: ['region', 'revenue', 'average', 'orders', 'sum_units'],
      rows: [
        { region: 'North', revenue: 3690.5, average: 922.625, orders: 4, sum_units: 29 },
        { region: 'South', revenue: 2960.25, average: 986.75, orders: 3, sum_units: 23 },
      ],
    });
  });

  it('skips nulls in every aggregate but the row count', () => {
    const east = run([
      { type: 'filter', conditions: [{ column: 'region', op: 'eq', value: 'East' }] },
      {
        type: 'group_by',
        columns: ['region'],
        aggregates: [
          { function: 'count' },
          { function: 'count', column: 'amount' },
          { function: 'sum', column: 'amount' },
          { function: 'avg', column: 'amount' },
          { function: 'min', column: 'amount' },
          { function: 'max', column: 'amount' },
        ],
      },
    ]);
    expect(east.rows).toEqual([
      {
        region: 'East',
        count: 3,
        count_amount: 2,
        sum_amount: 1440.1,
        avg_amount: 720.05,
        min_amount: 600,
        max_amount: 840.1,
      },
    ]);
  });

  it('counts distinct values and finds text minima and maxima', () => {
    const result = run([
      {
        type: 'group_by',
        columns: ['product'],
        aggregates: [
          { function: 'count_distinct', column: 'region', as: 'regions' },
          { function: 'min', column: 'month', as: 'first' },
          { function: 'max', column: 'month', as: 'last' },
        ],
      },
    ]);
    expect(result.rows).toEqual([
      { product: 'Widget', regions: 3, first: '2024-01', last: '2024-03' },
      { product: 'Gadget', regions: 3, first: '2024-01', last: '2024-03' },
    ]);
  });

  it('groups by several columns in first-seen order', () => {
    const result = run([
      { type: 'group_by', columns: ['month', 'product'], aggregates: [{ function: 'count' }] },
    ]);
    expect(result.rows.map((row) => `${row.month} ${row.product} ${row.count}`)).toEqual([
      '2024-01 Widget 3',
      '2024-01 Gadget 1',
      '2024-02 Widget 1',
      '2024-02 Gadget 2',
      '2024-03 Widget 2',
      '2024-03 Gadget 1',
    ]);
  });

  it('without aggregates gives the distinct combinations', () => {
    expect(run([{ type: 'group_by', columns: ['product'] }])).toEqual({
      columns: ['product'],
      rows: [{ product: 'Widget' }, { product: 'Gadget' }],
    });
  });

  it('without grouping columns gives one row of totals, even for no rows', () => {
    const totals = [
      {
        type: 'group_by',
        columns: [],
        aggregates: [
          { function: 'count' },
          { function: 'sum', column: 'amount' },
          { function: 'count_distinct', column: 'region' },
        ],
      },
    ];
    expect(run(totals).rows).toEqual([
      { count: 10, sum_amount: 8090.85, count_distinct_region: 3 },
    ]);
    const empty = { columns: sales.columns, rows: [] };
    expect(run(totals, empty).rows).toEqual([
      { count: 0, sum_amount: null, count_distinct_region: 0 },
    ]);
    expect(run([{ type: 'group_by', columns: ['region'] }], empty).rows).toEqual([]);
  });

  it('keeps null as a group of its own', () => {
    const result = run([
      { type: 'group_by', columns: ['units'], aggregates: [{ function: 'count' }] },
      { type: 'filter', conditions: [{ column: 'units', op: 'is_null' }] },
    ]);
    expect(result.rows).toEqual([{ units: null, count: 1 }]);
  });

  it('tells numbers from text that looks the same', () => {
    const mixed = { columns: ['v'], rows: [{ v: 1 }, { v: '1' }, { v: 1 }] };
    expect(
      run([{ type: 'group_by', columns: ['v'], aggregates: [{ function: 'count' }] }], mixed).rows,
    ).toEqual([
      { v: 1, count: 2 },
      { v: '1', count: 1 },
    ]);
  });

  it('cleans binary floating-point noise from sums and averages', () => {
    const table = parseCsv('v\n0.1\n0.2\n');
    expect(
      run(
        [{ type: 'group_by', columns: [], aggregates: [{ function: 'sum', column: 'v' }] }],
        table,
      ).rows,
    ).toEqual([{ sum_v: 0.3 }]);
  });

  it('refuses a sum of text, naming the row', () => {
    expect(
      messageOf([
        { type: 'group_by', columns: [], aggregates: [{ function: 'sum', column: 'month' }] },
      ]),
    ).toBe(
      "operations[0].aggregates[0].column: 'sum' needs numbers, but column 'month' holds the text '2024-01' (row 1)",
    );
  });

  it('refuses aggregates without a column, or with an unknown one', () => {
    expect(
      messageOf([{ type: 'group_by', columns: ['region'], aggregates: [{ function: 'avg' }] }]),
    ).toBe("operations[0].aggregates[0].column: is required for 'avg'");
    expect(
      messageOf([
        {
          type: 'group_by',
          columns: ['region'],
          aggregates: [{ function: 'max', column: 'price' }],
        },
      ]),
    ).toBe(
      "operations[0].aggregates[0].column: no column 'price' (columns: region, month, product, units, amount)",
    );
  });

  it('refuses output names that clash', () => {
    expect(
      messageOf([
        {
          type: 'group_by',
          columns: ['region'],
          aggregates: [{ function: 'count', as: 'region' }],
        },
      ]),
    ).toBe("operations[0].aggregates[0].as: the output already has a column 'region'");
    expect(
      messageOf([
        {
          type: 'group_by',
          columns: ['region'],
          aggregates: [{ function: 'count' }, { function: 'count' }],
        },
      ]),
    ).toBe(
      "operations[0].aggregates[1].as: the output already has a column 'count' (the default name); set 'as'",
    );
  });

  it('refuses unknown and repeated grouping columns', () => {
    expect(messageOf([{ type: 'group_by', columns: ['Region'] }])).toBe(
      "operations[0].columns[0]: no column 'Region' (columns: region, month, product, units, amount)",
    );
    expect(messageOf([{ type: 'group_by', columns: ['region', 'region'] }])).toBe(
      "operations[0].columns[1]: 'region' is listed twice",
    );
  });
});
