// Entities of a message: e-mail addresses, URLs, money, dates, numbers and names.
import { describe, expect, it } from 'vitest';
import { detectEntities } from './entities.js';

describe('detectEntities', () => {
  const now = new Date('2026-03-02T12:00:00Z');

  it('finds e-mail addresses, URLs, money, dates, numbers and names without overlaps', () => {
    const entities = detectEntities(
      'Pay €1,250.50 to bob@example.org by 5 March 2026, see https://pay.example.com/x, 3 invoices for Microsoft in London',
      now,
    );
    const found = Object.fromEntries(entities.map((entity) => [entity.text, entity]));
    expect(found['€1,250.50']).toMatchObject({ type: 'money', value: '1250.5 EUR' });
    expect(found['bob@example.org']?.type).toBe('email');
    expect(found['https://pay.example.com/x']?.type).toBe('url');
    expect(found['5 March 2026']?.type).toBe('date');
    expect(String(found['5 March 2026']?.value)).toMatch(/^2026-03-05/);
    expect(found['3']).toMatchObject({ type: 'number', value: 3 });
    expect(found.London?.type).toBe('place');
    for (let index = 1; index < entities.length; index += 1) {
      expect(entities[index]!.start).toBeGreaterThanOrEqual(entities[index - 1]!.end);
    }
  });

  it('skips the tagger when asked', () => {
    const entities = detectEntities('Meet Barack Obama in Paris', now, { names: false });
    expect(entities).toEqual([]);
  });
});
