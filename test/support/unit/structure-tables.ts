// The StructureAgent's operation suites share one sales table and these helpers: run operations,
// read a column, and catch the OperationError a bad pipeline throws.
import { applyOperations } from '../../../src/modules/agents/structure/operations.js';
import { parseCsv } from '../../../src/modules/agents/structure/parse-data.js';
import { OperationError, type Table } from '../../../src/modules/agents/structure/table.js';

export const sales = parseCsv(
  [
    'region,month,product,units,amount',
    'North,2024-01,Widget,10,1200.50',
    'South,2024-01,Widget,8,980.25',
    'North,2024-01,Gadget,3,450',
    'East,2024-01,Widget,5,600',
    'North,2024-02,Widget,12,1440',
    'South,2024-02,Gadget,6,900',
    'East,2024-02,Gadget,,',
    'South,2024-03,Widget,9,1080',
    'North,2024-03,Gadget,4,600',
    'East,2024-03,Widget,7,840.10',
  ].join('\n'),
);

export const run = (operations: unknown[], table: Table = sales) =>
  applyOperations(table, operations);
export const column = (table: Table, name: string) => table.rows.map((row) => row[name]);

export function errorOf(action: () => unknown): OperationError {
  try {
    action();
  } catch (error) {
    if (error instanceof OperationError) return error;
    throw error;
  }
  throw new Error('expected an OperationError');
}
export const messageOf = (operations: unknown, table: Table = sales) =>
  errorOf(() => applyOperations(table, operations)).message;

export const filter = (conditions: unknown[], match?: 'all' | 'any') => [
  { type: 'filter', conditions, ...(match === undefined ? {} : { match }) },
];
