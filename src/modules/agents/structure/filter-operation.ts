// The filter operation: each condition becomes a predicate over rows, its value checked against the
// column's type first, so a comparison that could never match is an error rather than an empty table.
import type { FilterCondition, FilterOperation, FilterOperator } from './operation-schemas.js';
import {
  OperationError,
  type Cell,
  type Row,
  type Table,
  cellOf,
  columnKind,
  compareCells,
  describeValue,
  quoteValue,
  requireColumn,
} from './table.js';

type Predicate = (row: Row) => boolean;

const textOperators: ReadonlySet<FilterOperator> = new Set([
  'eq',
  'ne',
  'in',
  'not_in',
  'contains',
  'starts_with',
]);

/** What every kind of condition reads: the column, its value, and how text is folded. */
interface Condition {
  table: Table;
  column: string;
  value: FilterCondition['value'];
  valuePath: string;
  fold: (cell: Cell) => Cell;
  cellAt: (row: Row) => Cell;
}

export function applyFilter(table: Table, operation: FilterOperation, path: string): Table {
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
  const ignoreCase = condition.ignore_case === true;
  if (ignoreCase && !textOperators.has(op)) {
    throw new OperationError(
      `${path}.ignore_case`,
      `applies to text comparisons (${[...textOperators].join(', ')}), not '${op}'`,
    );
  }
  const context: Condition = {
    table,
    column,
    value: condition.value,
    valuePath: `${path}.value`,
    fold: (cell) => (ignoreCase && typeof cell === 'string' ? cell.toLowerCase() : cell),
    cellAt: (row) => cellOf(row, column),
  };
  switch (op) {
    case 'is_null':
    case 'not_null':
      return nullPredicate(op, context);
    case 'in':
    case 'not_in':
      return listPredicate(op, context);
    case 'contains':
    case 'starts_with':
      return textSearchPredicate(op, context);
    case 'eq':
    case 'ne':
      return equalityPredicate(op, context);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return orderPredicate(op, context);
  }
}

function nullPredicate(
  op: 'is_null' | 'not_null',
  { value, valuePath, cellAt }: Condition,
): Predicate {
  if (value !== undefined) throw new OperationError(valuePath, `'${op}' takes no value`);
  return op === 'is_null' ? (row) => cellAt(row) === null : (row) => cellAt(row) !== null;
}

function listPredicate(op: 'in' | 'not_in', condition: Condition): Predicate {
  const { table, column, value, valuePath, fold, cellAt } = condition;
  if (!Array.isArray(value)) {
    throw new OperationError(valuePath, `'${op}' needs a list of values`);
  }
  value.forEach((item, index) => checkAgainstColumn(table, column, item, `${valuePath}[${index}]`));
  const wanted = new Set(value.map((item) => JSON.stringify(fold(item))));
  const isListed: Predicate = (row) => wanted.has(JSON.stringify(fold(cellAt(row))));
  return op === 'in' ? isListed : (row) => !isListed(row);
}

function textSearchPredicate(
  op: 'contains' | 'starts_with',
  { value, valuePath, fold, cellAt }: Condition,
): Predicate {
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

function equalityPredicate(op: 'eq' | 'ne', condition: Condition): Predicate {
  const { table, column, value, valuePath, fold, cellAt } = condition;
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

function orderPredicate(op: 'gt' | 'gte' | 'lt' | 'lte', condition: Condition): Predicate {
  const { table, column, value, valuePath, cellAt } = condition;
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
