import { describe, expect, it } from 'vitest';
import { realArrayText } from './postgres-knowledge.js';

describe('realArrayText', () => {
  it('writes every float32 so that it reads back exactly', () => {
    // A fixed-seed spread over the whole float32 range: every exponent, both signs, plus the ends.
    let seed = 20_261_129;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const values = Array.from({ length: 20_000 }, () => {
      const bits = new Uint32Array([Math.floor(random() * 2 ** 32)]);
      return new Float32Array(bits.buffer)[0]!;
    }).filter((value) => Number.isFinite(value));
    values.push(0, 1, -1, 3.4028234663852886e38, -3.4028234663852886e38, 1.401298464324817e-45);
    const vector = Float32Array.from(values);
    const text = realArrayText(vector);
    expect(text.startsWith('{') && text.endsWith('}')).toBe(true);
    const read = text
      .slice(1, -1)
      .split(',')
      .map((part) => Math.fround(Number(part)));
    expect(read).toEqual(Array.from(vector));
    expect(realArrayText(new Float32Array([0.5, -0.25]))).toBe('{0.500000000,-0.250000000}');
  });
});
