import { describe, expect, it } from 'vitest';
import { isoTime } from './iso-time.js';

describe('isoTime', () => {
  it('writes what toISOString writes, within a second, across seconds and back again', () => {
    const start = Date.UTC(2026, 10, 30, 23, 59, 58, 990);
    const times = [];
    for (let ms = start; ms < start + 2_100; ms += 7) times.push(ms);
    // Back to an earlier second: the one formatted last is not assumed to be the latest.
    times.push(start, start + 1, Date.UTC(1999, 0, 1));
    for (const ms of times) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });

  it('pads the milliseconds and drops a fraction of one as the Date constructor does', () => {
    const second = Date.UTC(2026, 0, 2, 3, 4, 5);
    for (const ms of [0, 1, 9, 10, 99, 100, 999, 5.9, 12.5, 999.999]) {
      expect(isoTime(second + ms)).toBe(new Date(second + ms).toISOString());
    }
  });

  it('handles times before 1970, before year 0 and after year 9999 (the expanded years)', () => {
    const times = [
      -1,
      -999,
      -1_000,
      -1_001,
      -1.5,
      Date.UTC(1969, 11, 31, 23, 59, 59, 999),
      Date.UTC(-1, 5, 6, 7, 8, 9, 10),
      Date.UTC(10_000, 0, 1, 0, 0, 0, 1),
      8.64e15,
      -8.64e15,
    ];
    for (const ms of times) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });

  it('matches toISOString for random times over the whole range', () => {
    let seed = 12_345;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let index = 0; index < 5_000; index += 1) {
      const ms = Math.round((next() * 2 - 1) * 8.64e15);
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('throws the RangeError toISOString throws for an invalid or out-of-range time', () => {
    for (const ms of [Number.NaN, 8.64e15 + 1, -8.64e15 - 1, Infinity, -Infinity]) {
      expect(() => new Date(ms).toISOString()).toThrow(RangeError);
      expect(() => isoTime(ms)).toThrow(RangeError);
    }
  });
});
