// The sort operation: a stable sort by one or more columns, nulls last in either direction.
import type { SortOperation } from './operation-schemas.js';
import { type Table, cellOf, compareCells, requireColumn } from './table.js';

export function applySort(table: Table, operation: SortOperation, path: string): Table {
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
