// The pivot operation: a cross-table, one row per distinct value of `index` and one column per
// distinct value of `columns`, each cell the aggregate of `values` over the rows that meet there.
import { createAccumulator, type Accumulator } from './aggregates.js';
import type { AggregateFunction, PivotOperation } from './operation-schemas.js';
import {
  OperationError,
  type Cell,
  type Table,
  cellOf,
  compareCells,
  quoteValue,
  requireColumn,
  rowFrom,
  tableLimits,
} from './table.js';

/** The column a pivot value names: its text; null as "(null)". */
export function pivotColumnName(cell: Cell): string {
  return cell === null ? '(null)' : String(cell);
}

/** The new columns: the pivot values' keys (JSON of the cell) in order, and the name of each. */
interface PivotColumns {
  orderedKeys: string[];
  nameByKey: Map<string, string>;
}

export function applyPivot(table: Table, operation: PivotOperation, path: string): Table {
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

  const { orderedKeys, nameByKey } = pivotColumns(table, operation, path);
  const groups = pivotGroups(table, operation, aggregate, `${path}.values`);
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

/** The distinct values of the pivot column, ordered as asked, each naming a column of its own. */
function pivotColumns(table: Table, operation: PivotOperation, path: string): PivotColumns {
  const { index: indexColumn, columns: pivotColumn } = operation;
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
  return { orderedKeys, nameByKey };
}

/** One group per index value (first-seen order), with an accumulator per pivot value it meets. */
function pivotGroups(
  table: Table,
  operation: PivotOperation,
  aggregate: AggregateFunction,
  valuesPath: string,
): Map<string, { indexCell: Cell; cells: Map<string, Accumulator> }> {
  const { index: indexColumn, columns: pivotColumn, values: valueColumn } = operation;
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
  return groups;
}
