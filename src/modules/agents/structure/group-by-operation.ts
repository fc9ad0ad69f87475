// The group_by operation: one row per distinct combination of the grouping columns (first-seen
// order), then the aggregates; without grouping columns, one row of totals.
import { createAccumulator, type Accumulator } from './aggregates.js';
import type { AggregateFunction, GroupByOperation } from './operation-schemas.js';
import {
  OperationError,
  type Cell,
  type Table,
  cellOf,
  quoteValue,
  requireColumn,
  rowFrom,
} from './table.js';

interface AggregateSpec {
  aggregate: AggregateFunction;
  column: string | undefined;
  name: string;
  path: string;
}

export function applyGroupBy(table: Table, operation: GroupByOperation, path: string): Table {
  const groupColumns = operation.columns;
  const specs = aggregateSpecs(table, operation, path);
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

/** Checks the grouping columns, then names each aggregate's output column (each name once). */
function aggregateSpecs(table: Table, operation: GroupByOperation, path: string): AggregateSpec[] {
  const groupColumns = operation.columns;
  groupColumns.forEach((column, index) => {
    const at = `${path}.columns[${index}]`;
    requireColumn(table, column, at);
    if (groupColumns.indexOf(column) !== index) {
      throw new OperationError(at, `${quoteValue(column)} is listed twice`);
    }
  });
  const outputNames = new Set(groupColumns);
  return (operation.aggregates ?? []).map((aggregate, index) => {
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
}
