// Tests for the StructureAgent's filter operation: every operator, and every error it names.
import { describe, expect, it } from 'vitest';
import { parseCsv } from './parse-data.js';
import {
  column,
  filter,
  messageOf,
  run,
  sales,
} from '../../../../test/support/unit/structure-tables.js';

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
