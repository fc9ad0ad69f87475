// The StructureAgent's operations as published: one TypeBox schema per operation type (filter, sort,
// select, group_by, pivot, limit, offset), their field descriptions and their static types.
import Type, { type Static } from 'typebox';
import { tableLimits } from './table.js';
export const filterOperators = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'contains',
  'starts_with',
  'in',
  'not_in',
  'is_null',
  'not_null',
] as const;
export type FilterOperator = (typeof filterOperators)[number];

export const aggregateFunctions = ['count', 'sum', 'avg', 'min', 'max', 'count_distinct'] as const;
export type AggregateFunction = (typeof aggregateFunctions)[number];

export const maxOperations = 50;

const columnName = (description: string) =>
  Type.String({ minLength: 1, maxLength: tableLimits.maxCellLength, description });

const ScalarSchema = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

export const FilterConditionSchema = Type.Object(
  {
    column: columnName('The column to test.'),
    op: Type.Enum(filterOperators, {
      description:
        'eq/ne: equal or not (ne also keeps nulls); gt/gte/lt/lte: numbers numerically, text alphabetically, nulls never match; contains/starts_with: text search in the cell as text; in/not_in: one of a list; is_null/not_null: take no value.',
    }),
    value: Type.Optional(
      Type.Union(
        [
          Type.String(),
          Type.Number(),
          Type.Boolean(),
          Type.Null(),
          Type.Array(ScalarSchema, { minItems: 1, maxItems: 10_000 }),
        ],
        {
          description:
            "Of the column's type (a number for a numeric column); a list for in/not_in; absent for is_null/not_null.",
        },
      ),
    ),
    ignore_case: Type.Optional(
      Type.Boolean({
        description: 'Text comparisons (eq, ne, in, not_in, contains, starts_with) ignore case.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const FilterOperationSchema = Type.Object(
  {
    type: Type.Literal('filter'),
    conditions: Type.Array(FilterConditionSchema, { minItems: 1, maxItems: 100 }),
    match: Type.Optional(
      Type.Enum(['all', 'any'], {
        description: 'all (default): every condition holds; any: at least one does.',
      }),
    ),
  },
  { additionalProperties: false, title: 'filter', description: 'Keeps the rows that match.' },
);

export const SortOperationSchema = Type.Object(
  {
    type: Type.Literal('sort'),
    by: Type.Array(
      Type.Object(
        {
          column: columnName('A sort key; later keys break ties of earlier ones.'),
          direction: Type.Optional(Type.Enum(['asc', 'desc'], { description: 'Default asc.' })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 20 },
    ),
  },
  {
    additionalProperties: false,
    title: 'sort',
    description:
      'Orders the rows: numbers numerically, text alphabetically, nulls last in either direction; rows that tie keep their order.',
  },
);

export const SelectOperationSchema = Type.Object(
  {
    type: Type.Literal('select'),
    columns: Type.Optional(
      Type.Array(columnName('A column to keep.'), {
        minItems: 1,
        maxItems: tableLimits.maxColumns,
        description: 'The columns to keep, in this order; default: all of them.',
      }),
    ),
    rename: Type.Optional(
      Type.Record(Type.String(), columnName('The new name.'), {
        description: 'Old name → new name, for kept columns.',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'select',
    description: "Keeps, orders and renames columns; give 'columns', 'rename' or both.",
  },
);

export const AggregateSchema = Type.Object(
  {
    function: Type.Enum(aggregateFunctions, {
      description:
        'count: rows (or non-null values of `column`); sum/avg: numbers, nulls skipped; min/max: any type; count_distinct: distinct non-null values.',
    }),
    column: Type.Optional(columnName('Required except for count.')),
    as: Type.Optional(
      columnName('The result column; default `<function>_<column>`, or `count` for a row count.'),
    ),
  },
  { additionalProperties: false },
);

export const GroupByOperationSchema = Type.Object(
  {
    type: Type.Literal('group_by'),
    columns: Type.Array(columnName('A grouping column.'), {
      maxItems: 20,
      description: 'One output row per distinct combination, in first-seen order; [] for totals.',
    }),
    aggregates: Type.Optional(
      Type.Array(AggregateSchema, {
        maxItems: 100,
        description: 'Default none: the distinct combinations only.',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'group_by',
    description:
      'Replaces the rows by one row per group: the grouping columns, then the aggregates.',
  },
);

export const PivotOperationSchema = Type.Object(
  {
    type: Type.Literal('pivot'),
    index: columnName('One output row per distinct value of this column (first-seen order).'),
    columns: columnName('One output column per distinct value of this column.'),
    values: Type.Optional(columnName('The column aggregated in each cell; optional for count.')),
    aggregate: Type.Optional(Type.Enum(aggregateFunctions, { description: 'Default sum.' })),
    order: Type.Optional(
      Type.Enum(['first_seen', 'sorted'], {
        description: 'The order of the new columns; default first_seen.',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'pivot',
    description:
      'A cross-table: `index` down, the values of `columns` across; a missing combination is 0 for count and count_distinct, null otherwise; a null value of `columns` names the column "(null)".',
  },
);

export const LimitOperationSchema = Type.Object(
  { type: Type.Literal('limit'), limit: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false, title: 'limit', description: 'Keeps the first `limit` rows.' },
);

export const OffsetOperationSchema = Type.Object(
  { type: Type.Literal('offset'), offset: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false, title: 'offset', description: 'Drops the first `offset` rows.' },
);

export type FilterCondition = Static<typeof FilterConditionSchema>;
export type FilterOperation = Static<typeof FilterOperationSchema>;
export type SortOperation = Static<typeof SortOperationSchema>;
export type SelectOperation = Static<typeof SelectOperationSchema>;
export type Aggregate = Static<typeof AggregateSchema>;
export type GroupByOperation = Static<typeof GroupByOperationSchema>;
export type PivotOperation = Static<typeof PivotOperationSchema>;
export type LimitOperation = Static<typeof LimitOperationSchema>;
export type OffsetOperation = Static<typeof OffsetOperationSchema>;
export type Operation =
  | FilterOperation
  | SortOperation
  | SelectOperation
  | GroupByOperation
  | PivotOperation
  | LimitOperation
  | OffsetOperation;
export type OperationType = Operation['type'];
