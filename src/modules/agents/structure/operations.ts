// The StructureAgent's declarative pipeline (filter, sort, select, group_by, pivot, limit, offset):
// the published union of the operations' schemas, their validation, and their execution in order.
import Type, { type TSchema } from 'typebox';
import { applyFilter } from './filter-operation.js';
import { applyGroupBy } from './group-by-operation.js';
import {
  FilterOperationSchema,
  GroupByOperationSchema,
  LimitOperationSchema,
  maxOperations,
  OffsetOperationSchema,
  PivotOperationSchema,
  SelectOperationSchema,
  SortOperationSchema,
  type Operation,
  type OperationType,
} from './operation-schemas.js';
import { applyPivot } from './pivot-operation.js';
import { schemaChecker } from './schema-check.js';
import { applySelect } from './select-operation.js';
import { applySort } from './sort-operation.js';
import { OperationError, quoteValue, type Table } from './table.js';

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
