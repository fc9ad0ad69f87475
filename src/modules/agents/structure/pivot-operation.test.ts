// Tests for the StructureAgent's pivot operation: the cross-table, its column names, and its errors.
import { describe, expect, it } from 'vitest';
import { parseCsv } from './parse-data.js';
import { tableLimits } from './table.js';
import { messageOf, run } from '../../../../test/support/unit/structure-tables.js';

describe('pivot', () => {
  it('turns month × region into one row per month and one column per region', () => {
    expect(run([{ type: 'pivot', index: 'month', columns: 'region', values: 'amount' }])).toEqual({
      columns: ['month', 'North', 'South', 'East'],
      rows: [
        { month: '2024-01', North: 1650.5, South: 980.25, East: 600 },
        { month: '2024-02', North: 1440, South: 900, East: null },
        { month: '2024-03', North: 600, South: 1080, East: 840.1 },
      ],
    });
  });

  it('orders the new columns when asked and aggregates as asked', () => {
    const result = run([
      {
        type: 'pivot',
        index: 'region',
        columns: 'month',
        values: 'units',
        aggregate: 'max',
        order: 'sorted',
      },
    ]);
    expect(result.columns).toEqual(['region', '2024-01', '2024-02', '2024-03']);
    expect(result.rows[0]).toEqual({ region: 'North', '2024-01': 10, '2024-02': 12, '2024-03': 4 });
  });

  it('sorts numeric pivot values numerically, and counts rows without values, 0 where none', () => {
    const table = parseCsv('team,quarter\nA,10\nA,9\nB,10\n');
    const result = run(
      [{ type: 'pivot', index: 'team', columns: 'quarter', aggregate: 'count', order: 'sorted' }],
      table,
    );
    expect(result).toEqual({
      columns: ['team', '9', '10'],
      rows: [
        { team: 'A', '9': 1, '10': 1 },
        { team: 'B', '9': 0, '10': 1 },
      ],
    });
  });

  it('names the column of a null value (null)', () => {
    const result = run([
      { type: 'pivot', index: 'product', columns: 'units', values: 'amount', order: 'sorted' },
      { type: 'select', columns: ['product', '12', '(null)'] },
    ]);
    expect(result.rows).toEqual([
      { product: 'Widget', '12': 1440, '(null)': null },
      { product: 'Gadget', '12': null, '(null)': null },
    ]);
  });

  it('feeds later operations: pivot, then sort by a new column', () => {
    const result = run([
      { type: 'pivot', index: 'month', columns: 'region', values: 'amount' },
      { type: 'sort', by: [{ column: 'South', direction: 'desc' }] },
      { type: 'select', columns: ['month', 'South'] },
    ]);
    expect(result.rows).toEqual([
      { month: '2024-03', South: 1080 },
      { month: '2024-01', South: 980.25 },
      { month: '2024-02', South: 900 },
    ]);
  });

  it('refuses what it cannot pivot', () => {
    expect(messageOf([{ type: 'pivot', index: 'month', columns: 'month', values: 'amount' }])).toBe(
      "operations[0].columns: must differ from 'index' ('month')",
    );
    expect(messageOf([{ type: 'pivot', index: 'month', columns: 'region' }])).toBe(
      "operations[0].values: is required for 'sum'",
    );
    expect(
      messageOf([{ type: 'pivot', index: 'quarter', columns: 'region', values: 'amount' }]),
    ).toBe(
      "operations[0].index: no column 'quarter' (columns: region, month, product, units, amount)",
    );
    expect(
      messageOf([{ type: 'pivot', index: 'month', columns: 'region', values: 'product' }]),
    ).toBe(
      "operations[0].values: 'sum' needs numbers, but column 'product' holds the text 'Widget' (row 1)",
    );
  });

  it('refuses values that would name a column twice or like the index', () => {
    const clash = { columns: ['key', 'kind', 'n'], rows: [{ key: 'a', kind: 'key', n: 1 }] };
    expect(messageOf([{ type: 'pivot', index: 'key', columns: 'kind', values: 'n' }], clash)).toBe(
      "operations[0].columns: the value 'key' of column 'kind' would name a column like the index",
    );
    const twins = {
      columns: ['key', 'kind', 'n'],
      rows: [
        { key: 'a', kind: 1, n: 1 },
        { key: 'a', kind: '1', n: 2 },
      ],
    };
    expect(messageOf([{ type: 'pivot', index: 'key', columns: 'kind', values: 'n' }], twins)).toBe(
      `operations[0].columns: the values 1 and "1" of column 'kind' would both name a column '1'`,
    );
  });

  it('refuses more new columns than the table may have', () => {
    const rows = Array.from({ length: tableLimits.maxColumns }, (_, index) => ({
      k: 'a',
      c: index,
      n: 1,
    }));
    const wide = { columns: ['k', 'c', 'n'], rows };
    expect(
      run([{ type: 'pivot', index: 'k', columns: 'c', values: 'n' }], {
        ...wide,
        rows: rows.slice(1),
      }).columns,
    ).toHaveLength(500);
    expect(messageOf([{ type: 'pivot', index: 'k', columns: 'c', values: 'n' }], wide)).toBe(
      "operations[0].columns: column 'c' has 500 distinct values; a pivot makes at most 499 columns",
    );
  });
});
