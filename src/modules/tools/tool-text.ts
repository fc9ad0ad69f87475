// What the tool sources share about the text they hand back: answers cut at a bound with a marker
// the model can read, the failures of a connection told in words fit to show, and unique argument
// names.
import { PolicyFetchError } from '../../net/policy-fetch.js';

export { brief, cutText, cutTextWithin } from './cut-text.js';

/** The PolicyFetchError in an error's cause chain (the SDK and fetch wrap it), if any. */
export function policyFailure(error: unknown): PolicyFetchError | null {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth += 1) {
    if (current instanceof PolicyFetchError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * `wanted`, or with `_2`, `_3`… (kept within `max`) when `taken` has it already; adds it. For the
 * names of a tool's arguments (an OpenAPI operation's parameters); tools themselves are named by
 * tool-names.ts.
 */
export function uniqueName(wanted: string, taken: Set<string>, max: number): string {
  let name = wanted;
  for (let n = 2; taken.has(name); n += 1) {
    const suffix = `_${n}`;
    name = `${wanted.slice(0, max - suffix.length)}${suffix}`;
  }
  taken.add(name);
  return name;
}
