// The select operation: keeps, orders and renames columns, refusing a name given to two of them.
import type { SelectOperation } from './operation-schemas.js';
import { keySegment } from './schema-check.js';
import { OperationError, type Table, cellOf, quoteValue, requireColumn, rowFrom } from './table.js';

export function applySelect(table: Table, operation: SelectOperation, path: string): Table {
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
