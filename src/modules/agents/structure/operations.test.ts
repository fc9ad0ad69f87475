// Tests for the StructureAgent's operation pipeline: every operation, their combinations, and every error.
import { describe, expect, it } from 'vitest';
import { applyOperations, validateOperations } from './operations.js';
import { parseCsv } from './parse-data.js';
import { OperationError, tableLimits, type Table } from './table.js';

const sales = parseCsv(
  [
    'region,month,product,units,amount',
    'North,2024-01,Widget,10,1200.50',
    'South,2024-01,Widget,8,980.25',
    'North,2024-01,Gadget,3,450',
    'East,2024-01,Widget,5,600',
    'North,2024-02,Widget,12,1440',
    'South,2024-02,Gadget,6,900',
    'East,2024-02,Gadget,,',
    'South,2024-03,Widget,9,1080',
    'North,2024-03,Gadget,4,600',
    'East,2024-03,Widget,7,840.10',
  ].join('\n'),
);

const run = (operations: unknown[], table: Table = sales) => applyOperations(table, operations);
const column = (table: Table, name: string) => table.rows.map((row) => row[name]);

function errorOf(action: () => unknown): OperationError {
  try {
    action();
  } catch (error) {
    if (error instanceof OperationError) return error;
    throw error;
  }
  throw new Error('expected an OperationError');
}
const messageOf = (operations: unknown, table: Table = sales) =>
  errorOf(() => applyOperations(table, operations)).message;

const filter = (conditions: unknown[], match?: 'all' | 'any') => [
  { type: 'filter', conditions, ...(match === undefined ? {} : { match }) },
];

describe('filter', () => {
  it('eq matches text and numbers by value and type', () => {
    expect(column(run(filter([{ column: 'region', op: 'eq', value: 'East' }])), 'amount')).toEqual([
      600,
      null,
      840.1,
    ]);
    expect(column(run(filter([{ column: 'amount', op: 'eq', value: 600 }])), 'region')).toEqual([
      'East',
      'North',
    ]);
  });

  it('ne keeps nulls, since a missing value is not equal to the one given', () => {
    expect(run(filter([{ column: 'amount', op: 'ne', value: 600 }])).rows).toHaveLength(8);
    expect(column(run(filter([{ column: 'units', op: 'ne', value: 10 }])), 'units')).toContain(
      null,
    );
  });

  it('gt, gte, lt, lte compare numbers numerically and never match nulls', () => {
    const amounts = (op: string, value: number) =>
      column(run(filter([{ column: 'amount', op, value }])), 'amount');
    expect(amounts('gt', 980.25)).toEqual([1200.5, 1440, 1080]);
    expect(amounts('gte', 980.25)).toEqual([1200.5, 980.25, 1440, 1080]);
    expect(amounts('lt', 600)).toEqual([450]);
    expect(amounts('lte', 600)).toEqual([450, 600, 600]);
  });

  it('compares text alphabetically, which orders ISO months', () => {
    expect(
      column(run(filter([{ column: 'month', op: 'gte', value: '2024-03' }])), 'region'),
    ).toEqual(['South', 'North', 'East']);
  });

  it('contains and starts_with search text, optionally ignoring case', () => {
    expect(run(filter([{ column: 'product', op: 'contains', value: 'dge' }])).rows).toHaveLength(
      10,
    );
    expect(run(filter([{ column: 'product', op: 'contains', value: 'idg' }])).rows).toHaveLength(6);
    expect(run(filter([{ column: 'region', op: 'starts_with', value: 'no' }])).rows).toHaveLength(
      0,
    );
    expect(
      run(filter([{ column: 'region', op: 'starts_with', value: 'no', ignore_case: true }])).rows,
    ).toHaveLength(4);
  });

  it('contains reads a number as its text', () => {
    expect(
      column(run(filter([{ column: 'amount', op: 'contains', value: '.' }])), 'amount'),
    ).toEqual([1200.5, 980.25, 840.1]);
  });

  it('eq ignores case only when asked', () => {
    expect(run(filter([{ column: 'region', op: 'eq', value: 'north' }])).rows).toHaveLength(0);
    expect(
      run(filter([{ column: 'region', op: 'eq', value: 'north', ignore_case: true }])).rows,
    ).toHaveLength(4);
  });

  it('in and not_in test membership, not_in keeping nulls', () => {
    expect(
      column(run(filter([{ column: 'units', op: 'in', value: [3, 4, null] }])), 'units'),
    ).toEqual([3, null, 4]);
    expect(
      column(
        run(filter([{ column: 'units', op: 'not_in', value: [3, 4, 5, 6, 7, 8, 9, 10] }])),
        'units',
      ),
    ).toEqual([12, null]);
    expect(
      run(filter([{ column: 'region', op: 'in', value: ['NORTH'], ignore_case: true }])).rows,
    ).toHaveLength(4);
  });

  it('is_null and not_null find missing values', () => {
    expect(column(run(filter([{ column: 'amount', op: 'is_null' }])), 'month')).toEqual([
      '2024-02',
    ]);
    expect(run(filter([{ column: 'amount', op: 'not_null' }])).rows).toHaveLength(9);
  });

  it('needs every condition by default and any one with match: any', () => {
    const conditions = [
      { column: 'region', op: 'eq', value: 'North' },
      { column: 'product', op: 'eq', value: 'Gadget' },
    ];
    expect(column(run(filter(conditions)), 'amount')).toEqual([450, 600]);
    expect(run(filter(conditions, 'all')).rows).toHaveLength(2);
    expect(run(filter(conditions, 'any')).rows).toHaveLength(6);
  });

  it('keeps every column and the row order', () => {
    const result = run(filter([{ column: 'product', op: 'eq', value: 'Gadget' }]));
    expect(result.columns).toEqual(sales.columns);
    expect(column(result, 'month')).toEqual(['2024-01', '2024-02', '2024-02', '2024-03']);
  });
});

describe('filter errors', () => {
  it('names an unknown column with the columns there are', () => {
    expect(messageOf(filter([{ column: 'price', op: 'gt', value: 5 }]))).toBe(
      "operations[0].conditions[0].column: no column 'price' (columns: region, month, product, units, amount)",
    );
  });

  it('refuses a value of another type than the column holds', () => {
    expect(messageOf(filter([{ column: 'amount', op: 'eq', value: '600' }]))).toBe(
      "operations[0].conditions[0].value: column 'amount' holds numbers, so compare it with a number, not the text '600'",
    );
    expect(messageOf(filter([{ column: 'region', op: 'gt', value: 3 }]))).toBe(
      "operations[0].conditions[0].value: column 'region' holds text, so compare it with text, not the number 3",
    );
    expect(messageOf(filter([{ column: 'units', op: 'in', value: [3, '4'] }]))).toBe(
      "operations[0].conditions[0].value[1]: column 'units' holds numbers, so compare it with a number, not the text '4'",
    );
    const flags = parseCsv('id,paid\n1,true\n2,false\n');
    expect(messageOf(filter([{ column: 'paid', op: 'eq', value: 'yes' }]), flags)).toBe(
      "operations[0].conditions[0].value: column 'paid' holds booleans, so compare it with true or false, not the text 'yes'",
    );
  });

  it('compares as given in a column of mixed types', () => {
    const mixed = { columns: ['v'], rows: [{ v: 1 }, { v: '1' }, { v: 2 }] };
    expect(run(filter([{ column: 'v', op: 'eq', value: '1' }]), mixed).rows).toEqual([{ v: '1' }]);
    expect(run(filter([{ column: 'v', op: 'gt', value: 1 }]), mixed).rows).toEqual([{ v: 2 }]);
  });

  it('requires a value, except for is_null and not_null which take none', () => {
    expect(messageOf(filter([{ column: 'amount', op: 'gt' }]))).toBe(
      "operations[0].conditions[0].value: is required for 'gt'",
    );
    expect(messageOf(filter([{ column: 'amount', op: 'is_null', value: 1 }]))).toBe(
      "operations[0].conditions[0].value: 'is_null' takes no value",
    );
  });

  it('wants a list for in and not_in and one value otherwise', () => {
    expect(messageOf(filter([{ column: 'units', op: 'in', value: 3 }]))).toBe(
      "operations[0].conditions[0].value: 'in' needs a list of values",
    );
    expect(messageOf(filter([{ column: 'units', op: 'eq', value: [3] }]))).toBe(
      "operations[0].conditions[0].value: 'eq' compares with one value, not a list (use 'in')",
    );
  });

  it('points to is_null and not_null for null', () => {
    expect(messageOf(filter([{ column: 'units', op: 'eq', value: null }]))).toBe(
      "operations[0].conditions[0].value: is null; use 'is_null' to test for nulls",
    );
    expect(messageOf(filter([{ column: 'units', op: 'ne', value: null }]))).toBe(
      "operations[0].conditions[0].value: is null; use 'not_null' to test for nulls",
    );
  });

  it('wants text for contains and starts_with, a number or text for ordering', () => {
    expect(messageOf(filter([{ column: 'units', op: 'contains', value: 1 }]))).toBe(
      "operations[0].conditions[0].value: 'contains' needs text, got the number 1",
    );
    expect(messageOf(filter([{ column: 'units', op: 'lt', value: true }]))).toBe(
      "operations[0].conditions[0].value: 'lt' needs a number or text, got true",
    );
  });

  it('refuses ignore_case where no text is compared', () => {
    expect(messageOf(filter([{ column: 'units', op: 'gt', value: 1, ignore_case: true }]))).toBe(
      "operations[0].conditions[0].ignore_case: applies to text comparisons (eq, ne, in, not_in, contains, starts_with), not 'gt'",
    );
  });

  it('names the condition that fails among several', () => {
    expect(
      messageOf([
        { type: 'limit', limit: 5 },
        {
          type: 'filter',
          conditions: [
            { column: 'region', op: 'eq', value: 'North' },
            { column: 'Region', op: 'eq', value: 'North' },
          ],
        },
      ]),
    ).toBe(
      "operations[1].conditions[1].column: no column 'Region' (columns: region, month, product, units, amount)",
    );
  });
});

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
