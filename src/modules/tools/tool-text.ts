// What the tool sources share about the text they hand back: answers cut at a bound with a marker
// the model can read, and the failures of a connection told in words fit to show.
import { PolicyFetchError } from '../../net/policy-fetch.js';

/** `text` with at most `max` characters kept, and a marker saying how much was cut. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  // Not between the halves of a surrogate pair.
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}\n[… cut: the answer had ${text.length} characters, the first ${end} are kept]`;
}

/** `cutText`, its result (the marker included) kept within `max` characters. */
export function cutTextWithin(text: string, max: number): string {
  if (text.length <= max) return text;
  const markerChars = cutText(text, max).length - max;
  // A shorter kept part never makes a longer marker.
  return cutText(text, Math.max(0, max - markerChars));
}

/** A short, single-line form of a remote's own message (its error text, a description). */
export function brief(text: string, max = 300): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** The PolicyFetchError in an error's cause chain (the SDK and fetch wrap it), if any. */
export function policyFailure(error: unknown): PolicyFetchError | null {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth += 1) {
    if (current instanceof PolicyFetchError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** `^[a-zA-Z0-9_-]` only, at most `max` characters (at least one). */
export function sanitiseName(name: string, max: number): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, max);
  return cleaned === '' ? '_' : cleaned;
}

/** `wanted`, or with `_2`, `_3`… (kept within `max`) when `taken` has it already; adds it. */
export function uniqueName(wanted: string, taken: Set<string>, max: number): string {
  let name = wanted;
  for (let n = 2; taken.has(name); n += 1) {
    const suffix = `_${n}`;
    name = `${wanted.slice(0, max - suffix.length)}${suffix}`;
  }
  taken.add(name);
  return name;
}
