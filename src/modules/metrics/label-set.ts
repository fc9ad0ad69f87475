// Label sets for prom-client that only hold their own keys (see metrics.ts).

/** A label set with only its own keys: nothing inherited can be read as a label. */
export function labelSet<T extends Record<string, string>>(values: T): T {
  return Object.assign(Object.create(null) as T, values);
}
