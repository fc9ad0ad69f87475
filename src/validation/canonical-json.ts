// One JSON text for one value, whatever order its keys were built in: the form the response
// cache's keys and the audit log's hashes are computed over.

/**
 * JSON with every object's keys sorted (by UTF-16 code units) and no whitespace. Undefined members
 * are left out, as JSON does; an undefined value alone is `null`.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const members = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map(
      (key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`,
    );
  return `{${members.join(',')}}`;
}
