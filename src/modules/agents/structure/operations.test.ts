// Tests for the StructureAgent's operation pipeline: sort, select, limit and offset, hand-built
// tables, and the validation of every operation (filter, group_by and pivot have suites of their own).
import { describe, expect, it } from 'vitest';
import { applyOperations, validateOperations } from './operations.js';
import { parseCsv } from './parse-data.js';
import type { Table } from './table.js';
import {
  column,
  errorOf,
  filter,
  messageOf,
  run,
  sales,
} from '../../../../test/support/unit/structure-tables.js';

describe('sort', () => {
  it('sorts numbers numerically, ascending by default', () => {
    const table = parseCsv('n\n10\n9\n100\n');
    expect(column(run([{ type: 'sort', by: [{ column: 'n' }] }], table), 'n')).toEqual([
      9, 10, 100,
    ]);
  });

  it('sorts descending, nulls last in either direction', () => {
    expect(
      column(run([{ type: 'sort', by: [{ column: 'units', direction: 'desc' }] }]), 'units'),
    ).toEqual([12, 10, 9, 8, 7, 6, 5, 4, 3, null]);
    expect(
      column(run([{ type: 'sort', by: [{ column: 'units', direction: 'asc' }] }]), 'units'),
    ).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 12, null]);
  });

  it('sorts text by collation (accents and case after the letters) rather than by code point', () => {
    const table = parseCsv('fruit,n\ncherry,1\nBanana,2\napple,3\nÄpfel,4\n');
    expect(column(run([{ type: 'sort', by: [{ column: 'fruit' }] }], table), 'fruit')).toEqual([
      'Äpfel',
      'apple',
      'Banana',
      'cherry',
    ]);
  });

  it('sorts by several keys, later keys breaking ties, and keeps ties stable', () => {
    const result = run([
      {
        type: 'sort',
        by: [{ column: 'region' }, { column: 'amount', direction: 'desc' }],
      },
    ]);
    expect(result.rows.map((row) => `${row.region} ${row.amount}`)).toEqual([
      'East 840.1',
      'East 600',
      'East null',
      'North 1440',
      'North 1200.5',
      'North 600',
      'North 450',
      'South 1080',
      'South 980.25',
      'South 900',
    ]);
    const stable = run([{ type: 'sort', by: [{ column: 'product' }] }]);
    expect(column(stable, 'month').slice(0, 4)).toEqual([
      '2024-01',
      '2024-02',
      '2024-02',
      '2024-03',
    ]);
  });

  it('orders a mixed column numbers, then booleans, then text', () => {
    const mixed = {
      columns: ['v'],
      rows: [{ v: 'b' }, { v: true }, { v: null }, { v: 2 }, { v: 'a' }, { v: 1 }],
    };
    expect(column(run([{ type: 'sort', by: [{ column: 'v' }] }], mixed), 'v')).toEqual([
      1,
      2,
      true,
      'a',
      'b',
      null,
    ]);
  });

  it('does not reorder the input table', () => {
    const before = column(sales, 'amount');
    run([{ type: 'sort', by: [{ column: 'amount' }] }]);
    expect(column(sales, 'amount')).toEqual(before);
  });

  it('names an unknown sort key', () => {
    expect(messageOf([{ type: 'sort', by: [{ column: 'region' }, { column: 'total' }] }])).toBe(
      "operations[0].by[1].column: no column 'total' (columns: region, month, product, units, amount)",
    );
  });
});

describe('select', () => {
  it('keeps the listed columns in the listed order', () => {
    const result = run([{ type: 'select', columns: ['amount', 'region'] }]);
    expect(result.columns).toEqual(['amount', 'region']);
    expect(result.rows[0]).toEqual({ amount: 1200.5, region: 'North' });
  });

  it('renames kept columns', () => {
    const result = run([
      { type: 'select', columns: ['region', 'amount'], rename: { amount: 'revenue' } },
    ]);
    expect(result.columns).toEqual(['region', 'revenue']);
    expect(result.rows[1]).toEqual({ region: 'South', revenue: 980.25 });
  });

  it('renames without selecting when only rename is given', () => {
    const result = run([{ type: 'select', rename: { region: 'area', month: 'period' } }]);
    expect(result.columns).toEqual(['area', 'period', 'product', 'units', 'amount']);
    expect(result.rows[0]?.area).toBe('North');
  });

  it('allows swapping two names', () => {
    const result = run([{ type: 'select', rename: { units: 'amount', amount: 'units' } }]);
    expect(result.rows[0]).toMatchObject({ units: 1200.5, amount: 10 });
  });

  it('refuses unknown, repeated, unselected and clashing columns', () => {
    expect(messageOf([{ type: 'select', columns: ['region', 'price'] }])).toBe(
      "operations[0].columns[1]: no column 'price' (columns: region, month, product, units, amount)",
    );
    expect(messageOf([{ type: 'select', columns: ['region', 'region'] }])).toBe(
      "operations[0].columns[1]: 'region' is listed twice",
    );
    expect(
      messageOf([{ type: 'select', columns: ['region'], rename: { amount: 'revenue' } }]),
    ).toBe("operations[0].rename.amount: 'amount' is not among the selected columns");
    expect(messageOf([{ type: 'select', rename: { 'unit price': 'price' } }])).toBe(
      "operations[0].rename['unit price']: no column 'unit price' (columns: region, month, product, units, amount)",
    );
    expect(messageOf([{ type: 'select', rename: { amount: 'region' } }])).toBe(
      "operations[0].rename.amount: the name 'region' would be given to two columns",
    );
  });

  it('needs columns or rename', () => {
    expect(messageOf([{ type: 'select' }])).toBe("operations[0]: give 'columns', 'rename' or both");
  });
});

describe('limit and offset', () => {
  it('pages through the rows', () => {
    const page = run([
      { type: 'offset', offset: 2 },
      { type: 'limit', limit: 3 },
    ]);
    expect(column(page, 'amount')).toEqual([450, 600, 1440]);
    expect(run([{ type: 'limit', limit: 0 }]).rows).toEqual([]);
    expect(run([{ type: 'offset', offset: 50 }]).rows).toEqual([]);
  });
});

describe('tables built by hand', () => {
  it('reads a cell a row lacks as null, even one named like an Object member', () => {
    const table: Table = { columns: ['name', 'constructor'], rows: [{ name: 'a' }] };
    expect(run(filter([{ column: 'constructor', op: 'is_null' }]), table).rows).toEqual([
      { name: 'a' },
    ]);
    expect(
      run(
        [{ type: 'group_by', columns: ['constructor'], aggregates: [{ function: 'count' }] }],
        table,
      ).rows,
    ).toEqual([{ constructor: null, count: 1 }]);
  });
});

describe('validation', () => {
  it('runs no operations as the identity', () => {
    expect(run([])).toEqual(sales);
  });

  it('refuses what is not a list of operations', () => {
    expect(messageOf({ type: 'limit', limit: 1 })).toBe(
      'operations: must be an array of operations',
    );
    expect(messageOf(Array.from({ length: 51 }, () => ({ type: 'limit', limit: 1 })))).toBe(
      'operations: 51 operations, more than the limit of 50',
    );
    expect(messageOf([5])).toBe(
      "operations[0]: must be an object with a 'type' (filter, sort, select, group_by, pivot, limit, offset)",
    );
  });

  it('names a missing or unknown operation type', () => {
    expect(messageOf([{ limit: 1 }])).toBe(
      'operations[0].type: is required (filter, sort, select, group_by, pivot, limit, offset)',
    );
    expect(messageOf([{ type: 'limit', limit: 1 }, { type: 'filtr' }])).toBe(
      "operations[1].type: unknown operation 'filtr' (filter, sort, select, group_by, pivot, limit, offset)",
    );
    expect(messageOf([{ type: 'toString' }])).toBe(
      "operations[0].type: unknown operation 'toString' (filter, sort, select, group_by, pivot, limit, offset)",
    );
  });

  it('names the field that breaks the schema', () => {
    expect(messageOf([{ type: 'sort' }])).toBe('operations[0].by: is required');
    expect(messageOf([{ type: 'sort', by: [] }])).toBe(
      'operations[0].by: must list at least one item',
    );
    expect(messageOf([{ type: 'sort', by: [{ column: 'amount', direction: 'down' }] }])).toBe(
      "operations[0].by[0].direction: must be one of 'asc', 'desc'",
    );
    expect(messageOf([{ type: 'limit', limit: -1 }])).toBe(
      'operations[0].limit: must be at least 0',
    );
    expect(messageOf([{ type: 'limit', limit: 2.5 }])).toBe(
      'operations[0].limit: must be an integer',
    );
    expect(messageOf([{ type: 'limit', limit: 1, count: 2 }])).toBe(
      'operations[0].count: unknown field (allowed: type, limit)',
    );
    expect(messageOf(filter([{ column: 'region', op: 'like', value: 'N%' }]))).toBe(
      "operations[0].conditions[0].op: must be one of 'eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'starts_with', 'in', 'not_in', 'is_null', 'not_null'",
    );
    expect(messageOf(filter([{ column: '', op: 'eq', value: 1 }]))).toBe(
      'operations[0].conditions[0].column: must not be empty',
    );
    expect(messageOf(filter([{ column: 'region', op: 'eq', value: { a: 1 } }]))).toBe(
      'operations[0].conditions[0].value: must be text, a number, a boolean, null or an array',
    );
    expect(messageOf(filter([{ column: 'region', op: 'in', value: [{ a: 1 }] }]))).toBe(
      'operations[0].conditions[0].value[0]: must be text, a number, a boolean or null',
    );
    expect(
      messageOf([
        {
          type: 'group_by',
          columns: ['region'],
          aggregates: [{ function: 'median', column: 'amount' }],
        },
      ]),
    ).toBe(
      "operations[0].aggregates[0].function: must be one of 'count', 'sum', 'avg', 'min', 'max', 'count_distinct'",
    );
    expect(messageOf([{ type: 'select', rename: { region: '' } }])).toBe(
      'operations[0].rename.region: must not be empty',
    );
  });

  it('checks every shape before running anything', () => {
    expect(() =>
      validateOperations([
        { type: 'limit', limit: 1 },
        { type: 'sort', by: 'amount' },
      ]),
    ).toThrow('operations[1].by: must be an array');
    expect(validateOperations([{ type: 'limit', limit: 1 }])).toEqual([
      { type: 'limit', limit: 1 },
    ]);
  });

  it('is a 400 invalid_parameter whose param is the path, under the prefix it is given', () => {
    const error = errorOf(() =>
      applyOperations(sales, [{ type: 'sort', by: [{ column: 'price' }] }], {
        path: 'parameters.operations',
      }),
    );
    expect(error.param).toBe('parameters.operations[0].by[0].column');
    expect(error.path).toBe('parameters.operations[0].by[0].column');
    expect(error.message).toBe(
      "parameters.operations[0].by[0].column: no column 'price' (columns: region, month, product, units, amount)",
    );
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_parameter');
  });
});
