// The StructureAgent's declarative pipeline (filter, sort, select, group_by, pivot, limit, offset): its schema, validation and execution.
import Type, { type Static, type TSchema } from 'typebox';
import { keySegment, schemaChecker } from './schema-check.js';
import {
  OperationError,
  type Cell,
  type Row,
  type Table,
  cellOf,
  columnKind,
  compareCells,
  listNames,
  quoteValue,
  rowFrom,
  tableLimits,
} from './table.js';

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

const schemasByType: Record<OperationType, TSchema> = {
  filter: FilterOperationSchema,
  sort: SortOperationSchema,
  select: SelectOperationSchema,
  group_by: GroupByOperationSchema,
  pivot: PivotOperationSchema,
  limit: LimitOperationSchema,
  offset: OffsetOperationSchema,
};
const operationTypes = Object.keys(schemasByType) as OperationType[];

/**
 * One operation, as published: `type` must be known, and only the branch it names applies
 * (if/then). A plain anyOf would make a validator that reports its first issue (the agent layer's
 * Ajv) blame the first branch: every mistake in a sort would read "conditions is required".
 */
export const OperationSchema = Type.Unsafe<Operation>({
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: operationTypes, description: 'Which operation; it decides the other fields.' },
  },
  allOf: operationTypes.map((type) => ({
    if: { required: ['type'], properties: { type: { const: type } } },
    then: schemasByType[type],
  })),
});

/** The `operations` parameter: applied in order, each to the previous one's result. */
export const OperationsSchema = Type.Array(OperationSchema, {
  maxItems: maxOperations,
  description:
    'Applied in order, each to the result of the previous one; a column that does not exist at that point is an error.',
});
const checkersByType = Object.fromEntries(
  operationTypes.map((type) => [type, schemaChecker(schemasByType[type])]),
) as Record<OperationType, ReturnType<typeof schemaChecker>>;

export interface OperationOptions {
  /** Where the operations came from, for error paths; default `operations`. */
  path?: string;
}

/**
 * Checks the shape of every operation (each against its own type's schema, so a mistake is named
 * precisely rather than as "matches no branch of the union"). Column names are checked when the
 * pipeline runs, since earlier operations decide which columns exist.
 */
export function validateOperations(
  operations: unknown,
  options: OperationOptions = {},
): Operation[] {
  const path = options.path ?? 'operations';
  if (!Array.isArray(operations)) {
    throw new OperationError(path, 'must be an array of operations');
  }
  if (operations.length > maxOperations) {
    throw new OperationError(
      path,
      `${operations.length} operations, more than the limit of ${maxOperations}`,
    );
  }
  return operations.map((operation: unknown, index) => {
    const at = `${path}[${index}]`;
    if (typeof operation !== 'object' || operation === null || Array.isArray(operation)) {
      throw new OperationError(
        at,
        `must be an object with a 'type' (${operationTypes.join(', ')})`,
      );
    }
    const type = (operation as { type?: unknown }).type;
    if (type === undefined) {
      throw new OperationError(`${at}.type`, `is required (${operationTypes.join(', ')})`);
    }
    if (typeof type !== 'string' || !Object.hasOwn(schemasByType, type)) {
      throw new OperationError(
        `${at}.type`,
        `unknown operation ${quoteValue(type)} (${operationTypes.join(', ')})`,
      );
    }
    const problem = checkersByType[type as OperationType](operation, at);
    if (problem !== null) throw new OperationError(problem.path, problem.detail);
    return operation as Operation;
  });
}

/** Validates `operations`, then applies them in order; the input table is not modified. */
export function applyOperations(
  table: Table,
  operations: unknown,
  options: OperationOptions = {},
): Table {
  const path = options.path ?? 'operations';
  return validateOperations(operations, options).reduce(
    (current, operation, index) => applyOperation(current, operation, `${path}[${index}]`),
    table,
  );
}

function applyOperation(table: Table, operation: Operation, path: string): Table {
  switch (operation.type) {
    case 'filter':
      return applyFilter(table, operation, path);
    case 'sort':
      return applySort(table, operation, path);
    case 'select':
      return applySelect(table, operation, path);
    case 'group_by':
      return applyGroupBy(table, operation, path);
    case 'pivot':
      return applyPivot(table, operation, path);
    case 'limit':
      return { columns: table.columns, rows: table.rows.slice(0, operation.limit) };
    case 'offset':
      return { columns: table.columns, rows: table.rows.slice(operation.offset) };
  }
}

function requireColumn(table: Table, column: string, path: string): void {
  if (!table.columns.includes(column)) {
    throw new OperationError(
      path,
      `no column ${quoteValue(column)} (columns: ${listNames(table.columns)})`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// filter

type Predicate = (row: Row) => boolean;

const textOperators: ReadonlySet<FilterOperator> = new Set([
  'eq',
  'ne',
  'in',
  'not_in',
  'contains',
  'starts_with',
]);

function applyFilter(table: Table, operation: FilterOperation, path: string): Table {
  const predicates = operation.conditions.map((condition, index) =>
    conditionPredicate(table, condition, `${path}.conditions[${index}]`),
  );
  const matchAny = operation.match === 'any';
  const rows = table.rows.filter((row) =>
    matchAny
      ? predicates.some((predicate) => predicate(row))
      : predicates.every((predicate) => predicate(row)),
  );
  return { columns: table.columns, rows };
}

function conditionPredicate(table: Table, condition: FilterCondition, path: string): Predicate {
  const { column, op } = condition;
  requireColumn(table, column, `${path}.column`);
  const valuePath = `${path}.value`;
  const value = condition.value;
  const ignoreCase = condition.ignore_case === true;
  if (ignoreCase && !textOperators.has(op)) {
    throw new OperationError(
      `${path}.ignore_case`,
      `applies to text comparisons (${[...textOperators].join(', ')}), not '${op}'`,
    );
  }
  const fold = (cell: Cell): Cell =>
    ignoreCase && typeof cell === 'string' ? cell.toLowerCase() : cell;
  const cellAt = (row: Row) => cellOf(row, column);

  switch (op) {
    case 'is_null':
    case 'not_null': {
      if (value !== undefined) throw new OperationError(valuePath, `'${op}' takes no value`);
      return op === 'is_null' ? (row) => cellAt(row) === null : (row) => cellAt(row) !== null;
    }
    case 'in':
    case 'not_in': {
      if (!Array.isArray(value)) {
        throw new OperationError(valuePath, `'${op}' needs a list of values`);
      }
      value.forEach((item, index) =>
        checkAgainstColumn(table, column, item, `${valuePath}[${index}]`),
      );
      const wanted = new Set(value.map((item) => JSON.stringify(fold(item))));
      const isListed: Predicate = (row) => wanted.has(JSON.stringify(fold(cellAt(row))));
      return op === 'in' ? isListed : (row) => !isListed(row);
    }
    case 'contains':
    case 'starts_with': {
      if (typeof value !== 'string') {
        throw new OperationError(valuePath, `'${op}' needs text, got ${describeValue(value)}`);
      }
      const needle = fold(value) as string;
      return (row) => {
        const cell = cellAt(row);
        if (cell === null) return false;
        const text = fold(String(cell)) as string;
        return op === 'contains' ? text.includes(needle) : text.startsWith(needle);
      };
    }
    case 'eq':
    case 'ne': {
      const target = singleValue(value, op, valuePath);
      if (target === null) {
        throw new OperationError(
          valuePath,
          `is null; use '${op === 'eq' ? 'is_null' : 'not_null'}' to test for nulls`,
        );
      }
      checkAgainstColumn(table, column, target, valuePath);
      const folded = fold(target);
      const isEqual: Predicate = (row) => fold(cellAt(row)) === folded;
      return op === 'eq' ? isEqual : (row) => !isEqual(row);
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const target = singleValue(value, op, valuePath);
      if (typeof target !== 'number' && typeof target !== 'string') {
        throw new OperationError(
          valuePath,
          `'${op}' needs a number or text, got ${describeValue(target)}`,
        );
      }
      checkAgainstColumn(table, column, target, valuePath);
      const accepts = orderTest(op);
      return (row) => {
        const cell = cellAt(row);
        if (cell === null || typeof cell !== typeof target) return false;
        return accepts(compareCells(cell, target));
      };
    }
  }
}

function orderTest(op: 'gt' | 'gte' | 'lt' | 'lte'): (comparison: number) => boolean {
  switch (op) {
    case 'gt':
      return (comparison) => comparison > 0;
    case 'gte':
      return (comparison) => comparison >= 0;
    case 'lt':
      return (comparison) => comparison < 0;
    case 'lte':
      return (comparison) => comparison <= 0;
  }
}

function singleValue(value: FilterCondition['value'], op: FilterOperator, path: string): Cell {
  if (value === undefined) throw new OperationError(path, `is required for '${op}'`);
  if (Array.isArray(value)) {
    throw new OperationError(path, `'${op}' compares with one value, not a list (use 'in')`);
  }
  return value;
}

/**
 * A value of another type than the column's can never match (the number 120 is not the text
 * "120"); saying so beats returning an empty table that looks like "no such rows". Columns of
 * mixed types (JSON rows) are compared as they are.
 */
function checkAgainstColumn(table: Table, column: string, value: Cell, path: string): void {
  if (value === null) return;
  const kind = columnKind(table.rows, column);
  if (kind === 'mixed' || kind === 'empty' || kind === typeof value) return;
  const expected = { number: 'a number', string: 'text', boolean: 'true or false' }[kind];
  throw new OperationError(
    path,
    `column ${quoteValue(column)} holds ${kindName(kind)}, so compare it with ${expected}, not ${describeValue(value)}`,
  );
}

function kindName(kind: 'number' | 'string' | 'boolean'): string {
  return { number: 'numbers', string: 'text', boolean: 'booleans' }[kind];
}

function describeValue(value: Cell | Cell[] | undefined): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the text ${quoteValue(value)}`;
  if (typeof value === 'number') return `the number ${value}`;
  return String(value);
}

// ---------------------------------------------------------------------------------------------
// sort

function applySort(table: Table, operation: SortOperation, path: string): Table {
  const keys = operation.by.map((key, index) => {
    requireColumn(table, key.column, `${path}.by[${index}].column`);
    return { column: key.column, sign: key.direction === 'desc' ? -1 : 1 };
  });
  // Reading each key once per row rather than once per comparison.
  const decorated = table.rows.map((row) => ({
    row,
    cells: keys.map((key) => cellOf(row, key.column)),
  }));
  decorated.sort((left, right) => {
    for (const [index, key] of keys.entries()) {
      const leftCell = left.cells[index] ?? null;
      const rightCell = right.cells[index] ?? null;
      if (leftCell === rightCell) continue;
      // Nulls last whatever the direction: "no value" is never the largest or the smallest.
      if (leftCell === null) return 1;
      if (rightCell === null) return -1;
      const comparison = compareCells(leftCell, rightCell);
      if (comparison !== 0) return comparison * key.sign;
    }
    return 0;
  });
  return { columns: table.columns, rows: decorated.map((entry) => entry.row) };
}

// ---------------------------------------------------------------------------------------------
// select

function applySelect(table: Table, operation: SelectOperation, path: string): Table {
  if (operation.columns === undefined && operation.rename === undefined) {
    throw new OperationError(path, "give 'columns', 'rename' or both");
  }
  const kept = operation.columns ?? table.columns;
  const seen = new Set<string>();
  operation.columns?.forEach((column, index) => {
    const at = `${path}.columns[${index}]`;
    requireColumn(table, column, at);
    if (seen.has(column)) throw new OperationError(at, `${quoteValue(column)} is listed twice`);
    seen.add(column);
  });
  const rename = operation.rename ?? {};
  for (const from of Object.keys(rename)) {
    const at = `${path}.rename${keySegment(from)}`;
    requireColumn(table, from, at);
    if (!kept.includes(from)) {
      throw new OperationError(at, `${quoteValue(from)} is not among the selected columns`);
    }
  }
  const names = kept.map((column) =>
    Object.hasOwn(rename, column) ? (rename[column] as string) : column,
  );
  names.forEach((name, index) => {
    const first = names.indexOf(name);
    if (first === index) return;
    const renamed = [kept[first], kept[index]].find((column) =>
      Object.hasOwn(rename, column as string),
    );
    throw new OperationError(
      `${path}.rename${keySegment(renamed as string)}`,
      `the name ${quoteValue(name)} would be given to two columns`,
    );
  });
  const rows = table.rows.map((row) =>
    rowFrom(kept.map((column, index) => [names[index] as string, cellOf(row, column)])),
  );
  return { columns: names, rows };
}

// ---------------------------------------------------------------------------------------------
// group_by and pivot share the aggregates

interface Accumulator {
  add(row: Row, rowNumber: number): void;
  result(): Cell;
}

/**
 * Sums are cleaned to 15 significant digits so binary noise (0.1 + 0.2 = 0.30000000000000004)
 * does not reach a table of money; integers are left alone, as they are exact.
 */
function cleanFloat(value: number): number {
  return Number.isInteger(value) ? value : Number(value.toPrecision(15));
}

function createAccumulator(
  aggregate: AggregateFunction,
  column: string | undefined,
  path: string,
): Accumulator {
  const cellAt = (row: Row): Cell => (column === undefined ? true : cellOf(row, column));
  switch (aggregate) {
    case 'count': {
      let count = 0;
      return {
        add: (row) => {
          if (cellAt(row) !== null) count += 1;
        },
        result: () => count,
      };
    }
    case 'count_distinct': {
      const distinct = new Set<string>();
      return {
        add: (row) => {
          const cell = cellAt(row);
          if (cell !== null) distinct.add(JSON.stringify(cell));
        },
        result: () => distinct.size,
      };
    }
    case 'sum':
    case 'avg': {
      let total = 0;
      let count = 0;
      return {
        add: (row, rowNumber) => {
          const cell = cellAt(row);
          if (cell === null) return;
          if (typeof cell !== 'number') {
            throw new OperationError(
              path,
              `'${aggregate}' needs numbers, but column ${quoteValue(column ?? '')} holds ${describeValue(cell)} (row ${rowNumber})`,
            );
          }
          total += cell;
          count += 1;
        },
        result: () => {
          if (count === 0) return null;
          return cleanFloat(aggregate === 'sum' ? total : total / count);
        },
      };
    }
    case 'min':
    case 'max': {
      let best: Exclude<Cell, null> | null = null;
      const sign = aggregate === 'min' ? 1 : -1;
      return {
        add: (row) => {
          const cell = cellAt(row);
          if (cell === null) return;
          if (best === null || compareCells(cell, best) * sign < 0) best = cell;
        },
        result: () => best,
      };
    }
  }
}

interface AggregateSpec {
  aggregate: AggregateFunction;
  column: string | undefined;
  name: string;
  path: string;
}

function applyGroupBy(table: Table, operation: GroupByOperation, path: string): Table {
  const groupColumns = operation.columns;
  groupColumns.forEach((column, index) => {
    const at = `${path}.columns[${index}]`;
    requireColumn(table, column, at);
    if (groupColumns.indexOf(column) !== index) {
      throw new OperationError(at, `${quoteValue(column)} is listed twice`);
    }
  });
  const outputNames = new Set(groupColumns);
  const specs: AggregateSpec[] = (operation.aggregates ?? []).map((aggregate, index) => {
    const at = `${path}.aggregates[${index}]`;
    if (aggregate.column === undefined && aggregate.function !== 'count') {
      throw new OperationError(`${at}.column`, `is required for '${aggregate.function}'`);
    }
    if (aggregate.column !== undefined) requireColumn(table, aggregate.column, `${at}.column`);
    const name =
      aggregate.as ??
      (aggregate.column === undefined ? 'count' : `${aggregate.function}_${aggregate.column}`);
    if (outputNames.has(name)) {
      throw new OperationError(
        `${at}.as`,
        `the output already has a column ${quoteValue(name)}${aggregate.as === undefined ? " (the default name); set 'as'" : ''}`,
      );
    }
    outputNames.add(name);
    return { aggregate: aggregate.function, column: aggregate.column, name, path: `${at}.column` };
  });

  const groups = new Map<string, { keyCells: Cell[]; accumulators: Accumulator[] }>();
  const groupOf = (keyCells: Cell[]) => {
    const key = JSON.stringify(keyCells);
    let group = groups.get(key);
    if (group === undefined) {
      group = {
        keyCells,
        accumulators: specs.map((spec) =>
          createAccumulator(spec.aggregate, spec.column, spec.path),
        ),
      };
      groups.set(key, group);
    }
    return group;
  };
  // Without grouping columns the whole table is one group, even when it has no rows (SQL's totals).
  if (groupColumns.length === 0) groupOf([]);
  table.rows.forEach((row, index) => {
    const group = groupOf(groupColumns.map((column) => cellOf(row, column)));
    for (const accumulator of group.accumulators) accumulator.add(row, index + 1);
  });

  const columns = [...groupColumns, ...specs.map((spec) => spec.name)];
  const rows = [...groups.values()].map(({ keyCells, accumulators }) =>
    rowFrom([
      ...groupColumns.map((column, index) => [column, keyCells[index] ?? null] as const),
      ...specs.map(
        (spec, index) => [spec.name, (accumulators[index] as Accumulator).result()] as const,
      ),
    ]),
  );
  return { columns, rows };
}

/** The column a pivot value names: its text; null as "(null)". */
export function pivotColumnName(cell: Cell): string {
  return cell === null ? '(null)' : String(cell);
}

function applyPivot(table: Table, operation: PivotOperation, path: string): Table {
  const { index: indexColumn, columns: pivotColumn, values: valueColumn } = operation;
  const aggregate = operation.aggregate ?? 'sum';
  requireColumn(table, indexColumn, `${path}.index`);
  requireColumn(table, pivotColumn, `${path}.columns`);
  if (pivotColumn === indexColumn) {
    throw new OperationError(
      `${path}.columns`,
      `must differ from 'index' (${quoteValue(indexColumn)})`,
    );
  }
  if (valueColumn === undefined && aggregate !== 'count') {
    throw new OperationError(`${path}.values`, `is required for '${aggregate}'`);
  }
  if (valueColumn !== undefined) requireColumn(table, valueColumn, `${path}.values`);

  const pivotValues = new Map<string, Cell>();
  for (const row of table.rows) {
    const cell = cellOf(row, pivotColumn);
    const key = JSON.stringify(cell);
    if (!pivotValues.has(key)) pivotValues.set(key, cell);
  }
  const maxNewColumns = tableLimits.maxColumns - 1;
  if (pivotValues.size > maxNewColumns) {
    throw new OperationError(
      `${path}.columns`,
      `column ${quoteValue(pivotColumn)} has ${pivotValues.size} distinct values; a pivot makes at most ${maxNewColumns} columns`,
    );
  }
  const orderedKeys = [...pivotValues.keys()];
  if (operation.order === 'sorted') {
    orderedKeys.sort((left, right) => {
      const leftCell = pivotValues.get(left) ?? null;
      const rightCell = pivotValues.get(right) ?? null;
      if (leftCell === null) return rightCell === null ? 0 : 1;
      if (rightCell === null) return -1;
      return compareCells(leftCell, rightCell);
    });
  }
  const nameByKey = new Map<string, string>();
  const keyByName = new Map<string, string>([[indexColumn, '']]);
  for (const key of orderedKeys) {
    const cell = pivotValues.get(key) ?? null;
    const name = pivotColumnName(cell);
    const taken = keyByName.get(name);
    if (taken !== undefined) {
      throw new OperationError(
        `${path}.columns`,
        taken === ''
          ? `the value ${quoteValue(cell)} of column ${quoteValue(pivotColumn)} would name a column like the index`
          : `the values ${taken} and ${JSON.stringify(cell)} of column ${quoteValue(pivotColumn)} would both name a column ${quoteValue(name)}`,
      );
    }
    keyByName.set(name, key);
    nameByKey.set(key, name);
  }

  const valuesPath = `${path}.values`;
  const groups = new Map<string, { indexCell: Cell; cells: Map<string, Accumulator> }>();
  table.rows.forEach((row, rowIndex) => {
    const indexCell = cellOf(row, indexColumn);
    const indexKey = JSON.stringify(indexCell);
    let group = groups.get(indexKey);
    if (group === undefined) {
      group = { indexCell, cells: new Map() };
      groups.set(indexKey, group);
    }
    const pivotKey = JSON.stringify(cellOf(row, pivotColumn));
    let accumulator = group.cells.get(pivotKey);
    if (accumulator === undefined) {
      accumulator = createAccumulator(aggregate, valueColumn, valuesPath);
      group.cells.set(pivotKey, accumulator);
    }
    accumulator.add(row, rowIndex + 1);
  });

  const emptyCell: Cell = aggregate === 'count' || aggregate === 'count_distinct' ? 0 : null;
  const columns = [indexColumn, ...orderedKeys.map((key) => nameByKey.get(key) as string)];
  const rows = [...groups.values()].map(({ indexCell, cells }) =>
    rowFrom([
      [indexColumn, indexCell] as const,
      ...orderedKeys.map(
        (key) => [nameByKey.get(key) as string, cells.get(key)?.result() ?? emptyCell] as const,
      ),
    ]),
  );
  return { columns, rows };
}
