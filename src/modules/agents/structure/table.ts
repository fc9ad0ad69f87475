// The table every StructureAgent step reads and writes, its limits, and the typed errors of the engine.
import { InvalidParameterError } from '../../../errors/app-error.js';

export type Cell = string | number | boolean | null;
export type Row = Record<string, Cell>;

export interface Table {
  columns: string[];
  rows: Row[];
}

export const tableLimits = {
  maxRows: 100_000,
  maxColumns: 500,
  maxCellLength: 10_000,
} as const;

/**
 * An error in the agent's input, located by `path` (`data[3].notes`, `operations[1].column`,
 * `chart.value_columns[0]`); the message starts with that path so it reads on its own, and the
 * HTTP layer answers it as 400 invalid_parameter with `param` set to the path.
 */
export class StructureError extends InvalidParameterError {
  readonly path: string;

  constructor(path: string, detail: string) {
    super(path, `${path}: ${detail}`);
    this.name = 'StructureError';
    this.path = path;
  }
}

/** Malformed or oversized `data`; `row` is 1-based among data rows, `line` is the CSV text's line. */
export class DataError extends StructureError {
  readonly row: number | null;
  readonly column: string | null;

  constructor(path: string, detail: string, location: { row?: number; column?: string } = {}) {
    super(path, detail);
    this.name = 'DataError';
    this.row = location.row ?? null;
    this.column = location.column ?? null;
  }
}

/** An operation the pipeline cannot run: invalid shape, unknown column, or values it cannot use. */
export class OperationError extends StructureError {
  constructor(path: string, detail: string) {
    super(path, detail);
    this.name = 'OperationError';
  }
}

/** A chart spec that does not fit the table. */
export class ChartError extends StructureError {
  constructor(path: string, detail: string) {
    super(path, detail);
    this.name = 'ChartError';
  }
}

/**
 * Reads a cell without trusting the row's prototype: a column named `constructor` or `toString`
 * that a row lacks must read as null, not as Object.prototype's function.
 */
export function cellOf(row: Row, column: string): Cell {
  return Object.hasOwn(row, column) ? (row[column] ?? null) : null;
}

/**
 * Builds a row as own data properties only; `Object.fromEntries` defines keys rather than
 * assigning them, so a column named `__proto__` stays a column instead of replacing the prototype.
 */
export function rowFrom(entries: Iterable<readonly [string, Cell]>): Row {
  return Object.fromEntries<Cell>(entries);
}

/** How a value is quoted in messages: text in quotes, everything else as JSON. */
export function quoteValue(value: unknown): string {
  if (typeof value === 'string') {
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    // A tab or newline would be invisible or break the message's line.
    return `'${shown.replace(/\p{Cc}/gu, (control) => JSON.stringify(control).slice(1, -1))}'`;
  }
  return JSON.stringify(value) ?? String(value);
}

export function listNames(names: readonly string[], limit = 20): string {
  if (names.length === 0) return '(none)';
  const shown = names.slice(0, limit).join(', ');
  return names.length > limit ? `${shown}, … ${names.length - limit} more` : shown;
}

/** How a value is named in messages: "the text 'x'", "the number 3", "a list", "nothing". */
export function describeValue(value: Cell | Cell[] | undefined): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the text ${quoteValue(value)}`;
  if (typeof value === 'number') return `the number ${value}`;
  return String(value);
}

/** An operation naming a column the table does not have (at that point of the pipeline). */
export function requireColumn(table: Table, column: string, path: string): void {
  if (!table.columns.includes(column)) {
    throw new OperationError(
      path,
      `no column ${quoteValue(column)} (columns: ${listNames(table.columns)})`,
    );
  }
}

/** The uniform kind of a column's non-null values, which filters and charts check values against. */
export type ColumnKind = 'number' | 'string' | 'boolean' | 'mixed' | 'empty';

export function columnKind(rows: readonly Row[], column: string): ColumnKind {
  let kind: ColumnKind = 'empty';
  for (const row of rows) {
    const cell = cellOf(row, column);
    if (cell === null) continue;
    const cellKind = typeof cell as 'number' | 'string' | 'boolean';
    if (kind === 'empty') kind = cellKind;
    else if (kind !== cellKind) return 'mixed';
  }
  return kind;
}

const collator = new Intl.Collator('en');

/**
 * Total order over non-null cells: numbers numerically, strings by a fixed English collation
 * (localeCompare semantics without depending on the host's locale), false before true; across
 * types, numbers before booleans before strings, so mixed columns still sort deterministically.
 */
export function compareCells(left: Exclude<Cell, null>, right: Exclude<Cell, null>): number {
  if (typeof left === 'number' && typeof right === 'number') return left - right;
  if (typeof left === 'string' && typeof right === 'string') return collator.compare(left, right);
  if (typeof left === 'boolean' && typeof right === 'boolean') return Number(left) - Number(right);
  return typeRank(left) - typeRank(right);
}

function typeRank(cell: Exclude<Cell, null>): number {
  if (typeof cell === 'number') return 0;
  if (typeof cell === 'boolean') return 1;
  return 2;
}
