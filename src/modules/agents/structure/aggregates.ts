// The aggregates group_by and pivot share: count, count_distinct, sum, avg, min, max, each an
// accumulator fed one row at a time.
import type { AggregateFunction } from './operation-schemas.js';
import {
  OperationError,
  type Cell,
  type Row,
  cellOf,
  compareCells,
  describeValue,
  quoteValue,
} from './table.js';

export interface Accumulator {
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

export function createAccumulator(
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
