import { describe, expect, it } from 'vitest';
import { displayFormOf, generateApiKey, isWellFormedApiKey } from './api-key-format.js';

describe('API key format', () => {
  it('generates sk- keys of 48 base62 characters that pass their own checksum', () => {
    for (let index = 0; index < 200; index += 1) {
      const key = generateApiKey();
      expect(key).toMatch(/^sk-[A-Za-z0-9]{48}$/);
      expect(isWellFormedApiKey(key)).toBe(true);
    }
  });

  it('refuses a key with any single character changed', () => {
    const key = generateApiKey();
    for (let position = 3; position < key.length; position += 1) {
      const original = key[position]!;
      const replacement = original === 'a' ? 'b' : 'a';
      const altered = `${key.slice(0, position)}${replacement}${key.slice(position + 1)}`;
      expect(isWellFormedApiKey(altered), `position ${position}`).toBe(false);
    }
  });

  it('refuses wrong shapes', () => {
    expect(isWellFormedApiKey('')).toBe(false);
    expect(isWellFormedApiKey('sk-')).toBe(false);
    expect(isWellFormedApiKey('pk-' + generateApiKey().slice(3))).toBe(false);
    expect(isWellFormedApiKey(generateApiKey() + ' ')).toBe(false);
    expect(isWellFormedApiKey(generateApiKey().slice(0, 40))).toBe(false);
  });

  it('shows only sk-… and the last four characters', () => {
    const key = generateApiKey();
    expect(displayFormOf(key)).toBe(`sk-…${key.slice(-4)}`);
  });
});
