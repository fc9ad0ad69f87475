// Text cut at a bound with a marker the model can read, and a remote's message made short. Apart
// from tool-text.ts, which needs the policy fetch: the text worker threads load this file.

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
