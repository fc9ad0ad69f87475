// ISO 8601 times, exactly as `Date.prototype.toISOString` writes them, for the paths that write one
// on every request (the log line's `time`, a usage record's `created_at`). V8 formats each field of
// `toISOString` through a printf: about 7,500 instructions a call, 1.6 % of a plain chat
// completion's (counted with valgrind's callgrind; bench/results/gateway-profile.md). This formats
// the second once and, for every time within it, adds the milliseconds.

/** The largest time a Date holds, either side of 1970 (ECMA-262's TimeClip). */
const maxTimeMs = 8.64e15;

/** The second last formatted, and its text up to the milliseconds (`YYYY-MM-DDTHH:MM:SS.`). */
let formattedSecond = Number.NaN;
let secondPrefix = '';

/** `new Date(ms).toISOString()`: the same text, and the same RangeError for a time out of range. */
export function isoTime(ms: number): string {
  // NaN, or past Date's range (±8.64e15 ms, checked before the fraction is dropped, as the Date
  // constructor does): toISOString's own RangeError.
  if (!(Math.abs(ms) <= maxTimeMs)) return new Date(ms).toISOString();
  // The Date constructor drops a fraction of a millisecond toward zero.
  const whole = Math.trunc(ms);
  const second = Math.floor(whole / 1000);
  if (second !== formattedSecond) {
    const text = new Date(second * 1000).toISOString();
    // Every form (years 0-9999 and the expanded ±YYYYYY) ends with `.000Z`.
    secondPrefix = text.slice(0, -4);
    formattedSecond = second;
  }
  const milli = whole - second * 1000;
  return `${secondPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}
