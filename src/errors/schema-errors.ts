// Turns a JSON Schema validation failure (Ajv's) into the contract's 400, naming the parameter the
// way clients write it (`messages[0].role`, `configuration.result_count`).
import { AppError } from './app-error.js';

export interface SchemaIssue {
  keyword: string;
  instancePath: string;
  message?: string | undefined;
  params: Record<string, unknown>;
}

/** `/messages/0/role` under `prefix` → `prefix.messages[0].role` */
export function paramPath(instancePath: string, child?: string, prefix?: string): string | null {
  const parts = instancePath.split('/').filter((part) => part.length > 0);
  if (child !== undefined) parts.push(child);
  const path = parts
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (joined, part) =>
        /^\d+$/.test(part) ? `${joined}[${part}]` : joined === '' ? part : `${joined}.${part}`,
      '',
    );
  if (prefix === undefined || prefix === '') return path === '' ? null : path;
  return path === '' ? prefix : path.startsWith('[') ? `${prefix}${path}` : `${prefix}.${path}`;
}

const branchKeywords = new Set(['type', 'anyOf', 'oneOf', 'const']);

/**
 * The issue to report. A value that fails a union (`input`: a string or an array of strings) fails
 * every branch: the first branch's "must be string" says nothing to a client that sent an array of
 * 100,000 items, so the issue of the branch whose type matched (here "must NOT have more than 2048
 * items") is told instead, when there is one.
 */
function mostTellingIssue(issues: readonly SchemaIssue[]): SchemaIssue | undefined {
  const first = issues[0];
  if (first === undefined || first.keyword !== 'type') return first;
  const union = issues.find(
    (issue) =>
      (issue.keyword === 'anyOf' || issue.keyword === 'oneOf') &&
      issue.instancePath === first.instancePath,
  );
  if (union === undefined) return first;
  return (
    issues.find(
      (issue) =>
        !branchKeywords.has(issue.keyword) &&
        (issue.instancePath === first.instancePath ||
          issue.instancePath.startsWith(`${first.instancePath}/`)),
    ) ?? first
  );
}

/**
 * The 400 for the first issue. `where` names the place in words ("request body"); `prefix` is
 * put before every parameter path (the field the checked value came in).
 */
export function schemaIssueToError(
  issues: readonly SchemaIssue[],
  where: string,
  prefix?: string,
): AppError {
  const first = mostTellingIssue(issues);
  if (first === undefined) return new AppError('invalid_parameter', `The ${where} is invalid.`);
  if (first.keyword === 'required') {
    const param = paramPath(first.instancePath, String(first.params.missingProperty), prefix);
    return new AppError('missing_parameter', `'${param}' is required in the ${where}.`, { param });
  }
  if (first.keyword === 'additionalProperties') {
    const param = paramPath(first.instancePath, String(first.params.additionalProperty), prefix);
    return new AppError(
      'invalid_parameter',
      `'${param}' is not a known parameter of the ${where}.`,
      {
        param,
      },
    );
  }
  const param = paramPath(first.instancePath, undefined, prefix);
  // A union of literals fails branch by branch ("must be equal to constant"); name them all.
  const constants = issues.filter(
    (issue) => issue.keyword === 'const' && issue.instancePath === first.instancePath,
  );
  if (first.keyword === 'const' && param !== null && constants.length > 0) {
    const allowed = constants.map((issue) => JSON.stringify(issue.params.allowedValue));
    return new AppError(
      'invalid_parameter',
      `'${param}' must be ${allowed.length === 1 ? allowed[0] : `one of ${allowed.join(', ')}`}.`,
      { param },
    );
  }
  if (param === null) {
    // A body of the wrong type is most often not an object; a body whose type is right (a JSON-RPC
    // batch with too many messages) is only invalid.
    const object = where === 'request body' && first.keyword === 'type';
    return new AppError(
      'invalid_parameter',
      `The ${where} must be ${object ? 'a JSON object' : 'valid'}: ${first.message ?? 'invalid'}.`,
      { param },
    );
  }
  let message = first.message ?? 'is invalid';
  if (first.keyword === 'enum' && Array.isArray(first.params.allowedValues)) {
    message = `must be one of ${first.params.allowedValues.map((value) => JSON.stringify(value)).join(', ')}`;
  }
  return new AppError('invalid_parameter', `'${param}' ${message}.`, { param });
}
